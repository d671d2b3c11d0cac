# SPDX-License-Identifier: MIT
"""Generates the seed corpora of the libFuzzer targets in tests/fuzz: small valid inputs of each
kind, one folder per target (OUTDIR/fuzz_png, OUTDIR/fuzz_notebook, ...).

    png, jpeg, gif, webp   small images in several modes made with Pillow (still and animated);
                           png_shrink: the PNGs behind a factor byte
    notebook               nbformat 4 notebooks (nbformat.v4) with every output type, an image
                           output and an attachment, an nbformat 3 notebook, an empty one
    text                   UTF-8 (LF, CRLF, CR, mixed, long lines), UTF-8/16/32 with BOMs and
                           legacy encodings (windows-1252, shift_jis, gb18030, koi8-r, iso-2022-jp)
    names                  selectors, virtual names, option settings
    confine                paths and symbolic link targets (fuzz_confine.c's layout)
    render                 ToolResults in fuzz_render's input layout
    read                   the files above under matching names (fuzz_read's layout)
    pdf                    one- and two-page PDFs drawn with python3-cairo, one uncompressed
    mcp                    toolfs-mcp sessions: JSON-RPC lines (handshake, tools/list, read
                           calls with every argument, errors, cancellation, roots answers)
    office                 tests/fixtures/gen_office.py's OOXML and ODF documents as entry lists
    media                  short tones and clips in every container of the media reader, made
                           with the ffmpeg CLI (fuzz_media: the file alone)

Targets with parameters take a fixed header of FUZZ_PARAMS (12) bytes first (see fuzz_util.h);
an all-zero header means the default view with the default limits.

Deterministic: fixed pixels, texts and ids; no timestamps; no network.

    python3 tests/fuzz/make_seeds.py OUTDIR
"""
import base64
import io
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import zipfile

import cairo
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, \
    new_raw_cell
from PIL import Image

PARAMS = 12  # FUZZ_PARAMS in fuzz_util.h


def header(*values: int) -> bytes:
    """A parameter header: the given bytes, zero-padded."""
    return bytes(values).ljust(PARAMS, b"\0")


# Headers for readers: default view; line/cell/page 2; 1- with tiny limits; A-B; A.C-.
HEADERS = [header(), header(1, 1), header(2, 0, 0, 0x09, 0x02), header(3, 0, 2),
           header(4, 0, 3, 0, 0x18)]


def pixels(size, mode):
    w, h = size
    img = Image.new("RGB", size)
    img.putdata([((x * 37) % 256, (y * 59) % 256, ((x + y) * 23) % 256)
                 for y in range(h) for x in range(w)])
    if mode == "I;16":  # 16-bit grayscale: Pillow converts to it only from I
        return img.convert("L").convert("I").point(lambda v: v * 257).convert("I;16")
    return img.convert(mode)


def image_bytes(img, fmt, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def png_seeds() -> dict:
    out = {}
    for mode in ["1", "L", "P", "RGB", "RGBA", "LA", "I;16"]:
        out[f"{mode.replace(';', '_')}.png"] = image_bytes(pixels((5, 3), mode), "PNG")
    frames = [pixels((4, 4), "RGBA"), pixels((4, 4), "RGBA").rotate(90)]
    out["apng.png"] = image_bytes(frames[0], "PNG", save_all=True, append_images=frames[1:],
                                  duration=100)
    return out


def jpeg_seeds() -> dict:
    return {
        "baseline.jpg": image_bytes(pixels((9, 7), "RGB"), "JPEG", quality=70),
        "progressive.jpg": image_bytes(pixels((9, 7), "RGB"), "JPEG", quality=70,
                                       progressive=True),
        "gray.jpg": image_bytes(pixels((8, 8), "L"), "JPEG", quality=50),
        "cmyk.jpg": image_bytes(pixels((8, 8), "CMYK"), "JPEG", quality=50),
        "restart.jpg": image_bytes(pixels((17, 9), "RGB"), "JPEG", quality=60,
                                   restart_marker_blocks=1),
    }


def gif_seeds() -> dict:
    frames = [pixels((6, 4), "P"), pixels((6, 4), "P").transpose(Image.FLIP_LEFT_RIGHT)]
    return {
        "still.gif": image_bytes(pixels((6, 4), "P"), "GIF"),
        "transparent.gif": image_bytes(pixels((6, 4), "P"), "GIF", transparency=0),
        "animated.gif": image_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:],
                                    duration=50, loop=0),
    }


def webp_seeds() -> dict:
    frames = [pixels((6, 4), "RGBA"), pixels((6, 4), "RGBA").rotate(180)]
    return {
        "lossy.webp": image_bytes(pixels((6, 4), "RGB"), "WEBP", quality=50),
        "lossless.webp": image_bytes(pixels((6, 4), "RGB"), "WEBP", lossless=True),
        "alpha.webp": image_bytes(pixels((6, 4), "RGBA"), "WEBP", quality=50),
        "animated.webp": image_bytes(frames[0], "WEBP", save_all=True, append_images=frames[1:],
                                     duration=50, lossless=True),
    }


TRACEBACK = ["\x1b[0;31mZeroDivisionError\x1b[0m   Traceback (most recent call last)",
             "Cell \x1b[0;32mIn[2], line 1\x1b[0m\n----> 1 1/0",
             "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]


def notebook_seeds() -> dict:
    png = image_bytes(pixels((3, 2), "RGB"), "PNG")
    jpeg = image_bytes(pixels((3, 2), "RGB"), "JPEG", quality=50)
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                               "language": "python"}})
    nb.cells = [
        new_markdown_cell("# Title\nSome *text* and ![a](attachment:a.png)",
                          attachments={"a.png": {"image/png": base64.b64encode(png).decode()}}),
        new_code_cell("print('hi')\nfor i in range(3):\n    print(i)", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="hi\n0\n1\r2\n")]),
        new_code_cell("x", execution_count=2, outputs=[
            new_output("execute_result", execution_count=2,
                       data={"text/plain": "array([1, 2])", "text/html": "<b>1</b>"}),
            new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                             "image/jpeg": base64.b64encode(jpeg).decode(),
                                             "text/plain": "<Figure>"}),
            new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                       traceback=TRACEBACK)]),
        new_raw_cell("raw text"),
        new_code_cell("pass"),
    ]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    v4 = nbformat.writes(nb).encode()
    empty = new_notebook()
    v3 = {
        "nbformat": 3, "nbformat_minor": 0, "metadata": {"name": "old"},
        "worksheets": [{"cells": [
            {"cell_type": "heading", "level": 2, "source": ["Old"], "metadata": {}},
            {"cell_type": "code", "language": "python", "input": ["1/0"], "prompt_number": 1,
             "collapsed": False, "metadata": {}, "outputs": [
                 {"output_type": "pyout", "prompt_number": 1, "text": ["1"], "metadata": {}},
                 {"output_type": "display_data", "png": base64.b64encode(png).decode(),
                  "metadata": {}},
                 {"output_type": "pyerr", "ename": "E", "evalue": "v", "traceback": ["t"]}]},
        ]}],
    }
    return {
        "v4.ipynb": v4,
        "v4_compact.ipynb": json.dumps(json.loads(v4), separators=(",", ":")).encode(),
        "empty.ipynb": nbformat.writes(empty).encode(),
        "v3.ipynb": json.dumps(v3, indent=1).encode(),
    }


def text_seeds() -> dict:
    lines = "first line\nsecond\tline\n\nfourth — dash\nпятая строка\n末行\n"
    return {
        "lf.txt": lines.encode(),
        "crlf.txt": lines.replace("\n", "\r\n").encode(),
        "cr.txt": lines.replace("\n", "\r").encode(),
        "mixed.txt": b"a\nb\r\nc\rd",
        "long.txt": ("x" * 90 + "é" * 30 + "\n" + "short\n").encode(),
        "no_newline.txt": b"no newline at the end",
        "empty.txt": b"",
        "bom8.txt": b"\xef\xbb\xbf" + lines.encode(),
        "utf16le.txt": b"\xff\xfe" + lines.encode("utf-16-le"),
        "utf16be.txt": b"\xfe\xff" + lines.encode("utf-16-be"),
        "utf32le.txt": b"\xff\xfe\x00\x00" + lines.encode("utf-32-le"),
        "cp1252.txt": "café déjà vu, naïve œuvre — “quotes”\n".encode("cp1252") * 3,
        "sjis.txt": "日本語のテキストです。これはテストです。\n".encode("shift_jis") * 3,
        "gb18030.txt": "中文文本，这是一个测试。\n".encode("gb18030") * 3,
        "koi8r.txt": "Русский текст для проверки кодировки.\n".encode("koi8-r") * 3,
        "iso2022jp.txt": "日本語のテキスト\n".encode("iso-2022-jp") * 3,
        "invalid_utf8.txt": b"ok \xff\xfe bad \xc3 cut \xed\xa0\x80 surrogate\n",
    }


def names_seeds() -> dict:
    names = ["12", "3-", "4-9", "7.20-", "1", "main.c.tool.json", "main.c:1-20.tool.json",
             "a:b:3.tool.anthropic.json", "x.tool.mcp.json", "dir:5-.tool.openai.json",
             "max_output=100K", "max-lines=5", "hide_siblings", "hide_siblings=0",
             "symlinks=none", "max_image_size=20MiB", "openai", "cache_size=1G"]
    return {f"{i:02d}": n.encode() for i, n in enumerate(names)}


def confine_seeds() -> dict:
    """A flags byte in a FUZZ_PARAMS header (1: no links, 2: regular only, 4: from sub/), then
    the path and the targets of l0, sub/l1, sub/deeper/l2 and l3, NUL-separated; "@R", "@G",
    "@B" stand for the root's real and given paths and the folder around it."""
    cases = [
        (0, ["f.txt"]), (0, ["sub/../f.txt"]), (0, ["../outside.txt"]), (2, ["sub"]),
        (2, ["fifo"]), (0, ["@R/f.txt"]), (0, ["@G//./sub/g.txt"]), (0, ["@B/outside.txt"]),
        (0, ["l0", "f.txt"]), (0, ["l0", "../outside.txt"]), (0, ["l0", "@R/sub/g.txt"]),
        (0, ["l0", "@G/f.txt"]), (0, ["l0", "@B/outside/f.txt"]), (0, ["l0/g.txt", "sub"]),
        (0, ["l0", "l3", "", "", "l0"]), (0, ["sub/l1", "", "../f.txt"]),
        (0, ["sub/l1/f.txt", "", "../../outside"]), (4, ["../l0", "sub/deeper/l2", "", "../l1"]),
        (1, ["l0", "f.txt"]), (1, ["sub/l1/x", "", "."]), (4, ["../../outside.txt"]),
        (0, ["sub/deeper/l2/..", "", "", "../../../outside/sub"]), (0, ["f.txt/"]),
    ]
    return {f"{i:02d}": bytes([flags]) + bytes(11) + b"\0".join(p.encode() for p in parts)
            for i, (flags, parts) in enumerate(cases)}


def render_seed(flags: int, kinds: int, counts: int, strings: list, rest: bytes) -> bytes:
    numbers = struct.pack("<QqQQQq", 1234, 1700000000, 1, 20, 120, 20)
    numbers += struct.pack("<IIIIII", 3, 4, 640, 480, 4000, 2000) + struct.pack("<d", 0.5)
    return bytes([flags, kinds, counts]) + numbers + b"\0".join(strings) + b"\0" + rest


def render_seeds() -> dict:
    return {
        "text": render_seed(0x0f | 0x02, 1 | (1 << 3), 0x50,
                            [b"src/main.c", b"/abs/src/main.c", b"text/x-c",
                             b"Read 2 lines (1-2 of 120)", b"main.c:3-4.tool.json",
                             b"C source, ASCII text", b"", b""],
                            b"     1\tint main(void)\n     2\t{\n"),
        "image": render_seed(0x1d | 0x20, 2, 0x01,
                             [b"a b/p\xc3\xa9.png", b"", b"image/png", b"Read PNG image 3x4",
                              b"", b"PNG image data", b"", b""], b"\x89PNG\r\n\x1a\n\0\0"),
        "error": render_seed(0x04, 3 | (5 << 5), 0x04,
                             [b"bad\xffname.pdf", b"", b"", b"Error: x", b"", b"", b"", b"",
                              b"PDF is password-protected: bad.pdf"], b"%PDF-1.4\n"),
        "notebook": render_seed(0xc5, 4 | (2 << 3), 0x01,
                                [b"nb.ipynb", b"", b"application/x-ipynb+json", b"Read notebook",
                                 b"nb.ipynb:3-.tool.json", b"", b"python", b"4.5"],
                                b"Jupyter notebook: python, 3 cells\n\x1b[31m\"q\"\\\x00"),
    }


def pdf_seeds(tmp: pathlib.Path) -> dict:
    out = {}

    def surface(name, size=(200, 120)):
        s = cairo.PDFSurface(str(tmp / name), *size)
        s.set_metadata(cairo.PDF_METADATA_CREATE_DATE, "2024-01-01T00:00:00Z")
        s.set_metadata(cairo.PDF_METADATA_MOD_DATE, "2024-01-01T00:00:00Z")
        s.set_metadata(cairo.PDF_METADATA_CREATOR, "toolfs tests/fuzz/make_seeds.py")
        return s

    s = surface("text.pdf")
    ctx = cairo.Context(s)
    ctx.select_font_face("DejaVu Sans")
    ctx.set_font_size(12)
    ctx.move_to(10, 30)
    ctx.show_text("Hi")
    s.show_page()
    ctx.move_to(10, 30)
    ctx.show_text("2")
    s.finish()

    s = surface("shapes.pdf", (50, 40))
    ctx = cairo.Context(s)
    ctx.set_source_rgb(0.8, 0.1, 0.1)
    ctx.rectangle(5, 5, 20, 10)
    ctx.fill()
    s.finish()
    for name in ["text.pdf", "shapes.pdf"]:
        out[name] = (tmp / name).read_bytes()
    if shutil.which("qpdf"):
        plain = tmp / "plain.pdf"
        subprocess.run(["qpdf", "--stream-data=uncompress", "--object-streams=disable",
                        "--deterministic-id", str(tmp / "shapes.pdf"), str(plain)], check=True)
        out["plain.pdf"] = plain.read_bytes()
    return out


META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"


def modern_meta(version="2026-07-28") -> dict:
    """The _meta of a 2026-07-28 request: the version and the client's capabilities."""
    return {META_VERSION: version, META_CAPS: {"roots": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "seed", "version": "1"}}


def mcp_seeds() -> dict:
    def line(obj) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    def req(i, method, params=None):
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        return line(msg)

    def read(i, **args):
        return req(i, "tools/call", {"name": "read", "arguments": args})

    init = req(0, "initialize", {"protocolVersion": "2025-06-18",
                                 "capabilities": {"roots": {"listChanged": True}},
                                 "clientInfo": {"name": "seed", "version": "1"}})
    initialized = line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return {
        "handshake": init + initialized + req(1, "tools/list") + req("p", "ping"),
        "reads": b"".join([read(1, file_path="a.txt"), read(2, file_path="a.txt", offset=3,
                                                                 limit=4),
                           read(3, file_path="a.txt", offset=48), read(4, file_path="n.ipynb"),
                           read(5, file_path="p.png"), read(6, file_path="sub/b.txt"),
                           read(7, file_path="missing.txt"), read(8, file_path="out"),
                           read(9, file_path="../etc/passwd"), read(10, file_path="x", pages="1-2"),
                           req(11, "tools/call", {"name": "list_allowed_directories"})]),
        "bad_args": b"".join([read(1), read(2, file_path=3), read(3, file_path="a.txt",
                                                                  offset="2"),
                              read(4, file_path="a.txt", offset=0, limit=1.5),
                              read(5, file_path="a.txt", pages="2-")]),
        "errors": b"not json\n[]\n{}\n" + req(1, "nope") + req(2, "tools/call", {"name": "x"})
                  + line({"jsonrpc": "1.0", "id": 3, "method": "ping"}) + b"\n  \n",
        "cancel": read(1, file_path="a.txt") + line({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1}}),
        "roots": init + initialized + line({
            "jsonrpc": "2.0", "id": "toolfs-roots-1",
            "result": {"roots": [{"uri": "file:///tmp/x%20y"}, {"uri": "http://a"}]}})
                 + line({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        # ids echoed as sent, a NUL in file_path, escaped keys (mcp_json.c)
        "raw_ids": b"".join(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % t for t in [
            b"1e400", b"1.0", b"-0", b"12345678901234567890", b'"\\u00e9"', b"01", b'"a\tb"'])
                   + b'{"jsonrpc":"2.0","\\u0069d":7,"method":"nope","id":8}\n'
                   + b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read",'
                     b'"arguments":{"file_path":"a.txt\\u0000x"}}}\n',
        # 2026-07-28: server/discover, stateless requests whose _meta names the version and
        # the client's capabilities, -32022, max_tokens; then malformed _meta, and a modern
        # request inside a 2025 session
        "modern": b"".join([
            req(1, "server/discover", {"_meta": modern_meta()}), req(2, "server/discover"),
            req(3, "tools/list", {"_meta": modern_meta()}),
            req(4, "tools/call", {"name": "read", "arguments": {"file_path": "a.txt",
                                                                 "max_tokens": 5},
                                  "_meta": modern_meta()}),
            req(5, "tools/call", {"name": "list_allowed_directories",
                                  "_meta": modern_meta()}),
            req(6, "tools/call", {"name": "read", "arguments": {"file_path": "a.txt",
                                                                 "max_tokens": 9007199254740992,
                                                                 "offset": 2, "limit": 3},
                                  "_meta": modern_meta()}),
            req(7, "ping", {"_meta": modern_meta()}), req(8, "initialize", {"_meta": modern_meta()}),
            req(9, "tools/list", {"_meta": modern_meta("2099-01-01")}),
            req(10, "tools/list", {"_meta": modern_meta("2025-06-18")})]),
        "bad_meta": b"".join([
            req(1, "tools/list", {"_meta": {META_VERSION: 20260728}}),
            req(2, "tools/list", {"_meta": {META_VERSION: None}}),
            req(3, "tools/list", {"_meta": {META_VERSION: ["2026-07-28"]}}),
            req(4, "tools/list", {"_meta": {META_VERSION: "2026-07-28"}}),
            req(5, "tools/list", {"_meta": {META_VERSION: "2026-07-28", META_CAPS: 1}}),
            req(6, "tools/list", {"_meta": {META_CAPS: {}}}),
            req(7, "tools/list", {"_meta": "x"}), req(8, "tools/list", {"_meta": [1, {}]}),
            req(9, "tools/list", [{"_meta": modern_meta()}])])
        + b"".join(req(10 + i, "tools/call", {"name": "read", "arguments": {
            "file_path": "a.txt", "max_tokens": v}, "_meta": modern_meta()})
                   for i, v in enumerate((0, -1, 1.5, 1e300, "5", 18446744073709551616)))
        + b'{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"_meta":{"'
        + META_VERSION.encode() + b'":"2026-07-28\\u0000x","' + META_CAPS.encode()
        + b'":{}}}}\n',
        "mixed": init + initialized + req(1, "tools/list", {"_meta": modern_meta()})
                 + req(2, "tools/call", {"name": "read", "arguments": {"file_path": "a.txt"},
                                         "_meta": modern_meta()})
                 + line({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 2, "_meta": modern_meta()}})
                 + req(3, "tools/list"),
    }


def office_entries(archive: bytes, skip=()) -> bytes:
    """A zip's entries in fuzz_office's layout: [name len][name][data len, 2 LE][data]..."""
    out = b""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        for info in z.infolist():
            if info.filename in skip:
                continue
            name, data = info.filename.encode(), z.read(info.filename)[:65535]
            out += bytes([len(name)]) + name + struct.pack("<H", len(data)) + data
    return out


def office_seeds() -> list:
    """(name index of fuzz_office.c's names[], file name, payload): tests/fixtures/gen_office.py's
    small documents as entry lists (without python-docx's large theme and style parts), and one
    as a zip file."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "fixtures"))
    import gen_office
    bulky = ("word/styles.xml", "word/stylesWithEffects.xml", "word/theme/theme1.xml",
             "word/fontTable.xml", "word/settings.xml", "word/webSettings.xml",
             "xl/theme/theme1.xml", "docProps/thumbnail.jpeg")
    docs = [(0, "tracked", gen_office.tracked_docx()), (0, "basic", gen_office.basic_docx()),
            (1, "basic", gen_office.basic_xlsx()), (1, "handmade", gen_office.zip_of(
                gen_office.HANDMADE_FILES)), (2, "deck", gen_office.deck_pptx()),
            (0, "odt", gen_office.basic_odt()), (1, "ods", gen_office.basic_ods()),
            (2, "odp", gen_office.slides_odp())]
    seeds = [(i, f"{name}.entries", office_entries(data, bulky)) for i, name, data in docs]
    seeds.append((1, "handmade.zip", gen_office.zip_of(gen_office.HANDMADE_FILES)))
    return seeds


def media_seeds(tmp: pathlib.Path) -> dict:
    """0.3 s tones and 0.2 s 32x24 clips, each under fuzz_media's 32 KiB."""
    def ffmpeg(*args):
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)], check=True)
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=0.3:sample_rate=8000",
            "-metadata", "title=seed"]
    clip = ["-f", "lavfi", "-i", "testsrc2=duration=0.2:size=32x24:rate=10"]
    made = {
        "tone.mp3": tone + ["-c:a", "libmp3lame", "-b:a", "32k"],
        "tone.wav": tone + ["-c:a", "pcm_u8"],
        "tone.flac": tone + ["-c:a", "flac"],
        "tone.ogg": tone + ["-c:a", "libvorbis"],
        "tone.opus": tone + ["-c:a", "libopus"],
        "tone.m4a": tone + ["-c:a", "aac", "-b:a", "16k"],
        "tone.aiff": tone + ["-c:a", "pcm_s8"],
        "clip.mp4": clip + ["-c:v", "libx264", "-pix_fmt", "yuv420p"],
        "clip.webm": clip + ["-c:v", "libvpx"],
        "clip.mkv": clip + ["-c:v", "mpeg4"],
        "clip.avi": clip + ["-c:v", "mpeg4"],
        "clip.ts": clip + ["-c:v", "mpeg2video"],
    }
    seeds = {}
    for name, args in made.items():
        ffmpeg(*args, tmp / name)
        seeds[name] = (tmp / name).read_bytes()
    return seeds


def write(folder: pathlib.Path, files: dict, headers=None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        if headers is None:
            (folder / name).write_bytes(data)
        else:
            for i, head in enumerate(headers):
                (folder / f"{name}.{i}").write_bytes(head + data)


def generate(outdir: pathlib.Path) -> None:
    outdir = pathlib.Path(outdir)
    images = {"fuzz_png": png_seeds(), "fuzz_jpeg": jpeg_seeds(), "fuzz_gif": gif_seeds(),
              "fuzz_webp": webp_seeds()}
    for target, files in images.items():
        write(outdir / target, files)
    # fuzz_png_shrink: a factor byte, then a PNG (every kind it takes, and some it declines).
    write(outdir / "fuzz_png_shrink", images["fuzz_png"], [bytes([1]), bytes([3])])
    notebooks = notebook_seeds()
    texts = text_seeds()
    write(outdir / "fuzz_notebook", notebooks, HEADERS)
    write(outdir / "fuzz_text", texts, [header(), header(2, 3, 1, 5, 4, 3, 1, 7, 2),
                                         header(1, 1, 4, 2, 1, 1, 9, 1, 3)])
    # fuzz_tokens: an image's width and height (8 bytes), then the text
    write(outdir / "fuzz_tokens", texts, [struct.pack("<II", 1000, 1000),
                                          struct.pack("<II", 2049, 769),
                                          struct.pack("<II", 0xffffffff, 1)])
    write(outdir / "fuzz_names", names_seeds())
    write(outdir / "fuzz_confine", confine_seeds())
    write(outdir / "fuzz_render", render_seeds())
    write(outdir / "fuzz_mcp", mcp_seeds())
    tmp = outdir / "pdf-work"
    tmp.mkdir(parents=True, exist_ok=True)
    pdfs = pdf_seeds(tmp)
    shutil.rmtree(tmp)
    write(outdir / "fuzz_pdf", pdfs, HEADERS)
    tmp.mkdir(parents=True, exist_ok=True)
    write(outdir / "fuzz_media", media_seeds(tmp))
    shutil.rmtree(tmp)
    # fuzz_read: the first header byte picks the name (fuzz_read.c's names[]).
    read = outdir / "fuzz_read"
    read.mkdir(parents=True, exist_ok=True)
    groups = [(0, texts), (1, notebooks), (2, images["fuzz_png"]), (3, images["fuzz_jpeg"]),
              (4, images["fuzz_gif"]), (5, images["fuzz_webp"])]
    for name_index, files in groups:
        for name, data in files.items():
            for i, head in enumerate(HEADERS[:3]):
                (read / f"{name}.{i}").write_bytes(bytes([name_index]) + head[:-1] + data)
    # fuzz_office: the same layout; the payload is a list of archive entries (or a zip file).
    office = outdir / "fuzz_office"
    office.mkdir(parents=True, exist_ok=True)
    for name_index, name, data in office_seeds():
        for i, head in enumerate(HEADERS):
            (office / f"{name}.{i}").write_bytes(bytes([name_index]) + head[:-1] + data)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUTDIR")
    generate(pathlib.Path(sys.argv[1]))
