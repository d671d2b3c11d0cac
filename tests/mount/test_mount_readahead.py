# SPDX-License-Identifier: MIT
"""Sibling read-ahead (docs/SPEC.md §4): while lookups walk a directory's siblings in listing
order (ls -l), the daemon renders the next ones on a thread of its own, at most 32 past the latest
lookup. What it renders is never served stale: sources rewritten, deleted, or turned into FIFOs
or directories between the lookups that start a run and the ones that reach them show as they
are at their lookup, and the daemon goes on.

Oracles: the bytes the test wrote (and their SHA-256), and inotify's record of the sources whose
content the daemon read (IN_ACCESS on SOURCE)."""
import ctypes
import errno
import os
import pathlib
import select
import stat
import struct
import time

import pytest

from mount_util import mounted
from test_mount_fresh import check_sibling, write_by_rename, write_in_place

FILES = 200
WINDOW = 32  # TFS_READAHEAD_WINDOW
SUFFIX = ".tool.json"
IN_ACCESS = 0x1
HANG_GUARD = 30  # seconds; never a measurement


def body(i: int, tag: str = "v1") -> bytes:
    return f"{tag} file {i}\n".encode() * (1 + i % 5)


@pytest.fixture
def tree(build_dir, tmp_path, cache_mode):
    """(source, mount point) of a directory of FILES small files, mounted in each cache mode."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(FILES):
        (src / f"f{i:03d}.txt").write_bytes(body(i))
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", "-o",
                 f"cache={cache_mode}") as m:
        yield src, m.path


def listed_sources(mnt: pathlib.Path) -> list:
    """The sources whose siblings the mount lists, in listing order."""
    return [n[:-len(SUFFIX)] for n in os.listdir(mnt) if n.endswith(SUFFIX)]


def start_run(mnt: pathlib.Path, order: list) -> None:
    """Stats the first three listed siblings, in listing order: a run begins."""
    for name in order[:3]:
        os.stat(mnt / (name + SUFFIX))


class Reads:
    """The names of the files of a directory whose content was read, from inotify."""

    def __init__(self, path: pathlib.Path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), IN_ACCESS)
        assert wd >= 0, os.strerror(ctypes.get_errno())
        self.names = set()

    def take(self, timeout: float) -> bool:
        """Adds the names read within timeout seconds; whether there were any."""
        if not select.select([self.fd], [], [], timeout)[0]:
            return False
        data = os.read(self.fd, 65536)
        while data:
            _, _, _, size = struct.unpack_from("iIII", data)
            name = data[16:16 + size].rstrip(b"\0").decode()
            if name:  # not the directory itself, which listings read
                self.names.add(name)
            data = data[16 + size:]
        return True

    def close(self):
        os.close(self.fd)


def test_read_ahead_stays_within_its_window(tree):
    src, mnt = tree
    order = listed_sources(mnt)
    assert len(order) == FILES
    reads = Reads(src)
    try:
        start_run(mnt, order)
        deadline = time.monotonic() + HANG_GUARD
        while not reads.names - set(order[:3]) and time.monotonic() < deadline:
            reads.take(0.5)
        while reads.take(1.0) and time.monotonic() < deadline:  # until it stops reading
            pass
    finally:
        reads.close()
    ahead = reads.names - set(order[:3])
    assert ahead, "no sibling was read ahead of the lookups"
    assert ahead <= set(order[3:3 + WINDOW]), \
        f"read past the window: {sorted(ahead - set(order[3:3 + WINDOW]))}"


def test_read_ahead_is_never_stale(tree):
    src, mnt = tree
    order = listed_sources(mnt)
    start_run(mnt, order)
    time.sleep(0.2)  # not a measurement: only gives the thread a chance to render ahead first
    data = {name: body(int(name[1:4])) for name in order}
    # Every kind of change, over twice the window past the run's start: same size in place,
    # another size in place, by rename.
    for k, name in enumerate(order[3:3 + 2 * WINDOW]):
        i = int(name[1:4])
        new = body(i, "v2") if k % 3 == 0 else body(i, "v2") + b"more\n"
        (write_in_place if k % 3 != 2 else write_by_rename)(src / name, new)
        data[name] = new
    problems = []
    for name in order:
        problems += check_sibling(mnt / (name + SUFFIX), data[name], name)
    assert problems == []


def test_read_ahead_of_vanished_and_fifo_sources_is_harmless(tree):
    src, mnt = tree
    order = listed_sources(mnt)
    start_run(mnt, order)
    gone, fifos = set(), []
    # No pause: some change while the thread renders them, the rest before it reaches them.
    for k, name in enumerate(order[3:3 + 2 * WINDOW]):
        path = src / name
        if k % 4 == 3:
            continue
        path.unlink()
        gone.add(name)
        if k % 4 == 1:
            os.mkfifo(path)
            fifos.append(path)
        elif k % 4 == 2:
            path.mkdir()
    problems = []
    for name in order:
        sibling = mnt / (name + SUFFIX)
        if name in gone:
            try:
                os.stat(sibling)
                problems.append(f"{name}: a sibling of a source that is gone")
            except FileNotFoundError:
                pass
        else:
            problems += check_sibling(sibling, body(int(name[1:4])), name)
    assert problems == []
    for path in fifos:
        assert stat.S_ISFIFO(os.stat(mnt / path.name).st_mode)
        # No reader holds it: the daemon never opened it.
        with pytest.raises(OSError) as err:
            os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        assert err.value.errno == errno.ENXIO
