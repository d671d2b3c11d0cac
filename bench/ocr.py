#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/ocr.py - OCR of a scanned PDF against the pipeline a user runs by hand (issue 26 item 1).

Generates (once, cached in the work dir) a 10-page scanned PDF with tests/fixtures/gen_scans.py
(12 pt DejaVu Sans drawn with Pillow at 300 dpi, wrapped into a PDF with no text layer), then
times toolfs-read on it (A: the default view, pages 1-10 OCR'd, with max_render_ms raised so
that the budget does not cut the window) against the peer (B: for each page in turn,
`pdftoppm -r 300 -gray` then `tesseract PAGE.pgm stdout`), each a fresh process tree,
alternately: a warm-up pair, then N pairs A B A B ...; reports both medians, the median of the
per-pair ratios A/B, and the word accuracy of each side on the same pages (words right / words,
against the words drawn). The peer runs in the caller's environment as a user's shell would
(OMP_THREAD_LIMIT removed); toolfs sets its own (docs/SPEC.md §3 "OCR"). --peer-omp1 gives the
peer OMP_THREAD_LIMIT=1 too (a tuned peer: one thread per tesseract process).

Usage: bench/ocr.py [--build DIR] [--work DIR] [--pairs N] [--peer-omp1]
"""
import argparse
import datetime
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

VERSION = "1"
PAGES = 10


PEER_OMP1 = False


def peer_env() -> dict:
    env = dict(os.environ)
    env.pop("OMP_THREAD_LIMIT", None)
    if PEER_OMP1:
        env["OMP_THREAD_LIMIT"] = "1"
    return env


def run_toolfs(tool: pathlib.Path, pdf: pathlib.Path) -> tuple:
    """(seconds, content) of toolfs-read's default view of pdf."""
    t0 = time.perf_counter()
    env = dict(os.environ)
    env.pop("OMP_THREAD_LIMIT", None)
    out = subprocess.run([str(tool), "--max_render_ms", "600000", str(pdf)], capture_output=True,
                         check=True, env=env).stdout
    elapsed = time.perf_counter() - t0
    doc = json.loads(out)
    assert doc["success"] and len(doc["metadata"]["ocr"]["pages"]) == PAGES, doc["shortResult"]
    return elapsed, doc["content"]


def run_peer(pdf: pathlib.Path, tmp: pathlib.Path) -> tuple:
    """(seconds, text): pdftoppm then tesseract, page after page."""
    texts = []
    t0 = time.perf_counter()
    for page in range(1, PAGES + 1):
        prefix = tmp / f"page{page}"
        subprocess.run(["pdftoppm", "-r", "300", "-gray", "-f", str(page), "-l", str(page),
                        "-singlefile", str(pdf), str(prefix)], check=True, env=peer_env())
        texts.append(subprocess.run(["tesseract", f"{prefix}.pgm", "stdout"],
                                    capture_output=True, check=True,
                                    env=peer_env()).stdout.decode())
    elapsed = time.perf_counter() - t0
    return elapsed, "\n".join(texts)


def accuracy(truth_pages: list, text: str) -> tuple:
    """(words right, words): each word drawn counts once when found in text (as a multiset)."""
    found = {}
    for w in text.split():
        found[w] = found.get(w, 0) + 1
    right = total = 0
    for lines in truth_pages:
        for w in " ".join(lines).split():
            total += 1
            if found.get(w, 0) > 0:
                found[w] -= 1
                right += 1
    return right, total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    ap.add_argument("--work", default=pathlib.Path(tempfile.gettempdir()) / "toolfs-bench-ocr")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--peer-omp1", action="store_true")
    args = ap.parse_args()
    global PEER_OMP1
    PEER_OMP1 = args.peer_omp1
    work = pathlib.Path(args.work) / f"v{VERSION}"
    if not (work / "scans.json").exists():
        gen_scans.generate(work, PAGES)
    truth = json.loads((work / "scans.json").read_text())["scan.pdf"]
    pdf = work / "scan.pdf"
    tool = pathlib.Path(args.build) / "cli" / "toolfs-read"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="toolfs-bench-ocr-"))
    run_toolfs(tool, pdf)
    run_peer(pdf, tmp)
    a_runs, b_runs = [], []
    for _ in range(args.pairs):
        a_runs.append(run_toolfs(tool, pdf))
        b_runs.append(run_peer(pdf, tmp))
    ratio = statistics.median(a[0] / b[0] for a, b in zip(a_runs, b_runs))
    a_right, total = accuracy(truth, a_runs[-1][1])
    b_right, _ = accuracy(truth, b_runs[-1][1])
    print(f"bench/ocr.py on {os.uname().nodename} ({os.cpu_count()} CPUs), "
          f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {args.pairs} pairs; A = toolfs-read "
          f"(default view), B = pdftoppm -r 300 -gray + tesseract per page"
          f"{' (OMP_THREAD_LIMIT=1)' if PEER_OMP1 else ''}\n")
    print("| workload | A median (s) | B median (s) | A/B (median of pairs) | A words right | "
          "B words right |")
    print("|---|---|---|---|---|---|")
    print(f"| {PAGES}-page scanned PDF ({pdf.stat().st_size / 2**20:.1f} MiB, 300 dpi) | "
          f"{statistics.median(a[0] for a in a_runs):.2f} | "
          f"{statistics.median(b[0] for b in b_runs):.2f} | {ratio:.3f} | "
          f"{a_right}/{total} ({a_right / total:.1%}) | {b_right}/{total} ({b_right / total:.1%}) |")
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
