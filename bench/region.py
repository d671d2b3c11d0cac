#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Region selectors (issue 26 item 3) against Node + sharp doing the same crop and fit
(bench/region_peer.js: extract + resize inside 2000 px without enlarging + toBuffer, PNG for
a PNG source, JPEG quality 85 for a JPEG source, base64 in a JSON result).

Fixtures, generated here with Pillow: an 8000x8000 PNG (a gradient under 4000 labels, a UI
screenshot's kind of content) and a 4000x3000 JPEG (a blurred noisy photo, quality 90).

Two tables, each workload measured in alternating pairs (one warm-up pair not counted), medians
and the median of the per-pair ratios, of wall time and of CPU time (user + system of the
process that does the work: the child process cold, the toolfs daemon or the node peer warm; on a
shared machine the CPU times are the steadier figure):
- cold: one process per region, `toolfs-read --select R FILE` against `node region_peer.js FILE
  ...` (each pays its own start: a CLI or a harness that spawns a reader per call);
- warm: a region sibling `cat`ed from a toolfs mount (`-o hide_siblings`, so no read-ahead; a
  new rectangle each time, so never from the cache) against a warm `region_peer.js --serve` (a
  harness with sharp loaded).

Installs sharp with `npm ci` in bench/ (bench/package.json, as bench/run) when bench/node_modules is missing.

    bench/region.py [PAIRS]          (default 7 pairs)
"""
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageDraw, ImageFilter

REPO = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
NODE_DIR = REPO / "bench"
PEER = NODE_DIR / "region_peer.js"
MAX_DIM = 2000  # toolfs-read's image_max_dim default; the peer fits inside the same box

# (file, region W, H, X, Y, what it shows)
WORKLOADS = [
    ("big.png", 1600, 1200, 4000, 5000, "8000x8000 PNG, 1600x1200 region shown at its size"),
    ("big.png", 6000, 6000, 1000, 1000, "8000x8000 PNG, 6000x6000 region fitted to 2000x2000"),
    ("big.jpg", 1200, 900, 1500, 1000, "4000x3000 JPEG, 1200x900 region shown at its size"),
    ("big.jpg", 3600, 2400, 200, 300, "4000x3000 JPEG, 3600x2400 region fitted to 2000x1333"),
]


def make_fixtures(folder: pathlib.Path) -> None:
    size = 8000
    x = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_270).resize((size, size))
    y = Image.linear_gradient("L").resize((size, size))
    png = Image.merge("RGB", (x, y, Image.new("L", (size, size), 200)))
    draw = ImageDraw.Draw(png)
    for i in range(4000):
        draw.text(((i * 7919) % size, (i * 104729) % size), f"Button {i}", fill=(0, 0, 0))
    png.save(folder / "big.png", compress_level=6)
    noise = Image.effect_noise((4000, 3000), 40).convert("L")
    grad = Image.linear_gradient("L").resize((4000, 3000))
    photo = Image.merge("RGB", (Image.blend(noise, grad, 0.5), grad, noise))
    photo.filter(ImageFilter.GaussianBlur(1)).save(folder / "big.jpg", quality=90)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def process_cpu(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(cmd) -> tuple:
    """(wall, CPU) of one process running cmd."""
    c0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed, cpu = time.perf_counter() - t0, children_cpu() - c0
    if done.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {done.stderr.decode()[-300:]}")
    return elapsed, cpu


def cat(path: pathlib.Path, daemon_pid: int) -> tuple:
    """(wall, the daemon's CPU) of reading one sibling."""
    c0, t0 = process_cpu(daemon_pid), time.perf_counter()
    data = path.read_bytes()
    elapsed, cpu = time.perf_counter() - t0, process_cpu(daemon_pid) - c0
    if b'"success":true' not in data:
        raise RuntimeError(f"{path}: {data[:300]!r}")
    return elapsed, cpu


class WarmPeer:
    def __init__(self):
        self.proc = subprocess.Popen(["node", str(PEER), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def read(self, line: str) -> tuple:
        c0, t0 = process_cpu(self.proc.pid), time.perf_counter()
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        elapsed, cpu = time.perf_counter() - t0, process_cpu(self.proc.pid) - c0
        if not answer.startswith(b"ok "):
            raise RuntimeError(f"peer failed on {line}: {answer!r}")
        return elapsed, cpu

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def medians(ta: list, tb: list) -> tuple:
    return (statistics.median(ta), statistics.median(tb),
            statistics.median(p / q for p, q in zip(ta, tb)))


def pairs(n: int, a, b):
    """Alternating runs of a(i) and b(i), each (wall, CPU); pair 0 warms up. Medians of each and
    of the per-pair ratios, for wall and for CPU."""
    runs = []
    for i in range(n + 1):
        x, y = a(i), b(i)
        if i:
            runs.append((x, y))
    wall = medians([x[0] for x, _ in runs], [y[0] for _, y in runs])
    cpu = medians([x[1] for x, _ in runs], [y[1] for _, y in runs])
    return wall, cpu


def row(name: str, result) -> str:
    (a, b, ratio), (ca, cb, cratio) = result
    return (f"| {name} | {a * 1000:.0f} ms | {b * 1000:.0f} ms | {ratio:.2f}x "
            f"| {ca * 1000:.0f} ms | {cb * 1000:.0f} ms | {cratio:.2f}x |")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    if not (NODE_DIR / "node_modules" / "sharp").is_dir():
        print("bench: installing sharp (npm ci in bench/)", file=sys.stderr)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    cli = BUILD / "cli" / "toolfs-read"
    daemon = BUILD / "fs" / "toolfs"
    with tempfile.TemporaryDirectory() as tmp:
        src, mnt = pathlib.Path(tmp) / "src", pathlib.Path(tmp) / "mnt"
        src.mkdir()
        mnt.mkdir()
        make_fixtures(src)
        header = ("| workload | toolfs wall | Node + sharp wall | ratio | toolfs CPU "
                  "| Node + sharp CPU | ratio |\n|---|---|---|---|---|---|---|")
        print(f"cold: one process per region, {n} pairs\n{header}")
        for name, w, h, x, y, what in WORKLOADS:
            def ours(i, name=name, w=w, h=h, x=x, y=y):
                return run([cli, "--select", f"{w}x{h}+{x + i}+{y}", src / name])

            def peer(i, name=name, w=w, h=h, x=x, y=y):
                return run(["node", PEER, src / name, *map(str, (w, h, x + i, y, MAX_DIM))])
            print(row(what, pairs(n, ours, peer)), flush=True)
        subprocess.run([daemon, "-o", "hide_siblings", src, mnt], check=True)
        pid = int(subprocess.run(["pgrep", "-n", "-f", f"{daemon} -o hide_siblings {src}"],
                                 capture_output=True, check=True).stdout)
        warm = WarmPeer()
        try:
            print(f"\nwarm: a mount's sibling against sharp loaded, {n} pairs\n{header}")
            for name, w, h, x, y, what in WORKLOADS:
                def ours(i, name=name, w=w, h=h, x=x, y=y):
                    return cat(mnt / f"{name}:{w}x{h}+{x + i}+{y}.tool.json", pid)

                def peer(i, name=name, w=w, h=h, x=x, y=y):
                    return warm.read(f"{src / name} {w} {h} {x + i} {y} {MAX_DIM}")
                print(row(what, pairs(n, ours, peer)), flush=True)
        finally:
            warm.close()
            subprocess.run(["fusermount3", "-u", mnt], check=False)


if __name__ == "__main__":
    main()
