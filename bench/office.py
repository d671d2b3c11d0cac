#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/office.py - the Office reader against the Node peer agents use (issue 15).

Generates (once, cached in the work dir) a 200,000-row x 10-column .xlsx (~20 MB, openpyxl in
write-only mode) and a 300-page .docx (python-docx), then times toolfs-read (A) against
bench/office/peer.js (B: ExcelJS for .xlsx as Cline reads it, mammoth's extractRawText for
.docx), each a fresh process, alternately: a warm-up pair, then N pairs A B A B ...; reports the
median of the per-pair ratios A/B, both medians, and each side's peak RSS (getrusage of the
child). The peer's packages are pinned in bench/office/package-lock.json (`npm ci` there).

Usage: bench/office.py [--build DIR] [--work DIR] [--pairs N]
"""
import argparse
import datetime
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
PEER = REPO / "bench" / "office"
VERSION = "5"
ROWS, COLS = 200_000, 10
PAGES = 300


def make_xlsx(path: pathlib.Path) -> None:
    import openpyxl
    from openpyxl.cell import WriteOnlyCell
    rng = random.Random(15)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
             "kappa", "lambda", "mu"]
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Orders")
    ws.append(["id", "customer", "region", "amount", "quantity", "date", "paid", "note", "rate",
               "score"])
    day0 = datetime.date(2020, 1, 1)
    for i in range(1, ROWS + 1):
        date = WriteOnlyCell(ws, value=day0 + datetime.timedelta(days=i % 1500))
        date.number_format = "yyyy-mm-dd"
        ws.append([i, f"customer {rng.randrange(10 ** 9)}", rng.choice(words[:6]),
                   round(rng.uniform(1, 10000), 2), rng.randrange(1, 500), date,
                   rng.random() < 0.5, " ".join(rng.choice(words) for _ in range(28)),
                   rng.random(), rng.randrange(-1000, 1000)])
    wb.save(path)


def make_docx(path: pathlib.Path) -> None:
    import docx
    rng = random.Random(300)
    words = ("the of and to in is that for it as was with be by on not he this are or his from "
             "at which but have an they you were her she there been one all we their").split()
    d = docx.Document()
    for page in range(1, PAGES + 1):
        d.add_heading(f"Section {page}", 1)
        for _ in range(9):
            d.add_paragraph(" ".join(rng.choice(words) for _ in range(60)))
        if page % 10 == 0:
            t = d.add_table(rows=4, cols=3)
            for r in range(4):
                for c in range(3):
                    t.cell(r, c).text = f"r{r}c{c}"
        d.add_page_break()
    d.save(path)


def run(cmd) -> tuple:
    """Runs cmd to completion (output discarded); returns (seconds, peak RSS in MiB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()[-400:]
    proc.stderr.close()
    if proc.returncode not in (0,):
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {err}")
    return elapsed, usage.ru_maxrss / 1024


def compare(name: str, a_cmd, b_cmd, pairs: int, digits: int = 3) -> None:
    """A warm-up pair, then `pairs` pairs A B A B ...; prints the table row: both medians, the
    median of the per-pair ratios A/B (to `digits` places) and each side's peak RSS."""
    run(a_cmd)
    run(b_cmd)
    a_runs, b_runs = [], []
    for _ in range(pairs):
        a_runs.append(run(a_cmd))
        b_runs.append(run(b_cmd))
    ratio = statistics.median(a[0] / b[0] for a, b in zip(a_runs, b_runs))
    print(f"| {name} | {statistics.median(a[0] for a in a_runs):.3f} | "
          f"{statistics.median(b[0] for b in b_runs):.3f} | {ratio:.{digits}f} | "
          f"{max(a[1] for a in a_runs):.0f} | {max(b[1] for b in b_runs):.0f} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    ap.add_argument("--work", default=pathlib.Path(tempfile.gettempdir()) / "toolfs-bench-office")
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tool = pathlib.Path(args.build) / "cli" / "toolfs-read"
    if not (PEER / "node_modules").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEER, check=True)
    xlsx, docx_path = work / f"orders-{VERSION}.xlsx", work / f"report-{VERSION}.docx"
    if not xlsx.exists():
        make_xlsx(xlsx.with_suffix(".tmp.xlsx"))
        xlsx.with_suffix(".tmp.xlsx").rename(xlsx)
    if not docx_path.exists():
        make_docx(docx_path.with_suffix(".tmp.docx"))
        docx_path.with_suffix(".tmp.docx").rename(docx_path)
    node = ["node", str(PEER / "peer.js")]
    workloads = [
        (f"xlsx default view ({xlsx.stat().st_size / 2**20:.1f} MiB, {ROWS} rows x {COLS})",
         [str(tool), str(xlsx)], node + ["xlsx", str(xlsx)]),
        ("xlsx `1.150000-` (rows 150,000 on)", [str(tool), "--select", "1.150000-", str(xlsx)],
         node + ["xlsx", str(xlsx), "150000"]),
        (f"docx default view ({PAGES} pages, {docx_path.stat().st_size / 2**20:.1f} MiB)",
         [str(tool), str(docx_path)], node + ["docx", str(docx_path)]),
    ]
    print(f"bench/office.py on {os.uname().nodename}, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} "
          f"UTC, {args.pairs} pairs; A = toolfs-read, B = node peer.js (ExcelJS / mammoth)\n")
    print("| workload | A median (s) | B median (s) | A/B (median of pairs) | A peak RSS (MiB) "
          "| B peak RSS (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, a_cmd, b_cmd in workloads:
        compare(name, a_cmd, b_cmd, args.pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
