#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/svg.py - an SVG read against the peer pipeline (issue 26 item 2).

Generates a 2 MB SVG scatter chart (tests/fixtures/gen_svg.py's big_chart, declared 4000x2500 so
that both sides fit it to 2000x1250), then times toolfs-read on it (A: the ToolResult with the
numbered source and the fitted PNG as base64) against `rsvg-convert -w 2000 -h 1250 FILE |
base64 -w0` (B: the same fitted PNG as base64), each a fresh process, alternately: a warm-up
pair, then N pairs A B A B ...; reports both medians of wall time and of CPU time (user +
system, children included), the median of the per-pair ratios A/B, and each side's peak RSS
(getrusage of the child, which counts toolfs's render process).

Usage: bench/svg.py [--build DIR] [--pairs N]
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
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
import gen_svg  # noqa: E402

WIDTH, HEIGHT = 2000, 1250


def run(cmd) -> tuple:
    """Runs cmd to completion (output discarded); returns (seconds, peak RSS in MiB, CPU seconds
    of the process and the children it waited for)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    err = proc.stderr.read().decode()[-400:]
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed: {err}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--pairs", type=int, default=15)
    args = ap.parse_args()
    reader = pathlib.Path(args.build) / "cli" / "toolfs-read"
    with tempfile.TemporaryDirectory() as tmp:
        svg = pathlib.Path(tmp) / "chart.svg"
        text = gen_svg.big_chart(2 * 1024 * 1024).replace(
            'width="1600" height="1000"', f'width="{2 * WIDTH}" height="{2 * HEIGHT}"', 1)
        svg.write_text(text)
        ours = [str(reader), str(svg)]
        peer = ["sh", "-c", f"rsvg-convert -w {WIDTH} -h {HEIGHT} '{svg}' | base64 -w0"]
        # both give a 2000x1250 PNG
        got = json.loads(subprocess.run(ours, capture_output=True, check=True).stdout)
        assert (got["images"][0]["width"], got["images"][0]["height"]) == (WIDTH, HEIGHT), got[
            "shortResult"]
        run(ours)  # warm-up pair
        run(peer)
        a_times, b_times, ratios, a_rss, b_rss, a_cpu, b_cpu = [], [], [], [], [], [], []
        for _ in range(args.pairs):
            a, ra, ca = run(ours)
            b, rb, cb = run(peer)
            a_times.append(a)
            b_times.append(b)
            ratios.append(a / b)
            a_rss.append(ra)
            b_rss.append(rb)
            a_cpu.append(ca)
            b_cpu.append(cb)
    print(f"SVG chart {svg.stat().st_size if svg.exists() else len(text)} bytes, "
          f"{text.count('<circle')} circles, fitted to {WIDTH}x{HEIGHT}; {args.pairs} pairs")
    print(f"toolfs-read            median {statistics.median(a_times) * 1000:8.1f} ms, "
          f"CPU {statistics.median(a_cpu) * 1000:6.0f} ms, peak RSS {max(a_rss):6.1f} MiB")
    print(f"rsvg-convert | base64  median {statistics.median(b_times) * 1000:8.1f} ms, "
          f"CPU {statistics.median(b_cpu) * 1000:6.0f} ms, peak RSS {max(b_rss):6.1f} MiB")
    print(f"ratio (median of per-pair A/B) {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
