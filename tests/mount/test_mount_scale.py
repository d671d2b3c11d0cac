# SPDX-License-Identifier: MIT
"""The mount at scale (issue 14): the inodes the kernel remembers are not bounded by the daemon's
descriptors. A tree with 5x more entries than the daemon's RLIMIT_NOFILE is walked with `find`
and `ls -lR` twice, then files are renamed, deleted and recreated while the kernel caches them:
no error, no wrong file, siblings fresh at once (plain entries too, but in cache=relaxed within
the invalidation delay); the daemon's open descriptors stay under its limit.

Oracles: the same walks over SOURCE (names, sizes, modes), the bytes the test wrote,
/proc/PID/fd."""
import json
import os
import pathlib
import subprocess
import threading

import pytest

from mount_util import mounted, settled

NOFILE = 256
DIRS, FILES = 40, 32  # 40 * (32 files + 32 siblings) + 40 dirs = 2,600 entries > 5 * NOFILE


def body(d: int, f: int, tag: str = "v1") -> bytes:
    return f"{tag} dir {d} file {f}\n".encode() * (1 + (d * FILES + f) % 7)


def make_tree(src: pathlib.Path) -> None:
    for d in range(DIRS):
        sub = src / f"d{d:02d}"
        sub.mkdir(parents=True)
        for f in range(FILES):
            (sub / f"f{f:02d}.txt").write_bytes(body(d, f))


def run(*cmd, cwd) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", f"{cmd}: {done.stderr}"
    return done.stdout


def plain_lines(out: str) -> list:
    """ls -lR output without sibling lines, totals and link counts/times that differ."""
    keep = []
    for line in out.splitlines():
        if ".tool.json" in line or line.startswith("total "):
            continue
        fields = line.split()
        keep.append((fields[0], fields[4], fields[-1]) if len(fields) >= 9 else line)
    return keep


def read_either(path: pathlib.Path, before, after: bytes) -> bytes:
    """The bytes at path, which must be before's or after's (before None: the name was free, so
    only after's), never another file's or a mix."""
    data = path.read_bytes()
    assert data in (before, after), f"{path}: {data[:40]!r} is neither version"
    return data


class FdSampler(threading.Thread):
    """Samples the daemon's open descriptors until stopped; keeps the largest count."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.samples = pid, 0, 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                n = len(os.listdir(f"/proc/{self.pid}/fd"))
            except OSError:
                break
            self.peak = max(self.peak, n)
            self.samples += 1
            self.stopping.wait(0.01)

    def stop(self) -> int:
        self.stopping.set()
        self.join()
        return self.peak


@pytest.mark.parametrize("cache_mode, options", [
    ("relaxed", ["-o", "cache=relaxed", "-o", "inode_handles=yes"]),
    ("relaxed", ["-o", "cache=relaxed", "-o", "inode_handles=no"]),  # parent + name
    ("watch", ["-o", "cache=watch"]),
    ("strict", ["-o", "cache=strict"]),
], ids=["handles", "names", "watch", "strict"])
def test_walks_beyond_the_descriptor_limit(build_dir, tmp_path, cache_mode, options):
    src = tmp_path / "src"
    make_tree(src)
    native_find = sorted(run("find", ".", cwd=src).splitlines())
    native_ls = plain_lines(run("ls", "-lR", "--time-style=+", ".", cwd=src))
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", *options,
                 wrapper=("prlimit", f"--nofile={NOFILE}:{NOFILE}")) as m:
        sampler = FdSampler(m.pid)
        sampler.start()
        try:
            for _ in range(2):
                found = run("find", ".", cwd=m.path).splitlines()
                assert sorted(p for p in found if not p.endswith(".tool.json")) == native_find
                assert sum(p.endswith(".tool.json") for p in found) == DIRS * FILES
                listed = run("ls", "-lR", "--time-style=+", ".", cwd=m.path)
                assert plain_lines(listed) == native_ls
            # Changes while the kernel caches every entry: renamed, deleted, recreated.
            for d in range(0, DIRS, 3):
                sub, view = src / f"d{d:02d}", m.path / f"d{d:02d}"
                os.rename(sub / "f00.txt", sub / "moved.txt")
                (sub / "f01.txt").unlink()
                (sub / "f02.txt").unlink()
                (sub / "f02.txt").write_bytes(body(d, 2, "recreated"))
                os.rename(sub / "f03.txt", sub / "f04.txt")  # over another file
                # name: its bytes before the change (None: no such file) and after it.
                changed = {"moved.txt": (None, body(d, 0)),
                           "f02.txt": (body(d, 2), body(d, 2, "recreated")),
                           "f04.txt": (body(d, 4), body(d, 3))}
                # Siblings at once, in every mode.
                assert not (view / "f00.txt.tool.json").exists()
                assert not (view / "f01.txt.tool.json").exists()
                for name, (_, after) in changed.items():
                    doc = json.loads((view / f"{name}.tool.json").read_bytes())
                    assert doc["metadata"]["size"] == len(after), (d, name)
                # Plain entries at once, but in cache=relaxed within the invalidation delay;
                # a read is never of another file than the name's before or after the change.
                assert settled(cache_mode, lambda: not (view / "f00.txt").exists()), d
                assert settled(cache_mode, lambda: not (view / "f01.txt").exists()), d
                for name, (before, after) in changed.items():
                    assert settled(cache_mode, lambda: read_either(view / name, before, after)
                                   == after), (d, name)
                    assert settled(cache_mode,
                                   lambda: os.stat(view / name).st_size == len(after)), (d, name)
            # Every other file still reads as itself after the pool cycled many times.
            for d in range(DIRS):
                for f in range(5, FILES, 9):
                    assert (m.path / f"d{d:02d}" / f"f{f:02d}.txt").read_bytes() == body(d, f)
            assert not subprocess.run(["find", ".", "-name", "nothing"], cwd=m.path,
                                      capture_output=True, text=True).stderr
        finally:
            peak = sampler.stop()
        assert sampler.samples > 0
        assert peak < NOFILE, f"the daemon held {peak} descriptors (limit {NOFILE})"
