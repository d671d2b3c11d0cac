# SPDX-License-Identifier: MIT
"""Confinement of the mount, as an attacker tries it (issue 23): a directory moved out of SOURCE
while a reader holds it, a symbolic link that leads another user through a directory the
daemon may search but that user may not, and the daemon's own mount bind-mounted inside SOURCE.

Each runs in every cache mode (and the moved directory with and without inode handles). The
oracle is the source tree: a secret written outside SOURCE must never come back, and the errors
are the ones docs/SPEC.md §4 names (ESTALE for a directory that left SOURCE, ELOOP for the mount
itself, permission_denied for a link target the reader could not open)."""
import concurrent.futures
import errno
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import CACHE_MODES
from mount_util import mounted

HANG_GUARD = 30  # seconds one call may take before the test calls the daemon hung
SECRET = b"SECRET-outside-the-source-7f3a"
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=8)


def guarded(fn, *args, **kwargs):
    """Runs fn with a hang guard; returns its value or raises its exception."""
    return _POOL.submit(fn, *args, **kwargs).result(timeout=HANG_GUARD)


def world_searchable_dir() -> pathlib.Path:
    """A fresh directory that uid 65534 can reach: under TMPDIR (this run's own, which CI cleans
    up), made searchable by others."""
    top = pathlib.Path(tempfile.gettempdir())
    if top.stat().st_mode & 0o001 == 0:
        top.chmod(top.stat().st_mode | 0o001)
    base = pathlib.Path(tempfile.mkdtemp(prefix="toolfs-confine-", dir=top))
    base.chmod(0o755)
    return base


@pytest.fixture
def base():
    path = world_searchable_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def toolfs_bin(build_dir) -> pathlib.Path:
    return build_dir / "fs" / "toolfs"


def read_all(path, dir_fd=None) -> bytes:
    fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- 1. a directory moved out of SOURCE is gone ---------------------------------------------

MOVED_MODES = [(mode, handles) for mode in CACHE_MODES for handles in ("yes", "no")]


@pytest.mark.parametrize("mode,handles", MOVED_MODES)
def test_directory_moved_out_is_stale(base, toolfs_bin, mode, handles):
    src, outside = base / "src", base / "outside"
    (src / "d" / "sub").mkdir(parents=True)
    outside.mkdir()
    (src / "d" / "in.txt").write_bytes(b"inside\n")
    (outside / "secret.txt").write_bytes(SECRET + b"\n")
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode},inode_handles={handles}") as m:
        held = os.open(m.path / "d", os.O_RDONLY | os.O_DIRECTORY)
        held_sub = os.open(m.path / "d" / "sub", os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert guarded(read_all, "in.txt", dir_fd=held) == b"inside\n"
            assert "in.txt" in guarded(os.listdir, held)
            os.rename(src / "d", outside / "d")
            (outside / "d" / "up").symlink_to("../secret.txt")
            (outside / "d" / "new.txt").write_bytes(SECRET + b"\n")
            time.sleep(1.2)  # past the moved mark's grace of cache=relaxed and watch
            attempts = {
                "sibling of a link": lambda: guarded(read_all, "up.tool.json", dir_fd=held),
                "new file": lambda: guarded(read_all, "new.txt", dir_fd=held),
                "new file's sibling": lambda: guarded(read_all, "new.txt.tool.json",
                                                      dir_fd=held),
                "listing": lambda: guarded(os.listdir, held),
                "link target": lambda: guarded(os.readlink, "up", dir_fd=held),
                "stat of a new name": lambda: guarded(os.stat, "new.txt", dir_fd=held),
                "subdirectory held": lambda: guarded(os.listdir, held_sub),
                "parent of the subdirectory": lambda: guarded(read_all, "../new.txt",
                                                              dir_fd=held_sub),
            }
            for what, attempt in attempts.items():
                with pytest.raises(OSError) as err:
                    got = attempt()
                    print(f"{what} served: {got!r}")
                assert err.value.errno == errno.ESTALE, f"{what}: {err.value}"
            # Moved back, it is served again.
            os.rename(outside / "d", src / "d")
            (src / "d" / "up").unlink()
            assert guarded(read_all, m.path / "d" / "in.txt") == b"inside\n"
        finally:
            os.close(held)
            os.close(held_sub)
        assert os.path.exists(f"/proc/{m.pid}"), "the daemon died"


@pytest.mark.parametrize("mode", CACHE_MODES)
def test_directory_renamed_inside_is_still_served(base, toolfs_bin, mode):
    """A held directory renamed within SOURCE is still beneath it: no ESTALE for good."""
    src = base / "src"
    (src / "a" / "d").mkdir(parents=True)
    (src / "a" / "d" / "f.txt").write_bytes(b"kept\n")
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode}") as m:
        held = os.open(m.path / "a" / "d", os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.rename(src / "a" / "d", src / "d2")
            time.sleep(1.2)
            assert guarded(read_all, "f.txt", dir_fd=held) == b"kept\n"
            doc = json.loads(guarded(read_all, "f.txt.tool.json", dir_fd=held))
            assert doc["success"] is True and doc["content"] == "     1\tkept\n"
        finally:
            os.close(held)


# -- 2. under allow_other, the reader's own rights ------------------------------------------

def as_nobody(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([*NOBODY, *argv], capture_output=True, timeout=HANG_GUARD)


@pytest.mark.parametrize("mode", CACHE_MODES)
def test_link_does_not_pass_a_directory_the_reader_cannot_search(base, toolfs_bin, mode):
    src = base / "src"
    (src / "priv").mkdir(parents=True)
    (src / "pub").mkdir()
    (src / "open").mkdir()
    (src / "priv" / "secret.txt").write_bytes(SECRET + b"\n")
    (src / "priv" / "secret.txt").chmod(0o644)
    (src / "priv").chmod(0o700)
    (src / "open" / "f.txt").write_bytes(b"everyone\n")
    (src / "pub" / "link").symlink_to("../priv/secret.txt")
    (src / "pub" / "abs").symlink_to(src / "priv" / "secret.txt")
    (src / "pub" / "ok").symlink_to("../open/f.txt")
    src.chmod(0o755)
    mnt = base / "mnt"
    with mounted(toolfs_bin, src, mnt, "-o", f"cache={mode},allow_other") as m:
        # root reads first, so that the documents are in the daemon's cache
        for name in ("link", "abs", "ok"):
            assert SECRET not in guarded(read_all, mnt / "pub" / f"{name}.tool.json") or \
                name != "ok"
        denied = as_nobody("cat", str(mnt / "priv" / "secret.txt.tool.json"))
        assert denied.returncode != 0 and b"Permission denied" in denied.stderr
        for name in ("link", "abs"):
            got = as_nobody("cat", str(mnt / "pub" / f"{name}.tool.json"))
            assert SECRET not in got.stdout, f"{name}: the secret was served to uid 65534"
            assert got.returncode == 0, got.stderr
            doc = json.loads(got.stdout)
            assert doc["success"] is False and doc["errorCode"] == "permission_denied", doc
            assert SECRET not in as_nobody("cat", str(mnt / "pub" / name)).stdout
        ok = as_nobody("cat", str(mnt / "pub" / "ok.tool.json"))
        assert ok.returncode == 0 and json.loads(ok.stdout)["content"] == "     1\teveryone\n"
        # and root still reads what root may read
        doc = json.loads(guarded(read_all, mnt / "pub" / "link.tool.json"))
        assert doc["success"] is True and SECRET.decode() in doc["content"]


# -- 3. the mount inside its own SOURCE -----------------------------------------------------

@pytest.mark.parametrize("mode", CACHE_MODES)
def test_own_mount_inside_source_does_not_hang(base, toolfs_bin, mode):
    src = base / "src"
    (src / "sub" / "loop").mkdir(parents=True)
    (src / "sub" / "f.txt").write_bytes(b"f\n")
    (src / "sub" / "to_loop").symlink_to("loop/sub/f.txt")
    mnt = base / "mnt"
    with mounted(toolfs_bin, src, mnt, "-o", f"cache={mode}") as m:
        if subprocess.run(["mount", "--bind", str(mnt), str(src / "sub" / "loop")],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot bind-mount here (needs CAP_SYS_ADMIN)")
        try:
            deep = mnt.joinpath(*(["sub", "loop"] * 6), "sub", "f.txt.tool.json")
            with pytest.raises(OSError) as err:
                guarded(read_all, deep)
            assert err.value.errno == errno.ELOOP, err.value
            with pytest.raises(OSError) as err:
                guarded(os.stat, mnt / "sub" / "loop")
            assert err.value.errno == errno.ELOOP, err.value
            doc = json.loads(guarded(read_all, mnt / "sub" / "to_loop.tool.json"))
            assert doc["success"] is False and doc["errorCode"] == "not_regular", doc
            # every later request is still answered
            assert guarded(read_all, mnt / "sub" / "f.txt") == b"f\n"
            assert "f.txt.tool.json" in guarded(os.listdir, mnt / "sub")
        finally:
            subprocess.run(["umount", "-l", str(src / "sub" / "loop")], capture_output=True)
        assert os.path.exists(f"/proc/{m.pid}"), "the daemon died"


# -- races: links and directories swapped while the daemon resolves them ----------------------

@pytest.mark.parametrize("mode", CACHE_MODES)
def test_swapped_links_and_directories_never_leak(base, toolfs_bin, mode):
    """A thread swaps a link between a target inside and one outside, and a directory between
    SOURCE and outside, while reads go on: the secret never comes back, every answer is a whole
    result or an errno, and the daemon keeps answering."""
    import threading
    src, outside = base / "src", base / "outside"
    (src / "d").mkdir(parents=True)
    outside.mkdir()
    (src / "inside.txt").write_bytes(b"inside\n")
    (outside / "secret.txt").write_bytes(SECRET + b"\n")
    (src / "d" / "up").symlink_to("../../outside/secret.txt")
    (src / "link").symlink_to("inside.txt")
    stop = threading.Event()

    def swapper():
        i = 0
        while not stop.is_set():
            i += 1
            tmp = src / f".swap{i}"
            tmp.symlink_to("inside.txt" if i % 2 else str(outside / "secret.txt"))
            os.rename(tmp, src / "link")
            try:
                os.rename(src / "d", outside / "d")
                os.rename(outside / "d", src / "d")
            except OSError:
                pass

    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode}") as m:
        held = os.open(m.path / "d", os.O_RDONLY | os.O_DIRECTORY)
        thread = threading.Thread(target=swapper)
        thread.start()
        served = 0
        try:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                for attempt in (lambda: read_all(m.path / "link.tool.json"),
                                lambda: read_all("up.tool.json", dir_fd=held),
                                lambda: read_all(m.path / "d" / "up.tool.json")):
                    try:
                        data = guarded(attempt)
                    except concurrent.futures.TimeoutError:
                        raise AssertionError("the daemon hung")
                    except OSError:
                        continue
                    assert SECRET not in data, data
                    json.loads(data)
                    served += 1
        finally:
            stop.set()
            thread.join()
            os.close(held)
        assert served > 0
        assert guarded(os.listdir, m.path)


def test_daemon_that_cannot_take_rights_follows_links_for_its_own_user_only(base, toolfs_bin):
    """Without CAP_SETUID/CAP_SETGID the daemon cannot check another user's way through a link:
    for uid 65534 a link's sibling is permission_denied, a file's sibling still reads; for the
    daemon's own user (root here) the link is followed."""
    src = base / "src"
    (src / "open").mkdir(parents=True)
    (src / "open" / "f.txt").write_bytes(b"everyone\n")
    (src / "open" / "ok").symlink_to("f.txt")
    wrapper = ["setpriv", "--bounding-set=-setuid,-setgid"]
    with mounted(toolfs_bin, src, base / "mnt", "-o", "allow_other", wrapper=wrapper) as m:
        status = pathlib.Path(f"/proc/{m.pid}/status").read_text()
        eff = int(next(ln for ln in status.splitlines() if ln.startswith("CapEff:")).split()[1],
                  16)
        assert not eff & (1 << 6) and not eff & (1 << 7), "the daemon kept CAP_SETGID/SETUID"
        link = as_nobody("cat", str(m.path / "open" / "ok.tool.json"))
        assert link.returncode == 0, link.stderr
        doc = json.loads(link.stdout)
        assert doc["success"] is False and doc["errorCode"] == "permission_denied", doc
        plain = as_nobody("cat", str(m.path / "open" / "f.txt.tool.json"))
        assert json.loads(plain.stdout)["content"] == "     1\teveryone\n"
        doc = json.loads(guarded(read_all, m.path / "open" / "ok.tool.json"))
        assert doc["success"] is True and doc["content"] == "     1\teveryone\n"
