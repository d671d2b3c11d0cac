# SPDX-License-Identifier: MIT
"""Mounting toolfs in tests, after libfuse's test/util.py: start the daemon, wait for the mount,
and always unmount and reap it, even when the test failed."""
import contextlib
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MOUNT_TIMEOUT = 30  # seconds; a hang guard, never a measurement
# How long a plain entry may take to show a change in cache=relaxed before a test calls it stale:
# the invalidation delay is far below (README), this only bounds a loaded machine.
PLAIN_SETTLE = 2.0


def _unescape(field: str) -> str:
    """Undoes /proc/mounts' octal escapes (\\040 for a space ...)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts() -> dict:
    """Mount point -> (source, type, options) for every mount of this namespace."""
    table = {}
    with open("/proc/self/mounts") as f:
        for line in f:
            source, point, fstype, options = line.split()[:4]
            table[_unescape(point)] = (_unescape(source), fstype, options.split(","))
    return table


def is_mounted(mnt) -> bool:
    """True when a toolfs is mounted on mnt."""
    entry = mounts().get(os.path.realpath(mnt))
    return entry is not None and entry[1] == "fuse.toolfs"


def wait_for_mount(mnt, proc: subprocess.Popen = None, timeout: float = MOUNT_TIMEOUT) -> None:
    """Waits until toolfs is mounted on mnt; fails early when proc (the daemon) exits first."""
    deadline = time.monotonic() + timeout
    while not is_mounted(mnt):
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"toolfs exited with {proc.returncode} before mounting: {err}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"toolfs did not mount {mnt}")
        time.sleep(0.02)


def umount(mnt) -> None:
    """Unmounts mnt with fusermount3 -u, lazily (-z) when it is busy."""
    if not is_mounted(mnt):
        return
    if subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True).returncode != 0:
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)


def daemon_pid(mnt):
    """The pid of the toolfs process serving mnt (background mode detaches it), or None."""
    want = os.fsencode(os.path.realpath(mnt))
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = pathlib.Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"toolfs" and \
                any(os.path.realpath(a) == want for a in argv[1:] if a):
            return int(entry)
    return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_exit(pid: int, timeout: float = MOUNT_TIMEOUT) -> bool:
    """Waits for a process that is not our child to end; True when it did."""
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class Mount:
    """A live mount: its mount point, the daemon's pid, the Popen in foreground mode, and the
    directory where a sanitized daemon writes its reports."""

    def __init__(self, path: pathlib.Path, pid, proc=None, report_dir=None):
        self.path = path
        self.pid = pid
        self.proc = proc
        self.report_dir = report_dir


def _sanitizer_env(report_dir: str) -> dict:
    """The environment for the daemon: ASan/UBSan/LSan reports go to files in report_dir (a
    background daemon's stderr is /dev/null), on top of the caller's ASAN_OPTIONS etc.
    Harmless for an unsanitized build."""
    env = dict(os.environ)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        opts = env.get(var, "")
        env[var] = (opts + ":" if opts else "") + f"log_path={report_dir}/{var[:-8].lower()}"
    return env


def sanitizer_reports(mount: Mount) -> str:
    """The text of every sanitizer report the daemon wrote ("" when none)."""
    if mount.report_dir is None or not os.path.isdir(mount.report_dir):
        return ""
    texts = []
    for name in sorted(os.listdir(mount.report_dir)):
        with open(os.path.join(mount.report_dir, name), errors="replace") as f:
            texts.append(f"--- {name}\n{f.read()}")
    return "\n".join(texts)


def cleanup(mount: Mount) -> None:
    """Unmounts and reaps the daemon; kills it (by its pid) when it does not exit by itself."""
    umount(mount.path)
    if mount.proc is not None:
        try:
            mount.proc.wait(timeout=MOUNT_TIMEOUT)
        except subprocess.TimeoutExpired:
            mount.proc.kill()
            mount.proc.wait()
    elif mount.pid is not None and not wait_exit(mount.pid):
        os.kill(mount.pid, signal.SIGKILL)
        wait_exit(mount.pid)
    if is_mounted(mount.path):
        subprocess.run(["fusermount3", "-u", "-z", str(mount.path)], capture_output=True)


@contextlib.contextmanager
def mounted(binary, source, mnt, *options, foreground: bool = False, wrapper=()):
    """Mounts source on mnt with `toolfs [options] source mnt` (background mode, or -f), run
    through the command prefix wrapper (e.g. prlimit ...) when given, waits for the mount, yields
    a Mount, and always unmounts."""
    mnt = pathlib.Path(mnt)
    mnt.mkdir(parents=True, exist_ok=True)
    flags = ["-f"] if foreground else []
    cmd = [*wrapper, str(binary), *flags, *map(str, options), str(source), str(mnt)]
    report_dir = tempfile.mkdtemp(prefix="toolfs-sanitizer-")
    os.chmod(report_dir, 0o1777)  # a daemon run as another user writes there too
    env = _sanitizer_env(report_dir)
    if foreground:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        mount = Mount(mnt, proc.pid, proc, report_dir)
        try:
            wait_for_mount(mnt, proc)
        except BaseException:
            cleanup(mount)
            raise
    else:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                              timeout=MOUNT_TIMEOUT)
        mount = Mount(mnt, daemon_pid(mnt), report_dir=report_dir)
        if done.returncode != 0:
            cleanup(mount)
            raise RuntimeError(f"toolfs exited with {done.returncode}: {done.stderr.decode()}")
    try:
        yield mount
    finally:
        cleanup(mount)
        reports = sanitizer_reports(mount)
        shutil.rmtree(report_dir, ignore_errors=True)
        if reports:  # shown with the failure even when the test itself failed first
            print(f"the toolfs daemon's sanitizer report:\n{reports}", file=sys.stderr)
    # A sanitizer report from the daemon (memory error, UB, leak at exit) fails the test.
    assert not reports, f"the toolfs daemon's sanitizer report:\n{reports}"


def settled(cache_mode: str, check) -> bool:
    """check() now; in cache=relaxed, where a plain entry may lag a change by the invalidation
    delay (docs/SPEC.md §4), once it has had PLAIN_SETTLE seconds to come true."""
    def holds() -> bool:
        try:
            return bool(check())
        except OSError:  # e.g. a read of what the kernel still takes for a directory
            if cache_mode != "relaxed":
                raise
            return False

    deadline = time.monotonic() + PLAIN_SETTLE
    while not holds():
        if cache_mode != "relaxed" or time.monotonic() > deadline:
            return False
        time.sleep(0.0002)
    return True


class Busy:
    """n processes that burn a CPU each (2: both of a 2-CPU machine), killed by their pids on
    exit."""

    def __init__(self, n: int):
        self.n = n
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()
