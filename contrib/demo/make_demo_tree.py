#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the demo tree the README's mount command shows when no path is given: a source file, a
PNG, an SVG, a short WAV tone, a video with subtitles, a notebook with a plot, a PDF, a scanned
page (a PDF with no text layer, read by OCR), a Word document, a workbook and a broken image.
Every file is dated DEMO_TIME (UTC), so the README's examples print exactly what it shows.
Deterministic but for the zip timestamps of the Office files; needs Pillow, nbformat,
python3-cairo, python3-docx, python3-openpyxl and the ffmpeg CLI (Debian packages)."""
import base64
import datetime
import io
import math
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import wave

import cairo
import docx
import nbformat
import openpyxl
from PIL import Image, ImageDraw, ImageFont

DEMO_TIME = datetime.datetime(2026, 1, 1)
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

HELLO = '''"""A tiny program to read through toolfs."""


def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("toolfs"))
'''


def plot_png(width=480, height=320) -> bytes:
    """A sine curve drawn with Pillow, standing in for a matplotlib figure."""
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    draw.line([(40, height - 40), (width - 20, height - 40)], fill="black", width=2)
    draw.line([(40, 20), (40, height - 40)], fill="black", width=2)
    points = [(40 + x, (height - 40) / 2 + 10 - 100 * math.sin(x / 40.0)) for x in range(width - 60)]
    draw.line(points, fill=(31, 119, 180), width=3)
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def logo_png() -> bytes:
    img = Image.new("RGBA", (256, 256), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle([16, 16, 240, 240], radius=40, fill=(40, 44, 52, 255))
    draw.text((70, 110), "toolfs", fill=(97, 218, 251, 255))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


DIAGRAM_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="320" height="120" viewBox="0 0 320 120">
  <rect x="10" y="30" width="120" height="60" rx="8" fill="#282c34"/>
  <text x="70" y="66" font-family="DejaVu Sans" font-size="16" fill="#61dafb" text-anchor="middle">source</text>
  <path d="M135 60 H185" stroke="#282c34" stroke-width="4"/>
  <rect x="190" y="30" width="120" height="60" rx="8" fill="#61dafb"/>
  <text x="250" y="66" font-family="DejaVu Sans" font-size="16" fill="#282c34" text-anchor="middle">toolfs</text>
</svg>
"""


def write_tone(path: pathlib.Path, seconds=2, rate=16000):
    """A 440 Hz tone, a second of silence in the middle (the loudness outline shows it)."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        samples = (0 if rate // 2 <= i < rate * 3 // 2
                   else int(12000 * math.sin(i * 2 * math.pi * 440 / rate))
                   for i in range(seconds * rate))
        w.writeframes(b"".join(struct.pack("<h", v) for v in samples))


def notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A plot\nThe output below is an image the model can see."),
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nimport numpy as np\n\n"
            "x = np.linspace(0, 10)\nprint(len(x))",
            execution_count=1,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="50\n")]),
        nbformat.v4.new_code_cell(
            "plt.plot(x, np.sin(x))\nplt.show()", execution_count=2,
            outputs=[nbformat.v4.new_output(
                "display_data",
                data={"image/png": base64.b64encode(plot_png()).decode(),
                      "text/plain": "<Figure size 480x320>"})]),
        nbformat.v4.new_code_cell(
            "1 / 0", execution_count=3,
            outputs=[nbformat.v4.new_output(
                "error", ename="ZeroDivisionError", evalue="division by zero",
                traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"])]),
    ]
    for i, cell in enumerate(nb.cells, 1):
        cell.id = f"cell-{i}"  # nbformat draws random ids; fixed ones keep the file deterministic
    return nbformat.writes(nb)


def new_pdf(path: pathlib.Path) -> cairo.PDFSurface:
    """An A4 PDF dated DEMO_TIME (cairo would date it now)."""
    surface = cairo.PDFSurface(str(path), 595, 842)
    for key in (cairo.PDFMetadata.CREATE_DATE, cairo.PDFMetadata.MOD_DATE):
        surface.set_metadata(key, DEMO_TIME.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return surface


def write_pdf(path: pathlib.Path, pages=3):
    surface = new_pdf(path)
    ctx = cairo.Context(surface)
    for page in range(1, pages + 1):
        ctx.select_font_face("sans-serif")
        ctx.set_font_size(24)
        ctx.move_to(72, 100)
        ctx.show_text(f"toolfs demo report, page {page}")
        ctx.set_font_size(12)
        ctx.move_to(72, 140)
        ctx.show_text("Each page has its own text; a page selector renders it as an image.")
        ctx.show_page()
    surface.finish()


# The subtitles of clip.mp4: (start ms, end ms, text).
CLIP_CUES = [
    (0, 1500, "A test pattern, three seconds long"),
    (1500, 3000, "toolfs reads these subtitles as timed lines"),
]


def srt_time(ms: int) -> str:
    return f"00:00:{ms // 1000:02d},{ms % 1000:03d}"


def write_clip(path: pathlib.Path, seconds=3):
    """Three seconds of ffmpeg's test pattern (H.264, 160x120, 10 fps) with a mov_text track."""
    srt = "".join(f"{i}\n{srt_time(start)} --> {srt_time(end)}\n{text}\n\n"
                  for i, (start, end, text) in enumerate(CLIP_CUES, 1))
    with tempfile.NamedTemporaryFile("w", suffix=".srt") as subs:
        subs.write(srt)
        subs.flush()
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y",
                        "-f", "lavfi", "-i", f"testsrc=size=160x120:rate=10:duration={seconds}",
                        "-i", subs.name, "-map", "0:v", "-map", "1:s",
                        "-c:v", "libx264", "-preset", "veryfast", "-threads", "1",
                        "-pix_fmt", "yuv420p", "-c:s", "mov_text",
                        "-metadata:s:s:0", "language=eng", "-map_metadata", "-1",
                        "-fflags", "+bitexact", "-flags", "+bitexact", str(path)], check=True)


SCAN_LINES = ["Scanned invoice 2026-001", "A page with no text layer:", "toolfs reads it by OCR."]


def write_scan(path: pathlib.Path, dpi=150):
    """One A4 page that is a picture of text, as a scanner makes it: no text layer."""
    px = dpi / 72  # pixels a point
    img = Image.new("L", (round(595 * px), round(842 * px)), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, round(20 * px))
    for i, line in enumerate(SCAN_LINES):
        draw.text((round(72 * px), round((100 + i * 36) * px)), line, font=font, fill=0)
    png = io.BytesIO()
    img.save(png, "PNG")
    png.seek(0)
    surface = new_pdf(path)
    ctx = cairo.Context(surface)
    ctx.scale(72 / dpi, 72 / dpi)
    ctx.set_source_surface(cairo.ImageSurface.create_from_png(png), 0, 0)
    ctx.paint()
    surface.finish()


def write_docx(path: pathlib.Path):
    doc = docx.Document()
    doc.add_heading("Release notes", level=1)
    doc.add_paragraph("toolfs reads Word documents as Markdown-like lines a model can cite.")
    doc.add_paragraph("Numbered text with ranges", style="List Bullet")
    doc.add_paragraph("Tables as pipe tables", style="List Bullet")
    table = doc.add_table(rows=3, cols=2)
    for row, cells in zip(table.rows, [("Reader", "Formats"), ("office", ".docx .xlsx .pptx"),
                                        ("pdf", ".pdf")]):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    doc.core_properties.created = doc.core_properties.modified = DEMO_TIME
    doc.save(str(path))


def write_xlsx(path: pathlib.Path):
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.title = "Budget"
    sheet.append(["Item", "Cost", "Share"])
    for item, cost in [("Ads", 1200), ("Servers", 3400.5), ("Coffee", 99)]:
        sheet.append([item, cost, cost / 4699.5])
    for row in sheet.iter_rows(min_row=2, min_col=3, max_col=3):
        row[0].number_format = "0.0%"
    wb.properties.created = wb.properties.modified = DEMO_TIME
    wb.save(str(path))


def main(out: pathlib.Path):
    out.mkdir(parents=True, exist_ok=True)
    (out / "src").mkdir(exist_ok=True)
    (out / "src" / "hello.py").write_text(HELLO)
    (out / "README.md").write_text("# Demo workspace\n\nEvery file here has a `.tool.json` sibling.\n")
    (out / "logo.png").write_bytes(logo_png())
    (out / "diagram.svg").write_text(DIAGRAM_SVG)
    write_tone(out / "tone.wav")
    (out / "analysis.ipynb").write_text(notebook())
    write_pdf(out / "report.pdf")
    write_scan(out / "scan.pdf")
    write_clip(out / "clip.mp4")
    write_docx(out / "notes.docx")
    write_xlsx(out / "budget.xlsx")
    png = plot_png()
    (out / "broken.png").write_bytes(png[: len(png) // 2])
    stamp = DEMO_TIME.replace(tzinfo=datetime.timezone.utc).timestamp()
    for path in out.rglob("*"):
        if path.is_file():
            os.utime(path, (stamp, stamp))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "demo-tree"))
