#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/reply_cache.py - the warm OCR row of issue 35: the second toolfs-mcp read of a scanned PDF
page, with the reply cache (docs/SPEC.md §8) against a baseline build.

Generates a one-page scan (tests/fixtures/gen_scans.py, 12 pt text drawn at 300 dpi, no text
layer), older than the 2 s within which a version is racy. Each round starts one toolfs-mcp of
each build (A: --build, B: --base, alternately), reads page 1 once untimed (OCR'd in a worker),
then times the second read of it (the tools/call round trip). One warm-up pair, then N pairs;
reports both medians and the median of the per-pair ratios A/B.

Usage: bench/reply_cache.py --base DIR [--build DIR] [--pairs N]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from fixtures import gen_scans  # noqa: E402


class Mcp:
    def __init__(self, build: pathlib.Path, root: pathlib.Path):
        self.proc = subprocess.Popen([str(build / "mcp" / "toolfs-mcp"), "--max_render_ms",
                                      "600000", str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def call(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def second_read(build: pathlib.Path, root: pathlib.Path) -> float:
    """Seconds of the second read of scan.pdf page 1 in a fresh toolfs-mcp of build."""
    mcp = Mcp(build, root)
    try:
        args = {"name": "read", "arguments": {"file_path": "scan.pdf", "pages": "1"}}
        first = mcp.call("tools/call", args)
        assert "(OCR)" in first["content"][0]["text"], first["content"][0]["text"][:200]
        t0 = time.perf_counter()
        second = mcp.call("tools/call", args)
        elapsed = time.perf_counter() - t0
        assert second == first
        return elapsed
    finally:
        mcp.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=pathlib.Path,
                    default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    ap.add_argument("--base", type=pathlib.Path, required=True)
    ap.add_argument("--pairs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        gen_scans.scanned_pdf(root / "scan.pdf", [gen_scans.page_lines(1)])
        time.sleep(2.2)
        a, b = [], []
        for i in range(args.pairs + 1):
            ta = second_read(pathlib.Path(args.build).resolve(), root)
            tb = second_read(args.base.resolve(), root)
            if i:  # the first pair warms up
                a.append(ta)
                b.append(tb)
    ratios = [x / y for x, y in zip(a, b)]
    print(f"| second read of an OCR'd page (toolfs-mcp) | A {1000 * statistics.median(a):.1f} ms"
          f" | B {1000 * statistics.median(b):.1f} ms | A/B {statistics.median(ratios):.4f}"
          f" | {args.pairs} pairs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
