#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""isolation.py - what moving poppler and libvips into a worker process like the media worker
would cost per read (issue 28 item 3), measured beside the reads themselves in one invocation:

  in process  toolfs-mcp (warm, as the mount is) reading page 1 of a generated 3-page PDF with its
              render (`pages: "1"`), and fitting a generated 4000x3000 PNG: a fresh copy of the
              file for every read, so nothing comes from a cache; median ms and the result's size
  warm        the worker round trip a read would add: a descriptor sent with SCM_RIGHTS over a
              socketpair to a child process that answers with a payload of the read's result
              size (Python on both sides, so an upper bound of what C pays; the media worker's
              own warm round trip in C is in docs/PERFORMANCE.md, issue 28)
  cold        starting a worker that maps the libraries: `pdftocairo -v` (poppler + cairo) and
              `vips --version` (libvips) against `true` (a process start alone), alternately

    bench/isolation.py [--build BUILD] [--rounds N]
"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from media import Mcp, alternate, timed  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent


def make_files(work: pathlib.Path):
    import cairo
    from PIL import Image, ImageDraw

    pdf = work / "doc.pdf"
    surface = cairo.PDFSurface(str(pdf), 612, 792)
    ctx = cairo.Context(surface)
    for page in range(3):
        ctx.set_font_size(11)
        for line in range(50):
            ctx.move_to(50, 60 + line * 14)
            ctx.show_text(f"page {page + 1} line {line + 1}: the quick brown fox jumps over")
        ctx.show_page()
    surface.finish()
    png = work / "photo.png"
    img = Image.new("RGB", (4000, 3000), "white")
    draw = ImageDraw.Draw(img)
    for i in range(0, 4000, 40):
        draw.line([(i, 0), (4000 - i, 3000)], fill=(i % 255, 80, 160), width=3)
    img.save(png)
    return pdf, png


def copies(src: pathlib.Path, n: int) -> list:
    out = []
    for i in range(n):
        dst = src.with_name(f"{src.stem}-{i}{src.suffix}")
        shutil.copyfile(src, dst)
        out.append(dst)
    return out


def in_process(server: Mcp, files: list, extra: dict):
    """Median ms of reading each file once, and the size of one result."""
    times, size = [], 0
    for f in files:
        t0 = time.perf_counter()
        got = server.call("tools/call", {"name": "read",
                                         "arguments": {"file_path": str(f), **extra}})
        times.append((time.perf_counter() - t0) * 1000)
        size = len(json.dumps(got))
    return statistics.median(times), size


# The worker stand-in: takes a descriptor and a size, closes the descriptor, answers size bytes.
CHILD = r"""
import os, socket, sys
s = socket.socket(fileno=int(sys.argv[1]))
while True:
    msg, fds, _, _ = socket.recv_fds(s, 64, 1)
    if not msg:
        break
    for fd in fds:
        os.close(fd)
    s.sendall(b"x" * int(msg))
"""


def warm_round_trips(sizes: dict, rounds: int, probe: pathlib.Path) -> dict:
    """Median ms of one request (a descriptor and a size) and its answer, for each size."""
    parent, child = socket.socketpair()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(child.fileno())],
                            pass_fds=[child.fileno()], stdin=subprocess.DEVNULL)
    child.close()
    out = {}
    with open(probe, "rb") as f:
        for key, size in sizes.items():
            times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                socket.send_fds(parent, [str(size).encode()], [f.fileno()])
                left = size
                while left:
                    left -= len(parent.recv(min(left, 1 << 20)))
                times.append((time.perf_counter() - t0) * 1000)
            out[key] = statistics.median(times)
    parent.close()
    proc.wait()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        pdf, png = make_files(work)
        server = Mcp(build / "mcp" / "toolfs-mcp", work)
        server.read(pdf, pages="1")  # load the modules once, as a running server has
        server.read(png)
        pdf_ms, pdf_size = in_process(server, copies(pdf, args.rounds), {"pages": "1"})
        png_ms, png_size = in_process(server, copies(png, args.rounds), {})
        server.close()
        warm = warm_round_trips({"pdf": pdf_size, "png": png_size}, args.rounds, pdf)
    true_ms, pop_ms = alternate(args.rounds, lambda: timed(["true"]),
                                lambda: timed(["pdftocairo", "-v"]))
    true2_ms, vips_ms = alternate(args.rounds, lambda: timed(["true"]),
                                  lambda: timed(["vips", "--version"]))
    print("| read | in process (toolfs-mcp, warm) | result | warm worker round trip (upper bound)"
          " | share | cold worker start (libraries mapped) |")
    print("|---|---|---|---|---|---|")
    for label, key, ms, size, start, base in (
            ("PDF page 1 with its render", "pdf", pdf_ms, pdf_size, pop_ms, true_ms),
            ("PNG 4000x3000 fitted", "png", png_ms, png_size, vips_ms, true2_ms)):
        print(f"| {label} | {ms:.1f} ms | {size / 1024:.0f} KiB | {warm[key]:.2f} ms"
              f" | {100 * warm[key] / ms:.1f}% | {1000 * (start - base):.1f} ms"
              f" over a bare process start |")

if __name__ == "__main__":
    main()
