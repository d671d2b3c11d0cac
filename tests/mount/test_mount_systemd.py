# SPDX-License-Identifier: MIT
"""The systemd units of systemd/: `systemd-analyze verify` accepts them (system and user), and
their ExecStart/ExecStop, expanded the way systemd expands them for an escaped instance, mount
the workspace where the documented mountpoint rule says and unmount it. The system unit's
exposure (`systemd-analyze security --offline=true`) is at most SCORE_MAX, and its ExecStart and
ExecStop still work under the restrictions it declares that can be applied without a running
systemd (namespaces, capability bounding set, no_new_privs, the system call filter, umask).

Oracles: systemd-analyze, systemd-escape, setpriv, /proc/self/mounts, /proc/PID/status."""
import ctypes
import errno
import json
import os
import pathlib
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import wave

import pytest
from PIL import Image

from fixtures import gen_pdfs
from mount_util import cleanup, daemon_pid, is_mounted, Mount, MOUNT_TIMEOUT

# The system unit's exposure as systemd-analyze rates it (README: "Hardening"), at most this.
SCORE_MAX = 6.0

REPO = pathlib.Path(__file__).resolve().parents[2]
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


def expand_exec(line: str, src, runtime, instance) -> list:
    """An Exec line's words with %f, %t, %i and an empty $TOOLFS_OPTIONS expanded as systemd
    does."""
    words = []
    for word in shlex.split(line):
        if word == "$TOOLFS_OPTIONS":
            continue  # empty by default: zero words
        words.append(word.replace("%f", str(src)).replace("%t", str(runtime))
                     .replace("%i", instance))
    return words


def service_settings(text: str) -> dict:
    """Key -> list of values of the [Service] section, in order."""
    settings, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def exposure(text: str, tmp_path: pathlib.Path) -> tuple:
    """(overall exposure, full report) of the configured system unit text for an instance, from
    `systemd-analyze security --offline=true`."""
    units = tmp_path / "units"
    units.mkdir()
    (units / "toolfs@.service").write_text(text)
    instance = units / ("toolfs@" + escape_path(tmp_path / "proj") + ".service")
    os.symlink("toolfs@.service", instance)
    done = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                           str(instance)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, SYSTEMD_LOG_COLOR="0", SYSTEMD_COLORS="0"))
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert found, done.stdout + done.stderr
    return float(found[1]), done.stdout


def test_system_unit_exposure(build_dir, tmp_path):
    need_systemd_tools()
    score, report = exposure(render(UNITS["system"], build_dir), tmp_path)
    print(f"system unit exposure: {score}")
    assert score <= SCORE_MAX, report


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
        return expand_exec(line, src, runtime, instance)

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


# -- the system unit run as systemd would run it, as far as that works without systemd ----------

SECCOMP_EXEC = REPO / "tests" / "seccomp_exec.py"
PR_SET_CHILD_SUBREAPER = 36


def truth(settings: dict, key: str) -> bool:
    return settings.get(key, ["no"])[-1].lower() in ("yes", "true", "on", "1")


def syscall_groups() -> dict:
    """@group -> its members (names and @groups), from `systemd-analyze syscall-filter`."""
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], capture_output=True,
                         text=True, check=True).stdout
    table, group = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            group = table.setdefault(line.strip(), [])
        elif line.startswith("    ") and not line.lstrip().startswith("#") and group is not None:
            group.append(line.strip())
    return table


def expand_syscalls(names, groups) -> set:
    found = set()
    for name in names:
        found |= expand_syscalls(groups[name], groups) if name.startswith("@") else {name}
    return found


def capability_numbers() -> dict:
    text = pathlib.Path("/usr/include/linux/capability.h").read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define (CAP_\w+)\s+(\d+)\n", text)}


def confinement(settings: dict) -> list:
    """The command prefix that applies the unit's restrictions systemd would apply and that need
    no service manager: PrivateNetwork=/ProtectHostname= (unshare), CapabilityBoundingSet= and
    NoNewPrivileges= (setpriv), SystemCallFilter=, SystemCallArchitectures=native,
    RestrictAddressFamilies= and RestrictNamespaces= (seccomp_exec.py). Not applied here:
    cgroup settings (MemoryMax=, DevicePolicy=, IPAddressDeny=) and ProtectClock='s device rule."""
    prefix = []
    spaces = (["--net"] if truth(settings, "PrivateNetwork") else []) + \
        (["--uts"] if truth(settings, "ProtectHostname") else [])
    if spaces:
        prefix += ["unshare", *spaces, "--"]
    setpriv = ["--no-new-privs"] if truth(settings, "NoNewPrivileges") else []
    if "CapabilityBoundingSet" in settings:
        caps = " ".join(settings["CapabilityBoundingSet"]).split()
        setpriv += ["--bounding-set",
                    ",".join(["-all"] + ["+" + c.lower().removeprefix("cap_") for c in caps])]
    if setpriv:
        prefix += ["setpriv", *setpriv, "--"]
    seccomp = []
    if "SystemCallFilter" in settings:
        names = " ".join(settings["SystemCallFilter"]).split()
        assert not any(n.startswith("~") for n in names), "an allow list is expected"
        assert settings.get("SystemCallArchitectures") == ["native"]
        for name in sorted(expand_syscalls(names, syscall_groups())):
            seccomp += ["--allow", name]
    for family in " ".join(settings.get("RestrictAddressFamilies", [])).split():
        seccomp += ["--family", family]
    if truth(settings, "RestrictNamespaces"):
        seccomp.append("--restrict-namespaces")
    if seccomp:
        prefix += [sys.executable, str(SECCOMP_EXEC), *seccomp, "--"]
    return prefix


def as_nobody(*cmd) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                           "--", *map(str, cmd)], capture_output=True, text=True, timeout=60)


def reap(pid: int, timeout: float = MOUNT_TIMEOUT):
    """The exit status of pid, a child of this process once it became the subreaper; None when
    it is still running after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    return None


def workers_left(build_dir: pathlib.Path, parent: int, wait_s: float = 3.0) -> list:
    """The reader worker processes of this build whose parent is parent, once they had wait_s
    to end: [(pid, state), ...]."""
    exes = {str(build_dir / "readers" / "toolfs-reader-worker")}
    deadline = time.monotonic() + wait_s
    while True:
        left = []
        for entry in pathlib.Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and os.readlink(entry / "exe") in exes:
                    stat = (entry / "stat").read_text()
                    state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
                    if int(ppid) == parent:
                        left.append((int(entry.name), state))
            except (OSError, ValueError):
                continue
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.mark.skipif(os.geteuid() != 0, reason="the system unit runs as root")
@pytest.mark.skipif(platform.machine() != "x86_64", reason="seccomp_exec.py knows x86-64 only")
@pytest.mark.parametrize("home", [0o755, 0o700], ids=["open-home", "closed-home"])
def test_system_unit_runs_confined(build_dir, home):
    """ExecStart under the unit's own restrictions mounts with allow_other; uid 65534 reads what
    the modes let it read and nothing else; ExecStop unmounts and the daemon exits 0. Issue 36,
    item 6: a workspace under a 0700 home (root's here) is readable through the mount by no one
    the home keeps out (uid 65534 gets EACCES at the mount's root), and the daemon says so in
    its log (ExecStart's stderr, the journal)."""
    need_systemd_tools()
    text = render(UNITS["system"], build_dir)
    settings = service_settings(text)
    # Reachable by uid 65534, as /run and a workspace are (but for the closed home).
    base = pathlib.Path(tempfile.mkdtemp(prefix="toolfs-unit-", dir="/tmp"))
    base.chmod(0o755)
    (base / "home").mkdir()
    (base / "home").chmod(home)
    src = base / "home" / "proj"
    (src / "priv").mkdir(parents=True)
    src.chmod(0o755)
    (src / "priv").chmod(0o700)
    (src / "priv" / "inner.txt").write_text("behind a 0700 directory\n")
    (src / "pub.txt").write_text("anyone may read this\n")
    (src / "pub.txt").chmod(0o644)
    other = src / "other.txt"
    other.write_text("only uid 1234 may read this\n")
    other.chmod(0o600)
    os.chown(other, 1234, 1234)
    # the optional readers' modules (poppler, libvips) run under the filter too
    gen_pdfs.text_pdf(src / "four.pdf", 4)
    Image.effect_noise((3000, 2400), 40).convert("RGB").save(src / "big.png")
    with wave.open(str(src / "tone.wav"), "wb") as tone:  # FFmpeg in the reader worker too
        tone.setnchannels(1)
        tone.setsampwidth(2)
        tone.setframerate(8000)
        tone.writeframes(b"\x00\x10\x00\xf0" * 4000)
    runtime = base / "run"
    instance = escape_path(src)
    mnt = runtime / "toolfs" / instance
    mnt.mkdir(parents=True)  # RuntimeDirectory=toolfs/%i
    # systemd gives the innermost directory RuntimeDirectoryMode, its parents 0755
    for path in (runtime, runtime / "toolfs"):
        path.chmod(0o755)
    mnt.chmod(int(settings["RuntimeDirectoryMode"][-1], 8))
    assert settings["RuntimeDirectoryMode"][-1] == "0700", "the mount point, unmounted: root's"
    prefix = confinement(settings)
    umask = int(settings.get("UMask", ["0022"])[-1], 8)
    libc = ctypes.CDLL(None, use_errno=True)
    # systemd is the parent of a forking service's daemon; here this process takes its place, so
    # that the daemon's exit status can be read.
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    mount = Mount(mnt, None)
    try:
        # A sanitized daemon (CI's ASan run) does not check for leaks here: LeakSanitizer stops
        # the world with ptrace, which the unit's SystemCallFilter denies by design.
        asan = os.environ.get("ASAN_OPTIONS", "")
        start = subprocess.run(prefix + expand_exec(directive(text, "ExecStart"), src, runtime,
                                                    instance),
                               capture_output=True, timeout=MOUNT_TIMEOUT,
                               env=dict(os.environ, ASAN_OPTIONS=asan + ":detect_leaks=0"),
                               preexec_fn=lambda: os.umask(umask))
        mount.pid = daemon_pid(mnt)
        assert start.returncode == 0, start.stderr.decode()
        assert is_mounted(mnt), "Type=forking: mounted when ExecStart returns"
        status = dict(line.split(":", 1) for line in
                      pathlib.Path(f"/proc/{mount.pid}/status").read_text().splitlines())
        if truth(settings, "NoNewPrivileges"):
            assert status["NoNewPrivs"].strip() == "1"
        if "SystemCallFilter" in settings:
            assert status["Seccomp"].strip() == "2"
        if "CapabilityBoundingSet" in settings:
            numbers = capability_numbers()
            want = sum(1 << numbers[c] for c in " ".join(settings["CapabilityBoundingSet"]).split())
            assert int(status["CapBnd"], 16) == want
            assert int(status["CapEff"], 16) == want

        warning = "does not let every user reach source"
        pub = as_nobody("cat", mnt / "pub.txt.tool.json")
        if home == 0o755:
            assert pub.returncode == 0, pub.stderr
            assert '"success":true' in pub.stdout and "anyone may read this" in pub.stdout
            assert warning not in start.stderr.decode()
            denied_paths = ()
        else:
            assert pub.returncode != 0 and os.strerror(errno.EACCES) in pub.stderr, pub.stdout
            assert f"{base / 'home'} {warning} {src}" in start.stderr.decode(), start.stderr
            assert (mnt.stat().st_mode & 0o777) == 0o700, oct(mnt.stat().st_mode)
            denied_paths = (mnt / "pub.txt", mnt)
        for denied in denied_paths + (mnt / "priv" / "inner.txt.tool.json",
                                      mnt / "other.txt.tool.json", mnt / "priv"):
            done = as_nobody("cat", denied)
            assert done.returncode != 0 and os.strerror(errno.EACCES) in done.stderr, \
                (denied, done.stdout, done.stderr)
        # root (this process) reads what only uid 1234 and a DAC override may: the daemon kept
        # the capabilities reading needs
        assert "only uid 1234 may read this" in (mnt / "other.txt.tool.json").read_text()
        assert "behind a 0700 directory" in (mnt / "priv" / "inner.txt.tool.json").read_text()
        # the workers confine themselves under the unit's filter (seccomp, landlock_*), and the
        # daemon ends their fork servers, which run as nobody, without CAP_KILL (ExecStop below)
        for name in ("four.pdf", "big.png", "tone.wav"):
            doc = json.loads((mnt / (name + ".tool.json")).read_text())
            assert doc["success"] is True, doc
        assert json.loads((mnt / "big.png.tool.json").read_text())["metadata"]["resized"]

        stop = subprocess.run(prefix + expand_exec(directive(text, "ExecStop"), src, runtime,
                                                   instance),
                              capture_output=True, timeout=MOUNT_TIMEOUT)
        assert stop.returncode == 0, stop.stderr.decode()
        assert not is_mounted(mnt)
        assert reap(mount.pid) == 0, "the daemon exits 0 after ExecStop"
        mount.pid = None
        # nor is a fork server left (an orphan's parent would be this process, the subreaper)
        assert workers_left(build_dir, os.getpid()) == []
    finally:
        cleanup(mount)
        if mount.pid is not None:
            reap(mount.pid, timeout=1)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        if not is_mounted(mnt):
            shutil.rmtree(base, ignore_errors=True)
