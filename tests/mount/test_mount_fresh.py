# SPDX-License-Identifier: MIT
"""Freshness and snapshots (docs/SPEC.md §4): after a source file changes, the next stat and open of it
and of its siblings reflect it, never stale, truncated or mixed; an open sibling handle is a
snapshot; files created or removed in SOURCE appear or disappear at once (in cache=relaxed,
the default, a plain entry within the invalidation delay; a sibling at once in every mode).

Oracles: the bytes the test itself wrote (and their SHA-256), and the JSON schema."""
import hashlib
import json
import mmap
import os
import pathlib
import threading
import time

import pytest

from conftest import validate_result
from mount_util import mounted, settled

REWRITES = 500


@pytest.fixture
def live(build_dir, tmp_path, request, cache_mode):
    """(source, mount point) of an empty tree mounted for the test in each cache mode (with the
    -o options of an indirect parameter)."""
    src = tmp_path / "src"
    src.mkdir()
    options = ["-o", f"cache={cache_mode}"]
    options += ["-o", request.param] if hasattr(request, "param") else []
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path / "mnt", *options) as m:
        yield src, m.path


def version(i: int) -> bytes:
    """Version i of a text file: its sizes over i < 500 are all different, going up and down."""
    size = 100 + (i * 7919) % 500 * 11
    head = "".join(f"version {i} line {k}\n" for k in range(1, i % 40 + 2)).encode()
    return (head + b"x" * size)[:size - 1] + b"\n"


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_in_place(path: pathlib.Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def write_by_rename(path: pathlib.Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def check_sibling(path: pathlib.Path, data: bytes, tag: str, line: int = 1) -> list:
    """Problems with the sibling at path as the result for data, whose content starts at line
    (empty when it is right)."""
    problems = []
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        raw = f.read()
    if size != len(raw):
        problems.append(f"{tag}: fstat says {size}, read {len(raw)}")
    try:
        doc = json.loads(raw)
        validate_result(doc)
    except Exception as exc:  # truncated or mixed bytes do not parse
        return problems + [f"{tag}: invalid JSON ({exc})"]
    if doc["metadata"]["size"] != len(data) or \
            doc["metadata"].get("sha256") != hashlib.sha256(data).hexdigest():
        problems.append(f"{tag}: stale result (size {doc['metadata']['size']}, "
                        f"want {len(data)})")
    first = f"{line:6d}\t" + data.split(b"\n")[line - 1][:100].decode()
    if not doc["content"].startswith(first):
        problems.append(f"{tag}: content does not hold {first!r}")
    if os.stat(path).st_size != len(raw):
        problems.append(f"{tag}: stat size differs from the bytes read")
    return problems


@pytest.mark.slow
def test_500_rewrites_are_never_stale(live, cache_mode):
    src, mnt = live
    problems = []
    for i in range(REWRITES):
        data = version(i)
        (write_in_place if i % 2 else write_by_rename)(src / "f.txt", data)
        # The sibling first: strictly fresh in every mode, whatever the plain entry shows.
        problems += check_sibling(mnt / "f.txt.tool.json", data, str(i))
        if not settled(cache_mode, lambda: read(mnt / "f.txt") == data):
            problems.append(f"{i}: real file: read {len(read(mnt / 'f.txt'))} bytes, "
                            f"want {len(data)}")
        if not settled(cache_mode, lambda: os.stat(mnt / "f.txt").st_size == len(data)):
            problems.append(f"{i}: real file: stale size")
        if i % 25 == 0:
            problems += check_sibling(mnt / "f.txt:2-.tool.json", data, f"{i}:2-", line=2)
    assert problems == []


def test_versions_have_sizes_that_differ():
    sizes = [len(version(i)) for i in range(REWRITES)]
    assert len(set(sizes)) == REWRITES
    assert any(b < a for a, b in zip(sizes, sizes[1:])), "sizes also shrink"


def test_created_and_deleted_files_show_at_once(live, cache_mode):
    src, mnt = live
    for i in range(50):
        name = f"new{i}.txt"
        data = f"created {i}\n".encode()
        (src / name).write_bytes(data)
        assert check_sibling(mnt / (name + ".tool.json"), data, name) == []
        assert read(mnt / name) == data
        assert settled(cache_mode, lambda: name in os.listdir(mnt) and
                       name + ".tool.json" in os.listdir(mnt))
        (src / name).unlink()
        assert not os.path.lexists(mnt / (name + ".tool.json"))
        assert settled(cache_mode, lambda: not os.path.lexists(mnt / name))
        assert settled(cache_mode, lambda: name not in os.listdir(mnt) and
                       name + ".tool.json" not in os.listdir(mnt))


def test_directories_created_renamed_removed(live, cache_mode):
    src, mnt = live
    (src / "d").mkdir()
    (src / "d" / "a.txt").write_text("in d\n")
    assert json.loads(read(mnt / "d" / "a.txt.tool.json"))["path"] == "d/a.txt"
    os.rename(src / "d", src / "e")
    assert not os.path.lexists(mnt / "d" / "a.txt.tool.json")
    assert json.loads(read(mnt / "e" / "a.txt.tool.json"))["path"] == "e/a.txt"
    assert settled(cache_mode, lambda: not os.path.lexists(mnt / "d"))
    (src / "e" / "a.txt").unlink()
    (src / "e").rmdir()
    assert settled(cache_mode, lambda: os.listdir(mnt) == [])


def test_file_turned_into_directory_and_back(live, cache_mode):
    src, mnt = live
    (src / "x").write_text("file\n")
    assert os.path.isfile(mnt / "x") and os.path.exists(mnt / "x.tool.json")
    (src / "x").unlink()
    (src / "x").mkdir()
    assert not os.path.exists(mnt / "x.tool.json")
    assert settled(cache_mode, lambda: os.path.isdir(mnt / "x"))
    (src / "x").rmdir()
    (src / "x").write_text("file again\n")
    assert json.loads(read(mnt / "x.tool.json"))["content"] == "     1\tfile again\n"
    assert settled(cache_mode, lambda: read(mnt / "x") == b"file again\n")


def test_open_sibling_is_a_snapshot(live):
    src, mnt = live
    old = "".join(f"old line {n}\n" for n in range(1, 1501)).encode()
    new = b"new\n" * 10
    (src / "f.txt").write_bytes(old)
    sib = mnt / "f.txt.tool.json"
    with open(sib, "rb", buffering=0) as f, open(sib, "rb") as g:
        size = os.fstat(f.fileno()).st_size
        head = f.read(4096)
        ino = os.fstat(f.fileno()).st_ino
        write_in_place(src / "f.txt", new)
        # a new open sees the new version at once ...
        assert check_sibling(sib, new, "new") == []
        assert os.stat(sib).st_ino == ino, "the inode number does not change with the content"
        # ... while the handles opened before keep theirs, bytes and size
        rest = f.read()
        assert os.fstat(f.fileno()).st_size == size == len(head + rest)
        doc = json.loads(head + rest)
        assert doc["metadata"]["size"] == len(old)
        with mmap.mmap(g.fileno(), 0, prot=mmap.PROT_READ) as m:
            assert m[:] == head + rest
    assert check_sibling(sib, new, "after close") == []


def test_open_real_file_sees_rewrite_on_next_open(live):
    src, mnt = live
    (src / "r.txt").write_bytes(b"a" * 10000)
    assert read(mnt / "r.txt") == b"a" * 10000
    assert read(mnt / "r.txt") == b"a" * 10000  # served from the kept page cache
    write_in_place(src / "r.txt", b"b" * 9999)
    assert read(mnt / "r.txt") == b"b" * 9999
    write_in_place(src / "r.txt", b"c" * 9999)  # same size: mtime tells
    os.utime(src / "r.txt", ns=(1, 10**18))
    assert read(mnt / "r.txt") == b"c" * 9999
    # same size and mtime put back (rsync -t, cp -p): only ctime tells
    write_in_place(src / "r.txt", b"d" * 9999)
    os.utime(src / "r.txt", ns=(1, 10**18))
    assert read(mnt / "r.txt") == b"d" * 9999


def test_chmod_in_source_shows_in_sibling_mode(live):
    src, mnt = live
    (src / "m.txt").write_text("mode\n")
    os.chmod(src / "m.txt", 0o640)
    assert os.stat(mnt / "m.txt.tool.json").st_mode & 0o777 == 0o440
    os.chmod(src / "m.txt", 0o604)
    assert os.stat(mnt / "m.txt.tool.json").st_mode & 0o777 == 0o404
    assert os.stat(mnt / "m.txt").st_mode & 0o777 == 0o604


@pytest.mark.parametrize("live", ["cache_size=256M", "cache_size=1K"], indirect=True)
def test_reads_during_rewrites_are_whole_versions(live):
    """Readers racing a writer that replaces the file atomically (rename): every sibling read is
    one complete version the writer wrote, and its handle's fstat matches its bytes. (In-place
    writes expose their own intermediate states, truncated and half-written, which are real.)
    With a cache smaller than one document, the open still finds what its lookup made."""
    src, mnt = live
    written = {}
    (src / "f.txt").write_bytes(version(0))
    written[(len(version(0)), hashlib.sha256(version(0)).hexdigest())] = 0
    done = threading.Event()
    problems = []

    def writer():
        for i in range(1, 300):
            data = version(i)
            written[(len(data), hashlib.sha256(data).hexdigest())] = i
            write_by_rename(src / "f.txt", data)
        done.set()

    def reader():
        while not done.is_set():
            try:
                with open(mnt / "f.txt.tool.json", "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    raw = f.read()
                doc = json.loads(raw)
                validate_result(doc)
            except Exception as exc:
                problems.append(repr(exc))
                continue
            if size != len(raw):
                problems.append(f"fstat {size} != {len(raw)} bytes read")
            meta = doc["metadata"]
            if not doc["success"]:
                problems.append(f"failure: {doc['error']}")
            elif (meta["size"], meta.get("sha256")) not in written:
                problems.append(f"a version never written: {meta}")

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    writer()
    for t in threads:
        t.join()
    assert problems == []
