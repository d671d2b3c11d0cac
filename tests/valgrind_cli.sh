#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs toolfs-read under valgrind memcheck over a representative set of generated fixtures (text,
# image, fitted image, OCR'd image, notebook, PDF page render, Office documents, and failures); any memcheck
# error or definite leak fails. Usage: tests/valgrind_cli.sh [BUILD_DIR]   (default: build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cli="$repo/${1:-build}/cli/toolfs-read"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$work" "$repo/tests/fixtures" <<'PY'
import json, pathlib, sys
import cairo
from PIL import Image, ImageDraw, ImageFont
out = pathlib.Path(sys.argv[1])
(out / "hello.py").write_text("".join(f"print({i})\n" for i in range(3000)))
(out / "latin1.txt").write_bytes("caf\xe9 na\xefve\n".encode("latin-1") * 50)
Image.new("RGB", (64, 48), (1, 2, 3)).save(out / "small.png")
Image.new("RGB", (3000, 1200), (200, 10, 10)).save(out / "big.png")
# Twice the fit's 2000 px and more: shrunk by 2 as it is decoded (ISA-L, png_shrink.c).
wide = Image.new("RGBA", (4200, 300), (200, 10, 10, 255))
wide.paste((10, 200, 10, 90), (0, 0, 2000, 100))
wide.save(out / "wide.png")
# A line of text for ocr=on (Tesseract under memcheck: seconds for this size)
text = Image.new("RGB", (400, 80), (255, 255, 255))
ImageDraw.Draw(text).text((10, 20), "hello valgrind world", fill=(0, 0, 0), font=ImageFont.truetype(
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 28))
text.save(out / "text.png")
Image.new("RGB", (300, 200), (9, 9, 9)).save(out / "photo.jpg", quality=80)
(out / "nb.ipynb").write_text(json.dumps({
    "cells": [{"cell_type": "markdown", "source": "# T", "metadata": {}},
              {"cell_type": "code", "source": "1+1", "metadata": {}, "execution_count": 1,
               "outputs": [{"output_type": "execute_result", "execution_count": 1,
                            "data": {"text/plain": "2"}, "metadata": {}}]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
surface = cairo.PDFSurface(str(out / "doc.pdf"), 300, 400)
ctx = cairo.Context(surface)
for page in range(3):
    ctx.move_to(20, 50)
    ctx.show_text(f"page {page + 1}")
    ctx.show_page()
surface.finish()
(out / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
(out / "blob.bin").write_bytes(bytes(range(256)) * 8)
(out / "dir").mkdir()
sys.path.insert(0, sys.argv[2])
import gen_office
for name, make in (("basic.docx", gen_office.basic_docx), ("tracked.docx", gen_office.tracked_docx),
                   ("basic.xlsx", gen_office.basic_xlsx), ("deck.pptx", gen_office.deck_pptx)):
    (out / name).write_bytes(make())
(out / "laughs.docx").write_bytes(gen_office.docx_with_document(gen_office.LAUGHS))
(out / "legacy.doc").write_bytes(gen_office.ole2("WordDocument"))
PY

status=0
run() {
  rc=0
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --suppressions="$repo/tests/valgrind.supp" \
    "$cli" "$@" >/dev/null 2>"$work/err" || rc=$?
  # 0 and 1 are results; 99 is memcheck's verdict, anything else a crash or usage error. The one
  # exception: libhwy (loaded by libvips for downscaling) times with an instruction valgrind
  # cannot run (SIGILL in hwy::platform::TimerResolution, at library init, not toolfs code).
  if [ "$rc" -eq 132 ] && grep -q 'hwy::platform::TimerResolution' "$work/err"; then
    echo "valgrind_cli: toolfs-read $*: skipped, valgrind cannot run libhwy's init" >&2
    rc=0
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "valgrind_cli: toolfs-read $* exited $rc" >&2
    cat "$work/err" >&2
    status=1
  fi
}
cd "$work"
run hello.py
run --select 2990- hello.py
run latin1.txt
run small.png
run big.png
run wide.png
run photo.jpg
run --format anthropic big.png
run --ocr on text.png
run nb.ipynb
run --format mcp nb.ipynb
run doc.pdf
run --select 2 doc.pdf
run corrupt.png
run blob.bin
run dir
run missing.txt
run --select 99999 hello.py
run basic.docx
run tracked.docx
run --select 3.20- basic.xlsx
run --format anthropic deck.pptx
run laughs.docx
run legacy.doc
# A read that loads no module (uchardet, vips, poppler and Office are) gives everything back at exit (tr_library_shutdown: spares, memos,
# libmagic's cookies): nothing in use, not only nothing lost.
for args in "hello.py" "blob.bin" "--select 2 small.png"; do
  # shellcheck disable=SC2086
  valgrind --leak-check=no "$cli" $args >/dev/null 2>"$work/err" || true
  if ! grep -q "in use at exit: 0 bytes in 0 blocks" "$work/err"; then
    echo "valgrind_cli: toolfs-read $args keeps memory at exit:" >&2
    grep "in use at exit" "$work/err" >&2 || cat "$work/err" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "valgrind_cli: clean"
exit "$status"
