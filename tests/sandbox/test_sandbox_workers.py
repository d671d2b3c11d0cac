# SPDX-License-Identifier: MIT
"""The reader workers of one reading process are counted and capped (max_workers, docs/SPEC.md
§8): reads beyond the cap wait in turn within their own deadline; and toolfs-mcp's
notifications/cancelled ends the worker of the call it names (§7). Every worker here spins
(TOOLFS_WORKER_TEST=loop), so that only the deadline or a cancellation ends it."""
import json
import os
import select
import shutil
import subprocess
import threading
import time

import pytest

from mount_util import mounted
from test_sandbox import make_png, worker_processes, workers_of

READS = 6


@pytest.fixture(scope="module")
def pngs(tmp_path_factory):
    """Six PNGs (distinct files: no result is shared), the same in six folders (the kernel
    serializes the lookups of one FUSE directory, and the mount reads a sibling at its lookup),
    and a text file."""
    root = tmp_path_factory.mktemp("workers") / "src"
    root.mkdir()
    make_png(root / "p0.png")
    for i in range(READS):
        if i:
            shutil.copy(root / "p0.png", root / f"p{i}.png")
        (root / f"d{i}").mkdir()
        shutil.copy(root / "p0.png", root / f"d{i}" / "p.png")
    (root / "hello.txt").write_text("hello\n")
    return root


class Mcp:
    """toolfs-mcp over stdio with several requests in flight: answers are taken by id."""

    def __init__(self, build_dir, root, *args):
        self.proc = subprocess.Popen([str(build_dir / "mcp" / "toolfs-mcp"), *args, str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, "TOOLFS_WORKER_TEST": "loop"})
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}}})
        assert self.answer()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def start_read(self, rid, name):
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": "read", "arguments": {"file_path": name}}})

    def answer(self, timeout=60):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer from toolfs-mcp"
        line = self.proc.stdout.readline()
        assert line, "toolfs-mcp closed its output"
        return json.loads(line)

    def close(self):
        """Closes stdin; returns the lines the server still wrote before exiting 0."""
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        assert self.proc.wait(timeout=30) == 0
        return [json.loads(line) for line in rest.splitlines()]


def error_code(answer):
    return answer["result"]["_meta"]["toolfs/result"]["errorCode"]


def text_of(answer):
    return answer["result"]["content"][0]["text"]


class WorkerWatch:
    """Polls /proc on a thread and keeps the most workers (not counting the fork server) seen
    under the process of pid."""

    def __init__(self, build_dir, pid):
        self.build_dir, self.pid, self.most, self.done = build_dir, pid, 0, False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.done:
            self.most = max(self.most, len(workers_of(self.build_dir, self.pid)) - 1)
            time.sleep(0.005)

    def stop(self):
        self.done = True
        self.thread.join()
        return self.most


def wait_for_workers(build_dir, pid, count, seconds):
    """Polls until the process of pid has count workers beside its fork server; returns them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = workers_of(build_dir, pid)
        if len(found) - 1 == count:
            return found
        time.sleep(0.01)
    return workers_of(build_dir, pid)


def no_worker_left(build_dir, pid=None):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = worker_processes(build_dir) if pid is None else workers_of(build_dir, pid)[1:]
        if not left:
            return True
        time.sleep(0.05)
    return False


def test_mcp_runs_at_most_max_workers(build_dir, pngs):
    """Six reads in flight with max_workers=2: never more than two workers at once, all six
    answered (timeout), the queued ones saying they waited for a worker; none left after."""
    server = Mcp(build_dir, pngs, "--max-workers", "2", "--max-render-ms", "600")
    try:
        watch = WorkerWatch(build_dir, server.proc.pid)
        for i in range(READS):
            server.start_read(i + 1, f"p{i}.png")
        answers = {}
        try:
            while len(answers) < READS:
                answer = server.answer()
                answers[answer["id"]] = answer
        finally:
            most = watch.stop()
        assert most == 2, f"{most} workers at once (max_workers 2)"
        texts = [text_of(answers[i + 1]) for i in range(READS)]
        assert all(answers[i + 1]["result"]["isError"] for i in range(READS)), texts
        assert all(error_code(answers[i + 1]) == "timeout" for i in range(READS)), texts
        waited = [t for t in texts if "waited for a sandboxed worker past max_render_ms" in t]
        assert waited and all("(max_workers 2)" in t for t in waited), texts
    finally:
        rest = server.close()
    assert rest == []
    assert no_worker_left(build_dir)


def test_queued_read_past_its_deadline_says_it_waited(build_dir, pngs):
    """max_workers=1: the second read waits behind the first, whose worker spins until the
    deadline's grace ends; the second's deadline passes first, so it is answered first, with
    timeout naming the wait."""
    server = Mcp(build_dir, pngs, "--max-workers", "1", "--max-render-ms", "600")
    try:
        server.start_read(1, "p0.png")
        assert len(wait_for_workers(build_dir, server.proc.pid, 1, 10)) == 2
        server.start_read(2, "p1.png")
        first = server.answer()
        assert first["id"] == 2, text_of(first)
        text = text_of(first)
        assert first["result"]["isError"] and error_code(first) == "timeout"
        assert "The image reader waited for a sandboxed worker past max_render_ms (600 ms) " \
               "on p1.png: 1 read was running (max_workers 1)" in text, text
        second = server.answer()
        assert second["id"] == 1 and "ran past max_render_ms (600 ms)" in text_of(second)
    finally:
        rest = server.close()
    assert rest == []
    assert no_worker_left(build_dir)


def test_mount_runs_at_most_max_workers(build_dir, pngs, tmp_path, monkeypatch):
    """Six threads read six loop-hook siblings (in six folders) of a mount with max_workers=2:
    at most two workers at once, all six timeout, none left after."""
    monkeypatch.setenv("TOOLFS_WORKER_TEST", "loop")
    with mounted(build_dir / "fs" / "toolfs", pngs, tmp_path / "mnt",
                 "-o", "max_workers=2,max_render_ms=600") as m:
        watch = WorkerWatch(build_dir, m.pid)
        docs = [None] * READS

        def read(i):
            docs[i] = json.loads((m.path / f"d{i}" / "p.png.tool.json").read_text())

        threads = [threading.Thread(target=read, args=(i,)) for i in range(READS)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
        finally:
            most = watch.stop()
        assert most == 2, f"{most} workers at once (max_workers 2)"
        assert all(d and d["errorCode"] == "timeout" for d in docs), docs
        assert any("waited for a sandboxed worker" in d["error"] for d in docs), docs
        assert no_worker_left(build_dir, m.pid)


def test_mcp_cancel_ends_the_worker(build_dir, pngs):
    """notifications/cancelled for a read in its worker: the worker is gone within 1 s, no
    answer with that id ever comes, and the next call is answered."""
    cancel_ends_the_worker(build_dir, pngs, "p0.png")


def cancel_ends_the_worker(build_dir, root, name):
    """A spinning read of name in root, cancelled: its worker is gone within 1 s, its id is
    never answered, the next call is."""
    server = Mcp(build_dir, root, "--max-render-ms", "60000")
    try:
        server.start_read(7, name)
        assert len(wait_for_workers(build_dir, server.proc.pid, 1, 10)) == 2
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "the user gave up"}})
        left = wait_for_workers(build_dir, server.proc.pid, 0, 1)
        assert len(left) == 1, f"the worker still runs 1 s after the cancel: {left}"
        server.start_read(8, "hello.txt")
        answer = server.answer()
        assert answer["id"] == 8 and text_of(answer) == "     1\thello\n"
    finally:
        rest = server.close()
    assert [a for a in rest if a.get("id") == 7] == [], rest
    assert no_worker_left(build_dir)


def test_mcp_cancel_ends_a_wait_for_a_worker(build_dir, pngs):
    """max_workers=1 and toolfs-mcp's 4 threads: one read holds the worker, three wait for it
    (60 s of max_render_ms each) and a text read is queued behind them. Cancelling the three
    waiting ones frees their threads: the text read is answered while the first read's worker
    still runs; cancelling that one ends its worker. No cancelled id is ever answered."""
    server = Mcp(build_dir, pngs, "--max-workers", "1", "--max-render-ms", "60000")
    try:
        server.start_read(1, "p0.png")
        assert len(wait_for_workers(build_dir, server.proc.pid, 1, 10)) == 2
        for rid in (2, 3, 4):
            server.start_read(rid, f"p{rid}.png")
        server.start_read(5, "hello.txt")
        time.sleep(0.5)  # the three are waiting for the worker by now
        for rid in (2, 3, 4):
            server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": rid}})
        answer = server.answer(timeout=20)
        assert answer["id"] == 5 and text_of(answer) == "     1\thello\n"
        assert len(workers_of(build_dir, server.proc.pid)) == 2  # the first still reads
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}})
        left = wait_for_workers(build_dir, server.proc.pid, 0, 1)
        assert len(left) == 1, f"the worker still runs 1 s after the cancel: {left}"
    finally:
        rest = server.close()
    assert [a for a in rest if a.get("id") in (1, 2, 3, 4)] == [], rest
    assert no_worker_left(build_dir)


@pytest.fixture(scope="module")
def media_tree(tmp_path_factory):
    """Three WAVs and three PNGs (distinct files) for reads of both kinds at once."""
    import wave
    root = tmp_path_factory.mktemp("media_workers")
    make_png(root / "p0.png")
    for i in range(READS // 2):
        if i:
            shutil.copy(root / "p0.png", root / f"p{i}.png")
        with wave.open(str(root / f"t{i}.wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(bytes(range(256)) * (40 + i))
    (root / "hello.txt").write_text("hello\n")
    return root


def test_media_reads_count_under_max_workers(build_dir, media_tree):
    """Issue 35: the audio and video reader runs in the reader worker like the others (it had a
    pool of its own, uncounted): three WAV and three PNG reads in flight with max_workers=2
    never run more than two workers at once, each media read is the media reader's timeout or
    wait; and notifications/cancelled ends a media read's worker."""
    server = Mcp(build_dir, media_tree, "--max-workers", "2", "--max-render-ms", "600")
    try:
        watch = WorkerWatch(build_dir, server.proc.pid)
        names = [f"{kind}{i}.{ext}" for i in range(READS // 2)
                 for kind, ext in (("t", "wav"), ("p", "png"))]
        for rid, name in enumerate(names, 1):
            server.start_read(rid, name)
        answers = {}
        try:
            while len(answers) < len(names):
                answer = server.answer()
                answers[answer["id"]] = answer
        finally:
            most = watch.stop()
        assert most == 2, f"{most} workers at once (max_workers 2)"
        for rid, name in enumerate(names, 1):
            text = text_of(answers[rid])
            assert error_code(answers[rid]) == "timeout", text
            reader = "media" if name.endswith(".wav") else "image"
            assert text.startswith(f"The {reader} reader "), text
    finally:
        assert server.close() == []
    cancel_ends_the_worker(build_dir, media_tree, "t0.wav")
