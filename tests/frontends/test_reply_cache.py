# SPDX-License-Identifier: MIT
"""The reply cache of sandboxed reads (docs/SPEC.md §8, issue 35): toolfs-mcp answers a second read
of the same file version, reader, selector and options from its memory, without a worker.

A miss is seen from outside: the fork server is killed between two reads, so a read that needs a
worker starts a new one (a toolfs-reader-worker child of toolfs-mcp, found in /proc), and a read
answered from the cache leaves none."""
import os
import pathlib
import signal
import time

import pytest

from fixtures import gen_pdfs
from test_sandbox import Mcp, make_svg, workers_of

# Room for OCR on a loaded 2-CPU machine: the default 10 s would cut a window short.
SLOW = ["--max_render_ms", "300000"]


class McpArgs(Mcp):
    """test_sandbox's Mcp with command-line options before the root."""

    def __init__(self, build_dir, root, args, env=None):
        import subprocess
        import json  # noqa: F401 (Mcp.call uses it)
        self.proc = subprocess.Popen([str(build_dir / "mcp" / "toolfs-mcp"), *args, str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    """A scanned PDF and a few SVGs, older than the 2 s within which a version's stamps are
    too recent to trust (a write in the same clock tick would keep them)."""
    root = tmp_path_factory.mktemp("replies")
    gen_pdfs.scan_pdf(root / "scan.pdf")
    for i in range(8):
        make_svg(root / f"pic{i}.svg")
    time.sleep(2.2)
    return root


def kill_server(build_dir, mcp) -> None:
    """Kills toolfs-mcp's fork server (its workers die with it) and waits until none is left."""
    for pid in workers_of(build_dir, mcp.proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for _ in range(200):
        if not workers_of(build_dir, mcp.proc.pid):
            return
        time.sleep(0.05)
    raise AssertionError("the fork server did not end")


def spawned(build_dir, mcp) -> bool:
    """Whether the last read started a fork server (the previous one being killed)."""
    return bool(workers_of(build_dir, mcp.proc.pid))


def test_second_read_of_a_scanned_page_spawns_no_worker(build_dir, tree):
    mcp = McpArgs(build_dir, tree, SLOW)
    try:
        first = mcp.read(file_path="scan.pdf", pages="2")
        assert not first["isError"]
        assert "(OCR)" in first["content"][0]["text"]
        kill_server(build_dir, mcp)
        second = mcp.read(file_path="scan.pdf", pages="2")
        assert not spawned(build_dir, mcp), "the second read spawned a worker"
        assert second == first
        # Another selector or option is another reply.
        mcp.read(file_path="scan.pdf", pages="2", ocr="off")
        assert spawned(build_dir, mcp)
    finally:
        mcp.close()


def test_file_rewritten_in_place_misses(build_dir, tree, tmp_path):
    path = tree / "pic0.svg"
    mcp = McpArgs(build_dir, tree, SLOW)
    try:
        first = mcp.read(file_path="pic0.svg")
        assert not first["isError"]
        kill_server(build_dir, mcp)
        assert mcp.read(file_path="pic0.svg") == first
        assert not spawned(build_dir, mcp)
        before = path.stat()
        data = path.read_bytes().replace(b"red", b"blu")
        with open(path, "r+b") as f:  # the same inode, the same size
            f.write(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        after = path.stat()
        assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
        again = mcp.read(file_path="pic0.svg")
        assert spawned(build_dir, mcp), "the rewritten file was answered from the cache"
        assert not again["isError"]
    finally:
        mcp.close()


def test_timed_out_read_is_not_cached(build_dir, tree):
    mcp = McpArgs(build_dir, tree, ["--max_render_ms", "300"], {"TOOLFS_WORKER_TEST": "loop"})
    try:
        first = mcp.read(file_path="pic1.svg")
        assert first["isError"] and "ran past max_render_ms" in first["content"][0]["text"]
        kill_server(build_dir, mcp)
        again = mcp.read(file_path="pic1.svg")
        assert spawned(build_dir, mcp), "a timed-out read was answered from the cache"
        assert again["isError"]
    finally:
        mcp.close()


def test_bound_evicts_the_least_recently_used(build_dir, tree):
    """max_read_memory 32K bounds the cache to 8 KiB (a quarter): it holds the latest few of the
    SVG replies (about 2.5 KiB each: a 1.6 KiB PNG, the text, the key), never all eight."""
    mcp = McpArgs(build_dir, tree, [*SLOW, "--max_read_memory", "32K"])
    try:
        for i in range(8):
            assert not mcp.read(file_path=f"pic{i}.svg")["isError"]
        kill_server(build_dir, mcp)
        mcp.read(file_path="pic7.svg")
        assert not spawned(build_dir, mcp), "the latest reply was not kept"
        mcp.read(file_path="pic0.svg")
        assert spawned(build_dir, mcp), "the oldest reply was not evicted"
    finally:
        mcp.close()
