# SPDX-License-Identifier: MIT
"""corpus.py - the benchmark's corpus, generated deterministically (no network, stdlib only plus
the vips CLI for the JPEG): a 19 MB PNG, a 50 MB log, a 1 GiB file, a 30-page PDF with text and
drawings, a 4000x3000 JPEG, an 8000x8000 screenshot-like PNG and a copy of /usr/include."""
import pathlib
import random
import shutil
import struct
import subprocess
import zlib

VERSION = "2"  # bump when the corpus changes, so stale corpora are regenerated


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png(path: pathlib.Path, width: int, height: int, seed: int) -> None:
    """An RGB PNG of noise (incompressible, so the file is ~3 bytes per pixel)."""
    rng = random.Random(seed)
    row_bytes = width * 3
    block = rng.randbytes(row_bytes * 64)
    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter: none
        start = (y * 7919 % 64) * row_bytes
        raw += block[start:start + row_bytes]
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(bytes(raw), 1)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr))
        for at in range(0, len(data), 1 << 20):
            f.write(_chunk(b"IDAT", data[at:at + (1 << 20)]))
        f.write(_chunk(b"IEND", b""))


def write_screenshot(path: pathlib.Path, width: int, height: int, seed: int) -> None:
    """An RGB PNG that looks like a screenshot of a large display: a dark side bar, a title bar,
    light panels and lines of "text" (runs of dark pixels in words), so it compresses as
    screenshots do (a few bytes per hundred pixels), unlike write_png's noise."""
    rng = random.Random(seed)
    bar = width // 7
    background = bytes((246, 247, 249))
    title = bar * bytes((43, 45, 49)) + (width - bar) * bytes((60, 110, 200))
    plain = bar * bytes((43, 45, 49)) + (width - bar) * background
    comp = zlib.compressobj(6)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        pending = bytearray()
        y = 0
        while y < height:
            if y < 96:
                rows = [title] * min(96, height - y)
            else:
                line = bytearray(plain)
                x = bar + 40 + rng.randrange(0, 200)
                end = width - 40 - rng.randrange(0, width // 3)
                while x < end:
                    word = rng.randrange(12, 90)
                    ink = bytes((30, 30, 30)) if rng.random() < 0.9 else bytes((170, 40, 40))
                    line[3 * x:3 * (x + word)] = ink * word
                    x += word + rng.randrange(6, 14)
                line = bytes(line[:3 * width])
                rows = [line] * 10 + [plain] * 8
            for row in rows[:height - y]:
                pending += b"\0" + row
            y += len(rows[:height - y])
            if len(pending) > 8 << 20:
                data = comp.compress(bytes(pending))
                pending.clear()
                if data:
                    f.write(_chunk(b"IDAT", data))
        data = comp.compress(bytes(pending)) + comp.flush()
        f.write(_chunk(b"IDAT", data) + _chunk(b"IEND", b""))


def write_log(path: pathlib.Path, size: int, seed: int) -> int:
    """A server log of about size bytes; returns its line count."""
    rng = random.Random(seed)
    levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
    words = ["request", "handled", "cache", "miss", "user", "session", "timeout", "upstream",
             "GET", "POST", "/api/v1/items", "/healthz", "latency", "bytes", "retry"]
    lines, total, n = [], 0, 0
    with open(path, "w") as f:
        while total < size:
            t = n * 37
            line = (f"2024-05-{1 + n // 200000:02d}T{t // 3600000 % 24:02d}:{t // 60000 % 60:02d}:"
                    f"{t // 1000 % 60:02d}.{t % 1000:03d}Z {rng.choice(levels):5} "
                    f"worker-{rng.randrange(16):02d} "
                    + " ".join(rng.choice(words) for _ in range(rng.randrange(1, 5)))
                    + f" id={rng.getrandbits(32):08x}\n")
            lines.append(line)
            total += len(line)
            n += 1
            if len(lines) == 10000:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))
    return n


def write_big(path: pathlib.Path, size: int, seed: int) -> None:
    block = random.Random(seed).randbytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(block)


def _pdf_page_stream(page: int, rng: random.Random) -> bytes:
    ops = []
    for i in range(12):  # coloured boxes and lines: something to render
        r, g, b = (rng.random() for _ in range(3))
        x, y = rng.randrange(40, 480), rng.randrange(60, 700)
        ops.append(f"{r:.3f} {g:.3f} {b:.3f} rg {x} {y} {rng.randrange(20, 120)} "
                   f"{rng.randrange(10, 80)} re f")
        ops.append(f"{b:.3f} {r:.3f} {g:.3f} RG 2 w {x} {y} m {rng.randrange(40, 560)} "
                   f"{rng.randrange(60, 760)} l S")
    ops.append("0 0 0 rg BT /F1 18 Tf 50 780 Td (Quarterly report, page %d) Tj ET" % page)
    for line in range(40):
        words = " ".join(rng.choice(["revenue", "growth", "region", "quarter", "margin",
                                     "forecast", "cost", "units", "north", "south"])
                         for _ in range(9))
        ops.append(f"BT /F1 10 Tf 50 {750 - line * 17} Td ({line + 1}. {words}) Tj ET")
    return "\n".join(ops).encode()


def write_pdf(path: pathlib.Path, pages: int, seed: int) -> None:
    """A PDF of pages A4 pages, each with a title, 40 lines of text and coloured drawings."""
    rng = random.Random(seed)
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
            3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for p in range(pages):
        page_id, content_id = 4 + 2 * p, 5 + 2 * p
        kids.append(f"{page_id} 0 R")
        stream = _pdf_page_stream(p + 1, rng)
        objs[page_id] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                         f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
                         ).encode()
        objs[content_id] = (f"<< /Length {len(stream)} >>\nstream\n".encode() + stream
                            + b"\nendstream")
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>".encode()
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objs):
        offsets[num] = len(out)
        out += f"{num} 0 obj\n".encode() + objs[num] + b"\nendobj\n"
    xref = len(out)
    n = max(objs) + 1
    out += f"xref\n0 {n}\n0000000000 65535 f \n".encode()
    for num in range(1, n):
        out += f"{offsets[num]:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {n} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def write_jpeg(path: pathlib.Path, width: int, height: int) -> None:
    """A smooth photo-like JPEG made from a generated PPM with the vips CLI."""
    ppm = path.with_suffix(".ppm")
    row = bytearray()
    rows = []
    for y in range(0, height, 1):
        if y % 8 == 0:
            row = bytearray()
            for x in range(width):
                row += bytes(((x * 255 // width) ^ (y >> 3) & 0xff,
                              (y * 255 // height + (x >> 4)) & 0xff,
                              ((x + y) >> 3) & 0xff))
        rows.append(bytes(row))
    ppm.write_bytes(f"P6\n{width} {height}\n255\n".encode() + b"".join(rows))
    subprocess.run(["vips", "copy", str(ppm), f"{path}[Q=90]"], check=True)
    ppm.unlink()


def generate(src: pathlib.Path, include_dir: str = "/usr/include") -> None:
    """Fills src with the corpus unless it already holds this version of it."""
    stamp = src / ".corpus-version"
    if stamp.exists() and stamp.read_text() == VERSION:
        return
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    write_png(src / "photo.png", 2600, 2440, seed=1)        # ~19 MB
    write_log(src / "server.log", 50 * 1000 * 1000, seed=2)  # 50 MB
    write_big(src / "big.bin", 1 << 30, seed=3)              # 1 GiB
    write_pdf(src / "report.pdf", 30, seed=4)
    write_jpeg(src / "camera.jpg", 4000, 3000)
    write_screenshot(src / "screen.png", 8000, 8000, seed=5)
    shutil.copytree(include_dir, src / "include", symlinks=True)
    stamp.write_text(VERSION)
