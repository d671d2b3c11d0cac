# SPDX-License-Identifier: MIT
"""Plain files are never read torn (issue 23, defect 4): whatever the cache= mode, a read of a
plain file through the mount returns the bytes of one version of it whole, the one before a
change (within the invalidation delay) or the one after, never the bytes of one version cut or
padded at the size of another. Read by read(), by read() into a large buffer without a stat, and
by mmap of the size fstat gives; with the machine idle and with both CPUs busy.

Oracle: every version the test wrote (a read must equal one of them exactly)."""
import os
import subprocess
import sys
import threading
import time

import pytest

from mount_util import Busy, mounted

ROUNDS = int(os.environ.get("TOOLFS_TORN_ROUNDS", "1000"))
SECONDS = float(os.environ.get("TOOLFS_TORN_SECONDS", "8"))
MODES = ["relaxed", "watch", "strict"]


def version(i: int) -> bytes:
    """Version i: its own bytes at every offset, a size unlike its neighbours' (mostly small, a
    few over the kernel's 128 KiB read and readahead windows)."""
    if i % 10 == 9:
        size = 150_000 + (i * 7919) % 250_000
    else:
        size = 64 + (i * 7919) % 4000
    stamp = f"[v{i:07d}]".encode()
    return (stamp * (size // len(stamp) + 1))[:size]


def write_version(path, i: int, how: str) -> bytes:
    """Makes version i of path: "trunc" rewrites the same inode (open O_TRUNC, write), "rename"
    writes a new file and renames it over path. Returns the bytes."""
    data = version(i)
    if how == "trunc":
        with open(path, "wb") as f:
            f.write(data)
    else:
        tmp = path.with_name(path.name + ".new")
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, path)
    return data


# Reads a path per line by mmap of the size fstat gives and answers with the bytes: a mapping
# longer than the file faults with SIGBUS, so it runs apart from the test (and is restarted).
MMAP_READER = r"""
import mmap, os, sys
for line in sys.stdin:
    fd = os.open(line.rstrip("\n"), os.O_RDONLY)
    size = os.fstat(fd).st_size
    data = b""
    if size:
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            data = bytes(m)
    os.close(fd)
    sys.stdout.buffer.write(len(data).to_bytes(8, "little") + data)
    sys.stdout.flush()
"""


class Reader:
    """Reads the mount's file three ways in turn: as Python reads a file (fstat, then read to
    EOF), as cat does (read into a 128 KiB buffer to EOF, no stat), by mmap of the size fstat
    gives (in a helper process; None when it died of SIGBUS)."""

    def __init__(self):
        self.helper = None

    def close(self):
        if self.helper is not None:
            self.helper.stdin.close()
            self.helper.kill()
            self.helper.wait()
            self.helper = None

    def mmap_read(self, view):
        if self.helper is None:
            self.helper = subprocess.Popen([sys.executable, "-c", MMAP_READER],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.helper.stdin.write(os.fsencode(view) + b"\n")
        self.helper.stdin.flush()
        head = self.helper.stdout.read(8)
        if len(head) < 8:
            self.close()
            return None
        n = int.from_bytes(head, "little")
        data = self.helper.stdout.read(n)
        return data if len(data) == n else None

    def read(self, view, how: int):
        if how == 2:
            return self.mmap_read(view)
        fd = os.open(view, os.O_RDONLY)
        try:
            if how == 0:
                with os.fdopen(os.dup(fd), "rb") as f:
                    return f.read()
            parts = []
            while True:
                part = os.read(fd, 128 * 1024)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        finally:
            os.close(fd)


def describe(data, versions: dict) -> str:
    """Which version a torn read holds and at whose size."""
    if data is None:
        return "an mmap reader killed by SIGBUS (a mapping longer than the file)"
    head = data[:10].decode(errors="replace")
    sizes = [i for i, v in versions.items() if len(v) == len(data)]
    return f"{len(data)} bytes starting {head!r} (the size of version(s) {sizes[-3:]})"


def check(data, versions: dict, latest: int, stats: dict) -> None:
    if data == versions[latest]:
        return
    if data is not None and data in versions.values():
        stats["stale"] += 1
        return
    stats["torn"] += 1
    if len(stats["examples"]) < 5:
        stats["examples"].append(f"after version {latest} ({len(versions[latest])} bytes): "
                                 + describe(data, versions))


def report(label: str, reads: int, stats: dict) -> None:
    """Prints the counts (pytest -s shows them) and fails on any torn read."""
    print(f"\n{label}: {reads} reads, {stats['torn']} torn, {stats['stale']} an earlier version "
          "whole")
    for example in stats["examples"]:
        print("  torn:", example)
    assert stats["torn"] == 0, f"{stats['torn']} of {reads} reads were torn: {stats['examples']}"


@pytest.mark.parametrize("busy", [0, 2], ids=["idle", "busy"])
@pytest.mark.parametrize("how", ["trunc", "rename"])
@pytest.mark.parametrize("mode", MODES)
def test_read_after_rewrite_is_one_version(build_dir, tmp_path, mode, how, busy):
    """Write a version, then read the mount at once, round after round: every read is one
    version whole (the latest, or an earlier one within the invalidation delay)."""
    src = tmp_path / "src"
    src.mkdir()
    path = src / "f.txt"
    versions = {0: write_version(path, 0, how)}
    stats = {"torn": 0, "stale": 0, "examples": []}
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", "-o", f"cache={mode}") as m, \
            Busy(busy):
        view = m.path / "f.txt"
        reader = Reader()
        rounds = 0
        try:
            assert reader.read(view, 0) == versions[0]
            end = time.monotonic() + SECONDS
            for i in range(1, ROUNDS + 1):
                versions[i] = write_version(path, i, how)
                check(reader.read(view, i % 3), versions, i, stats)
                rounds = i
                if time.monotonic() > end:
                    break
        finally:
            reader.close()
    report(f"cache={mode} {how} {'busy' if busy else 'idle'}", rounds, stats)


@pytest.mark.parametrize("busy", [0, 2], ids=["idle", "busy"])
@pytest.mark.parametrize("mode", MODES)
def test_read_while_renamed_over_is_one_version(build_dir, tmp_path, mode, busy):
    """A writer renames new versions over the file without pause while the mount is read: every
    read is one version whole. (A rewrite in place during a read is torn in SOURCE itself, so it
    is only checked between writes, above.)"""
    src = tmp_path / "src"
    src.mkdir()
    path = src / "f.txt"
    versions = {0: write_version(path, 0, "rename")}
    latest = [0]
    stop = threading.Event()
    stats = {"torn": 0, "stale": 0, "examples": []}

    def writer():
        i = 0
        while not stop.is_set() and i < 100 * ROUNDS:
            i += 1
            versions[i] = version(i)  # known before it can be read
            write_version(path, i, "rename")
            latest[0] = i
            time.sleep(0)

    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", "-o", f"cache={mode}") as m, \
            Busy(busy):
        view = m.path / "f.txt"
        thread = threading.Thread(target=writer)
        thread.start()
        reader = Reader()
        reads = 0
        try:
            end = time.monotonic() + SECONDS
            while reads < ROUNDS and time.monotonic() < end:
                data = reader.read(view, reads % 3)
                newest = latest[0]
                # dict() copies under the GIL: every version written so far
                check(data, dict(versions), newest, stats)
                reads += 1
        finally:
            stop.set()
            thread.join()
            reader.close()
    report(f"cache={mode} concurrent rename {'busy' if busy else 'idle'}", reads, stats)


# A writer that rewrites the file in place every PAUSE seconds (2 ms, as issue 36 found it, or
# none), from a process of its own (so that the reader's GIL does not pace it): "trunc" opens it O_TRUNC and writes, "pwrite" writes over it
# from offset 0 and cuts it to size. Sizes cycle between 100 and 30,000 bytes; no byte is NUL.
RACING_WRITER = r"""
import os, sys, time
path, how, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
fd = os.open(path, os.O_WRONLY)
i = 0
while True:
    i += 1
    size = 100 + (i * 7919) % 29_901
    stamp = b"[w%07d]" % i
    data = (stamp * (size // len(stamp) + 1))[:size]
    if how == "trunc":
        with open(path, "wb") as f:
            f.write(data)
    else:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, size)
    time.sleep(pause)
"""
RACING_READS = int(os.environ.get("TOOLFS_RACING_READS", "3000"))


# The writer's pause between rewrites: 2 ms as issue 36 item 3 states it. With a writer that
# never pauses (TOOLFS_RACING_PAUSE=0) every mode still padded 1-2 reads in 3,000 in some runs
# (a3ab549: 2 and 14 in relaxed): a known limit that SPEC §4 states; this test then fails, as
# it should, rather than hide it behind an expected failure.
RACING_PAUSE = float(os.environ.get("TOOLFS_RACING_PAUSE", "0.002"))


@pytest.mark.parametrize("how", ["trunc", "pwrite"])
@pytest.mark.parametrize("mode", MODES)
def test_read_while_rewritten_in_place_is_never_padded(build_dir, tmp_path, mode, how):
    """Issue 36, item 3: a writer rewrites the file in place every 2 ms (or, with TOOLFS_RACING_PAUSE=0, without pause, which
    padded 2-14 reads of a3ab549 in 3,000 where 2 ms did once or never) while the file
    is read 3,000 times, by cat (2 ms) or as cat reads (nonstop: read into a 128 KiB buffer to
    EOF, no stat): no read holds a NUL (SOURCE never does), so no read is one version padded to
    another's size. (A read racing a rewrite in place may show the file mid-write, as SOURCE
    would: only the padding is checked.)"""
    pause = RACING_PAUSE
    src = tmp_path / "src"
    src.mkdir()
    path = src / "f.txt"
    path.write_bytes(b"x" * 20_000)
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", "-o", f"cache={mode}") as m:
        view = m.path / "f.txt"
        assert view.read_bytes() == b"x" * 20_000
        writer = subprocess.Popen([sys.executable, "-c", RACING_WRITER, str(path), how,
                                   str(pause)])
        reader = Reader()
        padded, examples = 0, []
        try:
            for _ in range(1000):  # until the writer has begun (bounded: 10 s)
                if path.read_bytes()[:2] == b"[w":
                    break
                time.sleep(0.01)
            for _ in range(RACING_READS):
                if pause:
                    data = subprocess.run(["cat", view], stdout=subprocess.PIPE,
                                          check=True).stdout
                else:
                    data = reader.read(view, 1)
                if b"\0" in data:
                    padded += 1
                    if len(examples) < 3:
                        examples.append(f"{len(data)} bytes, NUL from {data.index(0)}: "
                                        f"{data[:10]!r}")
        finally:
            writer.kill()
            writer.wait()
            reader.close()
    print(f"\ncache={mode} {how} {pause}: {RACING_READS} reads, {padded} padded with NULs")
    assert padded == 0, f"{padded} of {RACING_READS} reads padded with NULs: {examples}"
