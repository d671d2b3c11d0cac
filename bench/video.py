#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/video.py - the contact sheet of issue 28: a 3x3 sheet of a 10-minute 1080p H.264 file
(testsrc2, 30 fps, a keyframe every 250 frames, made once with the ffmpeg CLI and cached in the
work dir) by toolfs's sheet (A: tests/unit's media_video_driver, which runs media_video_sheet
from seeking to the keyframe before each cell's time) against the ffmpeg CLI making the same
tile (B: `-vf fps=9/600,scale=W:H,tile=3x3 -frames:v 1`, which decodes the whole file), both
writing a PPM to stdout, each a fresh process, alternately: a warm-up pair, then N pairs
A B A B ...; reports both medians, the median of the per-pair ratios A/B and each side's peak RSS.
With --reader toolfs-read, A is the whole read instead: `toolfs-read --image_max_dim 1200
--select T0-600` (the sandboxed worker, the sheet PNG-encoded and base64'd in the ToolResult).

Usage: bench/video.py [--build DIR] [--work DIR] [--pairs N] [--reader driver|toolfs-read]
"""
import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from office import compare  # noqa: E402  (alternating pairs, medians, the table row)

REPO = pathlib.Path(__file__).resolve().parent.parent
SECONDS = 600
COLS = ROWS = 3
CELL_W, CELL_H = 400, 225  # a 1200x675 sheet: 1080p cells fitted in 1200x1200 / 3


def make_video(path: pathlib.Path) -> None:
    tmp = path.with_suffix(".tmp.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=1920x1080:rate=30", "-t", str(SECONDS), "-c:v", "libx264",
                    "-preset", "ultrafast", "-g", "250", "-pix_fmt", "yuv420p", str(tmp)],
                   check=True)
    tmp.rename(path)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    ap.add_argument("--work", default=pathlib.Path(tempfile.gettempdir()) / "toolfs-bench-video")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--reader", choices=("driver", "toolfs-read"), default="driver")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    video = work / f"clip-1080p-{SECONDS}s.mp4"
    if not video.exists():
        make_video(video)
    driver = pathlib.Path(args.build) / "tests" / "unit" / "media_video_driver"
    tool = pathlib.Path(args.build) / "cli" / "toolfs-read"
    n = COLS * ROWS
    size = str(COLS * CELL_W)
    workloads = []
    # [0, 600): every cell's time is a multiple of 2000 frames, a keyframe (-g 250), the best
    # case; [5, 600): cells 66.1 s apart fall anywhere in their GOP, ~125 frames decoded each
    for t0 in (0, 5):
        span = SECONDS - t0
        a_cmd = [str(driver), "sheet", str(video), str(t0), str(SECONDS), str(COLS), str(ROWS),
                 size, size]
        if args.reader == "toolfs-read":
            a_cmd = [str(tool), "--image_max_dim", size, "--select", f"{t0}-{SECONDS}",
                     str(video)]
        b_cmd = ["ffmpeg", "-nostdin", "-v", "error", "-ss", str(t0), "-i", str(video), "-vf",
                 f"fps={n}/{span},scale={CELL_W}:{CELL_H},tile={COLS}x{ROWS}", "-frames:v", "1",
                 "-f", "image2pipe", "-c:v", "ppm", "-"]
        workloads.append((f"3x3 sheet of [{t0}, {SECONDS}) s, 1080p H.264 "
                          f"({video.stat().st_size / 2**20:.0f} MiB)", a_cmd, b_cmd))
    print(f"bench/video.py on {os.uname().nodename}, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} "
          f"UTC, {args.pairs} pairs; A = "
          f"{'toolfs-read' if args.reader == 'toolfs-read' else 'media_video_sheet (driver)'}, "
          f"B = ffmpeg CLI fps+scale+tile\n")
    print("| workload | A median (s) | B median (s) | A/B (median of pairs) | A peak RSS (MiB) "
          "| B peak RSS (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, a_cmd, b_cmd in workloads:
        compare(name, a_cmd, b_cmd, args.pairs, digits=4)
    return 0


if __name__ == "__main__":
    sys.exit(main())
