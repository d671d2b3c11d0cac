"""The systemd units of systemd/: `systemd-analyze verify` accepts them (system and user), and
their ExecStart/ExecStop, expanded the way systemd expands them for an escaped instance, mount
the workspace where the documented mountpoint rule says and unmount it.

Oracles: systemd-analyze, systemd-escape, /proc/self/mounts."""
import os
import pathlib
import shlex
import shutil
import subprocess

import pytest

from mount_util import cleanup, daemon_pid, is_mounted, Mount

REPO = pathlib.Path(__file__).resolve().parent.parent
UNITS = {"system": REPO / "systemd" / "toolfs@.service.in",
         "user": REPO / "systemd" / "user" / "toolfs@.service.in"}


def render(unit_in: pathlib.Path, build_dir: pathlib.Path) -> str:
    """The unit as meson's configure_file writes it, pointing at the built daemon."""
    return unit_in.read_text().replace("@BINDIR@", str(build_dir / "fs")).replace(
        "@FUSERMOUNT@", shutil.which("fusermount3") or "/usr/bin/fusermount3")


def need_systemd_tools():
    for tool in ("systemd-analyze", "systemd-escape"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (Debian package systemd)")


def escape_path(path) -> str:
    return subprocess.run(["systemd-escape", "--path", str(path)], capture_output=True,
                          check=True, text=True).stdout.strip()


def directive(text: str, key: str) -> str:
    lines = [l.split("=", 1)[1] for l in text.splitlines() if l.startswith(key + "=")]
    assert len(lines) == 1, key
    return lines[0]


@pytest.mark.parametrize("kind", ["system", "user"])
def test_systemd_analyze_verify(kind, build_dir, tmp_path):
    need_systemd_tools()
    units = tmp_path / "units"
    units.mkdir()
    (units / "toolfs@.service").write_text(render(UNITS[kind], build_dir))
    instance = "toolfs@" + escape_path(tmp_path / "proj") + ".service"
    os.symlink("toolfs@.service", units / instance)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path), SYSTEMD_LOG_COLOR="0")
    # --man=no: Documentation= names toolfs(1), which only an install provides (.ci/package
    # verifies the installed units with their manual pages).
    args = ["systemd-analyze", "--man=no"] + (["--user"] if kind == "user" else [])
    probe = subprocess.run(args + ["verify", "/dev/null"], capture_output=True, env=env)
    if b"Failed to initialize manager" in probe.stderr:
        pytest.skip("systemd-analyze cannot start a manager here: " + probe.stderr.decode())
    done = subprocess.run(args + ["verify", str(units / instance), str(units / "toolfs@.service")],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()


def test_verify_catches_a_broken_unit(build_dir, tmp_path):
    need_systemd_tools()
    broken = render(UNITS["system"], build_dir).replace(str(build_dir / "fs"), "/nonexistent")
    (tmp_path / "toolfs@.service").write_text(broken)
    os.symlink("toolfs@.service", tmp_path / "toolfs@x.service")
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "toolfs@x.service")],
                          capture_output=True)
    assert done.returncode != 0


@pytest.mark.parametrize("kind", ["system", "user"])
def test_exec_lines_mount_where_documented(kind, build_dir, tmp_path):
    """ExecStart/ExecStop with %f, %i, %t and $TOOLFS_OPTIONS expanded as systemd does."""
    need_systemd_tools()
    src = tmp_path / "my proj"  # a space: escaping must round-trip
    src.mkdir()
    (src / "a.txt").write_text("hi\n")
    runtime = tmp_path / "run"
    instance = escape_path(src)
    unescaped = subprocess.run(["systemd-escape", "--unescape", "--path", instance],
                               capture_output=True, check=True, text=True).stdout.strip()
    assert unescaped == str(src)
    text = render(UNITS[kind], build_dir)
    mnt = runtime / "toolfs" / instance
    mnt.mkdir(parents=True)  # RuntimeDirectory=toolfs/%i

    def expand(line: str) -> list:
        words = []
        for word in shlex.split(line):
            if word == "$TOOLFS_OPTIONS":
                continue  # empty by default: zero words
            words.append(word.replace("%f", str(src)).replace("%t", str(runtime))
                         .replace("%i", instance))
        return words

    assert directive(text, "RuntimeDirectory") == "toolfs/%i"
    start = subprocess.run(expand(directive(text, "ExecStart")), capture_output=True, timeout=60)
    mount = Mount(mnt, daemon_pid(mnt))
    try:
        assert start.returncode == 0, start.stderr
        assert is_mounted(mnt), "Type=forking: mounted when ExecStart returns"
        assert sorted(os.listdir(mnt)) == ["a.txt", "a.txt.tool.json"]
        stop = subprocess.run(expand(directive(text, "ExecStop")), capture_output=True, timeout=60)
        assert stop.returncode == 0, stop.stderr
        assert not is_mounted(mnt)
    finally:
        cleanup(mount)
