# SPDX-License-Identifier: MIT
"""The image readers through toolfs-read: PNG, JPEG, GIF and WebP files made by Pillow,
ImageMagick, gifsicle, cwebp and img2webp are attached byte for byte with the dimensions Pillow
reads; broken variants of them are corrupt with the exact sentence a structure walker written
here (independently of the C code) predicts; BMP/TIFF/ICO/HEIC/AVIF are converted to PNG of the
size Pillow (or ImageMagick) reads, and HEIF headers alone are corrupt; the size limit is enforced
before reading."""
import base64
import concurrent.futures
import hashlib
import io
import pathlib
import re
import struct
import subprocess
import zlib

import pytest
from PIL import Image

import gen_images

PREFIX = "Failed to process image file: "
PNG_COLOURS = {0: "grayscale", 2: "RGB", 3: "palette", 4: "grayscale+alpha", 6: "RGBA"}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    out = tmp_path_factory.mktemp("images")
    gen_images.generate(out)
    return out


def format_size(n: int) -> str:
    """docs/SPEC.md's sizes: "512 bytes", "245.3 KB", "1.3 MB" (1 KB = 1024 bytes)."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


# ---- valid images ----

@pytest.mark.parametrize("name", sorted(gen_images.VALID))
def test_valid_image_is_attached_whole(images, toolfs_read, name):
    path = images / name
    fmt, mime = gen_images.VALID[name]
    data = path.read_bytes()
    with Image.open(path) as im:
        width, height = im.size
        frames = getattr(im, "n_frames", 1)

    r = toolfs_read(path)
    assert r.rc == 0, r.out
    j = r.json
    assert j["success"] is True
    assert j["contentType"] == "image"
    assert j["mimeType"] == mime
    assert j["truncated"] is False
    assert "error" not in j and "errorCode" not in j
    assert j["metadata"]["dimensions"] == {"width": width, "height": height}
    assert j["metadata"]["size"] == len(data)
    assert j["metadata"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert len(j["images"]) == 1
    image = j["images"][0]
    assert image["mediaType"] == mime
    assert (image["width"], image["height"]) == (width, height)
    assert base64.b64decode(image["data"], validate=True) == data

    size = format_size(len(data))
    assert j["shortResult"] == f"Read {fmt} image {width}x{height} ({size})"
    content = j["content"]
    assert content.startswith(f"{fmt} image, {width}x{height} pixels, ")
    assert content.endswith(f", {size}. The image is attached.")
    if frames > 1:
        assert "animated" in content and f"{frames} frames" in content
    else:
        assert "animated" not in content


@pytest.mark.parametrize("name", sorted(n for n, v in gen_images.VALID.items() if v[0] == "PNG"))
def test_png_description_names_depth_colour_and_interlace(images, toolfs_read, name):
    data = (images / name).read_bytes()
    depth, colour, interlace = data[24], data[25], data[28]
    layout = "interlaced" if interlace else "non-interlaced"
    expected = f"{depth}-bit {PNG_COLOURS[colour]}, {layout}"
    assert f", {expected}," in toolfs_read(images / name).json["content"]


@pytest.mark.parametrize("name", sorted(n for n, v in gen_images.VALID.items() if v[0] == "JPEG"))
def test_jpeg_description_names_components_and_coding(images, toolfs_read, name):
    with Image.open(images / name) as im:
        bands = len(im.getbands())
        progressive = bool(im.info.get("progressive"))
    content = toolfs_read(images / name).json["content"]
    assert {1: "grayscale", 3: "3 colour components", 4: "4 components (CMYK)"}[bands] in content
    assert ("progressive" in content) == progressive
    assert ("baseline" in content) == (not progressive)


@pytest.mark.parametrize("name", sorted(n for n, v in gen_images.VALID.items()
                                        if v[0] in ("GIF", "WebP")))
def test_gif_and_webp_descriptions(images, toolfs_read, name):
    data = (images / name).read_bytes()
    content = toolfs_read(images / name).json["content"]
    if data.startswith(b"GIF"):
        assert f", {data[:6].decode()}, " in content
        return
    with Image.open(images / name) as im:
        still_alpha = getattr(im, "n_frames", 1) == 1 and im.mode == "RGBA"
    assert ("lossless" in content) == (b"VP8L" in data)
    assert ("lossy" in content) == (b"VP8 " in data)
    if not content.count("animated"):
        assert ("with alpha" in content) == still_alpha


def test_selector_one_is_the_image_and_two_is_past_the_end(images, toolfs_read):
    path = images / "png_rgb8.png"
    whole = toolfs_read(path)
    one = toolfs_read(path, "--select", "1")
    assert one.rc == 0 and one.json["images"] == whole.json["images"]
    two = toolfs_read(path, "--select", "2")
    assert two.rc == 1
    assert two.json["errorCode"] == "out_of_range"
    assert two.json["contentType"] == "image"
    assert "images" not in two.json


# ---- raster formats: converted ----

def magick_size(path: pathlib.Path) -> tuple:
    """Width and height as ImageMagick reads them (first image), for what Pillow cannot open."""
    out = subprocess.run(["identify", "-format", "%w %h\n", str(path)], capture_output=True,
                         text=True, check=True).stdout.split("\n")[0]
    return tuple(int(v) for v in out.split())


@pytest.mark.parametrize("name", sorted(gen_images.RASTER))
def test_raster_formats_are_converted(images, toolfs_read, name):
    fmt, mime = gen_images.RASTER[name]
    path = images / name
    magic = subprocess.run(["file", "-b", "--mime-type", str(path)], capture_output=True,
                           text=True, check=True).stdout.strip()
    assert magic == mime, "the fixture is what libmagic says it is"
    if fmt in ("BMP", "TIFF", "ICO"):
        with Image.open(path) as im:
            assert im.format == fmt
            size = im.size
    else:
        size = magick_size(path)
    r = toolfs_read(path)
    assert r.rc == 0, r.json
    j = r.json
    assert j["contentType"] == "image"
    assert j["mimeType"] == mime
    assert j["metadata"]["dimensions"] == {"width": size[0], "height": size[1]}
    assert "resized" not in j["metadata"]
    data = path.read_bytes()
    assert j["metadata"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert j["shortResult"] == (f"Read {fmt} image {size[0]}x{size[1]} "
                                f"({format_size(len(data))}), converted to PNG")
    assert j["content"].startswith(f"{fmt} image, {size[0]}x{size[1]} pixels, ")
    assert j["content"].endswith(" Converted to PNG for viewing. The image is attached.")
    assert len(j["images"]) == 1
    image = j["images"][0]
    assert image["mediaType"] == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image["data"], validate=True))) as png:
        png.load()
        assert png.format == "PNG"
        assert png.size == size == (image["width"], image["height"])


@pytest.mark.parametrize("name", sorted(gen_images.RASTER_HEADERS))
def test_raster_headers_alone_are_corrupt(images, toolfs_read, name):
    fmt, mime = gen_images.RASTER_HEADERS[name]
    r = toolfs_read(images / name)
    assert r.rc == 1
    j = r.json
    assert j["contentType"] == "image"
    assert j["mimeType"] == mime
    assert j["errorCode"] == "corrupt"
    # libvips's (libheif's) own reason follows.
    assert re.fullmatch(PREFIX + r"libvips cannot decode it: \S.*", j["error"]), j["error"]
    assert "images" not in j


# ---- broken images: oracles ----

def png_chunks(data: bytes) -> list:
    """(offset, type, data length) of each chunk of a well-formed PNG."""
    chunks, off = [], 8
    while off < len(data):
        length, kind = struct.unpack(">I4s", data[off:off + 8])
        chunks.append((off, kind.decode(), length))
        off += length + 12
        if kind == b"IEND":
            break
    return chunks


def png_truncated_error(data: bytes, cut: int) -> str:
    if cut < 8:
        return f"PNG truncated: signature at offset 0 needs 8 bytes, file ends at {cut}"
    seen = []
    for off, kind, length in png_chunks(data):
        if cut == off:
            if not seen:
                return f"missing IHDR chunk (file ends at offset {cut})"
            if "IDAT" not in seen:
                return f"missing IDAT chunk (file ends at offset {cut})"
            return f"missing IEND chunk (file ends at offset {cut})"
        if cut < off + 8:
            return f"PNG truncated: chunk header at offset {off} needs 8 bytes, file ends at {cut}"
        if cut < off + 12 + length:
            return (f"PNG truncated: chunk {kind} at offset {off} needs {length + 12} bytes, "
                    f"file ends at {cut}")
        seen.append(kind)
    raise AssertionError("cut past the end")


def png_chunk_bytes(kind: bytes, payload: bytes) -> bytes:
    return (struct.pack(">I", len(payload)) + kind + payload
            + struct.pack(">I", zlib.crc32(kind + payload)))


JPEG_NAMES = {0xC4: "DHT", 0xCC: "DAC", 0xDA: "SOS", 0xDB: "DQT", 0xDD: "DRI", 0xFE: "COM"}
JPEG_NAMES.update({0xC0 + i: f"SOF{i}" for i in range(16) if i not in (4, 8, 12)})
JPEG_NAMES.update({0xE0 + i: f"APP{i}" for i in range(16)})


def jpeg_walk(data: bytes):
    """Header segments (offset, marker, length) up to and including the first SOS, and the
    offset where the last scan's entropy-coded data starts."""
    header, off, last_scan = [], 2, None
    while True:
        assert data[off] == 0xFF
        marker = data[off + 1]
        if marker == 0xD9:
            return header, last_scan
        length = struct.unpack(">H", data[off + 2:off + 4])[0]
        if last_scan is None:
            header.append((off, marker, length))
        off += 2 + length
        if marker == 0xDA:
            last_scan = off
            while not (data[off] == 0xFF and data[off + 1] not in (0x00, 0xFF)
                       and not 0xD0 <= data[off + 1] <= 0xD7):
                off += 1


def gif_blocks(data: bytes) -> list:
    """(offset, introducer, LZW size offset or None) of each top-level block."""
    flags = data[10]
    off = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    blocks = []
    while True:
        intro = data[off]
        if intro == 0x3B:
            blocks.append((off, intro, None))
            return blocks
        start, lzw = off, None
        if intro == 0x2C:
            lflags = data[off + 9]
            off += 10 + (3 << ((lflags & 7) + 1) if lflags & 0x80 else 0)
            lzw = off
            off += 1
        else:
            off += 2
        while data[off]:
            off += data[off] + 1
        off += 1
        blocks.append((start, intro, lzw))


def webp_chunks(data: bytes) -> list:
    """(offset, fourcc shown in messages, size) of each top-level chunk."""
    end, off, chunks = 8 + struct.unpack("<I", data[4:8])[0], 12, []
    while off < end:
        fourcc, size = struct.unpack("<4sI", data[off:off + 8])
        chunks.append((off, fourcc.decode().rstrip(" "), size))
        off += 8 + size + (size & 1)
    return chunks


def broken_variants(images: pathlib.Path) -> dict:
    """name -> (bytes, expected error after PREFIX, or None when only `corrupt` is certain)."""
    cases = {}

    def add(name, data, error=None):
        assert name not in cases
        cases[name] = (bytes(data), error)

    # PNG: every truncation boundary, a flipped byte in each chunk, missing IDAT/IEND, IHDR.
    for src in ("png_apng.png", "png_pal4.png"):
        data = (images / src).read_bytes()
        stem = src[:-4]
        chunks = png_chunks(data)
        cuts = {1, 4, 7, 8, 12, 20, len(data) // 2, len(data) - 12, len(data) - 1}
        for off, _, length in chunks:
            cuts |= {off, off + 5, off + 8 + length // 2}
        for cut in sorted(c for c in cuts if 0 < c < len(data)):
            add(f"{stem}_cut{cut}.png", data[:cut], png_truncated_error(data, cut))
        for i, (off, kind, length) in enumerate(chunks):
            crc_at = off + 8 + length + 3
            flipped = bytearray(data)
            flipped[crc_at] ^= 0x01
            add(f"{stem}_crc{i}_{kind}.png", flipped,
                f"PNG chunk {kind} CRC mismatch at offset {off}")
            if length:
                flipped = bytearray(data)
                flipped[off + 8 + length // 2] ^= 0x80
                add(f"{stem}_flip{i}_{kind}.png", flipped,
                    f"PNG chunk {kind} CRC mismatch at offset {off}")
        bad = bytearray(data)
        bad[0] = 0x88
        add(f"{stem}_signature.png", bad, "not a PNG file: bad signature at offset 0")
        no_iend = data[:chunks[-1][0]]
        add(f"{stem}_no_iend.png", no_iend,
            f"missing IEND chunk (file ends at offset {len(no_iend)})")
        no_idat = b"".join([data[:8]] + [data[o:o + n + 12] for o, k, n in chunks if k != "IDAT"])
        iend_at = len(no_idat) - 12
        add(f"{stem}_no_idat.png", no_idat, f"missing IDAT chunk before IEND at offset {iend_at}")
        ihdr = bytearray(data[16:29])
        for field, at, value, error in (
                ("width0", 0, b"\0\0\0\0",
                 "PNG IHDR width 0 at offset 16 is out of range (1..2147483647)"),
                ("height_big", 4, b"\x80\0\0\0",
                 "PNG IHDR height 2147483648 at offset 20 is out of range (1..2147483647)"),
                ("depth3", 8, b"\x03",
                 f"PNG IHDR bit depth 3 at offset 24 is invalid for colour type {data[25]}"),
                ("colour7", 9, b"\x07", "PNG IHDR colour type 7 at offset 25 is invalid"),
                ("interlace2", 12, b"\x02",
                 "PNG IHDR interlace method 2 at offset 28 is invalid")):
            fields = bytearray(ihdr)
            fields[at:at + len(value)] = value
            add(f"{stem}_ihdr_{field}.png",
                data[:8] + png_chunk_bytes(b"IHDR", bytes(fields)) + data[33:], error)

    # JPEG: each header segment's marker and length, missing SOI/EOI/SOF, truncations.
    for src in ("jpeg_progressive.jpg", "jpeg_exif.jpg"):
        data = (images / src).read_bytes()
        stem = src.rsplit(".", 1)[0]
        header, last_scan = jpeg_walk(data)
        for off, marker, length in header:
            name = JPEG_NAMES[marker]
            bad = bytearray(data)
            bad[off] = 0xFE
            add(f"{stem}_marker_{off}_{name}.jpg", bad,
                f"JPEG expected a marker at offset {off}, found byte 0xFE")
            bad = bytearray(data)
            bad[off + 2] = 0xFF
            need = (0xFF << 8) | bad[off + 3]
            add(f"{stem}_length_{off}_{name}.jpg", bad,
                f"JPEG truncated: segment {name} at offset {off} needs {need} bytes, "
                f"file ends at {len(data)}")
            if off + 2 + length < len(data):
                add(f"{stem}_cut_in_{off}_{name}.jpg", data[:off + 2 + length - 1],
                    f"JPEG truncated: segment {name} at offset {off} needs {length} bytes, "
                    f"file ends at {off + 2 + length - 1}")
        bad = bytearray(data)
        bad[1] = 0xD9
        add(f"{stem}_no_soi.jpg", bad, "not a JPEG file: missing SOI marker at offset 0")
        add(f"{stem}_no_eoi.jpg", data[:-2],
            f"missing EOI marker: scan data from offset {last_scan} runs to the end of the file "
            f"at {len(data) - 2}")
        add(f"{stem}_cut_scan.jpg", data[:(last_scan + len(data)) // 2],
            f"missing EOI marker: scan data from offset {last_scan} runs to the end of the file "
            f"at {(last_scan + len(data)) // 2}")
        sof = next((o, n) for o, m, n in header if JPEG_NAMES[m].startswith("SOF"))
        sos = next(o for o, m, n in header if m == 0xDA)
        no_sof = data[:sof[0]] + data[sof[0] + 2 + sof[1]:]
        add(f"{stem}_no_sof.jpg", no_sof,
            f"JPEG SOS at offset {sos - 2 - sof[1]} comes before any SOF frame header")
        for cut in (1, 3, 10, 25):
            add(f"{stem}_cut{cut}.jpg", data[:cut])

    # GIF: each block's introducer, trailer, LZW code size, truncations.
    for src in ("gif_optimized.gif", "gif_transparent.gif"):
        data = (images / src).read_bytes()
        stem = src[:-4]
        blocks = gif_blocks(data)
        for i, (off, intro, lzw) in enumerate(blocks):
            bad = bytearray(data)
            bad[off] ^= 0x01
            add(f"{stem}_block{i}.gif", bad, f"GIF unknown block 0x{intro ^ 1:02X} at offset {off}")
            if lzw is not None:
                bad = bytearray(data)
                bad[lzw] = 0
                add(f"{stem}_lzw{i}.gif", bad,
                    f"GIF image at offset {off} has invalid LZW minimum code size 0 "
                    f"at offset {lzw}")
        bad = bytearray(data)
        bad[3:6] = b"88a"
        add(f"{stem}_signature.gif", bad, "not a GIF file: bad signature at offset 0")
        add(f"{stem}_no_trailer.gif", data[:-1],
            f"missing GIF trailer (file ends at offset {len(data) - 1})")
        add(f"{stem}_cut10.gif", data[:10],
            "GIF truncated: logical screen descriptor at offset 6 needs 7 bytes, file ends at 10")
        for cut in (3, 14, len(data) // 2, len(data) - 2):
            add(f"{stem}_cut{cut}.gif", data[:cut])
        first_image = next(b for b in blocks if b[1] == 0x2C)
        add(f"{stem}_cut_descriptor.gif", data[:first_image[0] + 5],
            f"GIF truncated: image descriptor at offset {first_image[0]} needs 10 bytes, "
            f"file ends at {first_image[0] + 5}")

    # WebP: RIFF header and size, each chunk's size, VP8/VP8L headers, truncations.
    for src in ("webp_lossy.webp", "webp_lossless.webp", "webp_alpha.webp", "webp_animated.webp"):
        data = (images / src).read_bytes()
        stem = src[:-5]
        riff = struct.unpack("<I", data[4:8])[0]
        for extra in (2, 1000):
            bad = bytearray(data)
            bad[4:8] = struct.pack("<I", riff + extra)
            add(f"{stem}_riff_plus{extra}.webp", bad,
                f"WebP RIFF size {riff + extra} at offset 4 needs {riff + extra + 8} bytes, "
                f"file ends at {len(data)}")
        for i, (off, name, size) in enumerate(webp_chunks(data)):
            bad = bytearray(data)
            bad[off + 7] = 0x7F
            big = size | 0x7F000000
            add(f"{stem}_chunk{i}_{name}.webp", bad,
                f"WebP truncated: chunk {name} at offset {off} needs {big + 8} bytes, "
                f"RIFF data ends at {riff + 8}")
        bad = bytearray(data)
        bad[0:4] = b"RIFX"
        add(f"{stem}_rifx.webp", bad, "not a WebP file: missing RIFF header at offset 0")
        bad = bytearray(data)
        bad[8:12] = b"WEBQ"
        add(f"{stem}_webq.webp", bad, "not a WebP file: RIFF type at offset 8 is not WEBP")
        if b"VP8 " in data:
            at = data.index(b"\x9d\x01\x2a")
            bad = bytearray(data)
            bad[at + 1] ^= 0x02
            add(f"{stem}_startcode.webp", bad, f"WebP VP8 bad start code at offset {at}")
        if b"VP8L" in data:
            at = data.index(b"VP8L") + 8
            bad = bytearray(data)
            bad[at] = 0x2E
            add(f"{stem}_vp8l_sig.webp", bad,
                f"WebP VP8L bad signature 0x2e at offset {at}, expected 0x2f")
        for cut in (2, 7, 20, len(data) // 2, len(data) - 1):
            if cut < 4:
                error = "not a WebP file: missing RIFF header at offset 0"
            elif cut < 12:
                error = ("WebP truncated: RIFF header at offset 0 needs 12 bytes, "
                         f"file ends at {cut}")
            else:
                error = (f"WebP RIFF size {riff} at offset 4 needs {riff + 8} bytes, "
                         f"file ends at {cut}")
            add(f"{stem}_cut{cut}.webp", data[:cut], error)
    return cases


@pytest.fixture(scope="module")
def broken(images, tmp_path_factory):
    out = tmp_path_factory.mktemp("broken")
    cases = broken_variants(images)
    for name, (data, _) in cases.items():
        (out / name).write_bytes(data)
    return out, cases


@pytest.mark.slow
def test_broken_variants_are_corrupt_with_the_exact_sentence(broken, toolfs_read):
    out, cases = broken
    assert len(cases) > 150
    failures = []
    names = sorted(cases)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda name: toolfs_read(out / name), names))
    for name, r in zip(names, results):
        data, error = cases[name]
        j = r.json
        got = (r.rc, j["contentType"], j.get("errorCode"), "images" in j)
        if got != (1, "image", "corrupt", False):
            failures.append(f"{name}: {got} {j.get('error')}")
            continue
        if not j["error"].startswith(PREFIX) or j["content"] != j["error"] \
                or j["shortResult"] != "Error: " + j["error"]:
            failures.append(f"{name}: {j['error']!r}")
        elif error is not None and j["error"] != PREFIX + error:
            failures.append(f"{name}: {j['error']!r}, expected {PREFIX + error!r}")
        if j["metadata"]["sha256"] != hashlib.sha256(data).hexdigest():
            failures.append(f"{name}: sha256")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("ext,mime_if_signature", [("png", "image/png"), ("jpg", "image/jpeg"),
                                                   ("gif", "image/gif"), ("webp", "image/webp")])
def test_zero_bytes_and_text_under_an_image_name_are_corrupt_images(tmp_path, toolfs_read, ext,
                                                                    mime_if_signature):
    empty = tmp_path / f"empty.{ext}"
    empty.write_bytes(b"")
    j = toolfs_read(empty).json
    assert (j["contentType"], j["errorCode"]) == ("image", "corrupt")
    assert j["error"] == PREFIX + "empty file (0 bytes)"

    text = tmp_path / f"notes.{ext.upper()}"
    text.write_text("These are notes, not an image.\nSecond line.\n")
    j = toolfs_read(text).json
    assert (j["contentType"], j["errorCode"]) == ("image", "corrupt")
    expected = {"png": "not a PNG file: bad signature at offset 0",
                "jpg": "not a JPEG file: missing SOI marker at offset 0",
                "gif": "not a GIF file: bad signature at offset 0",
                "webp": "not a WebP file: missing RIFF header at offset 0"}[ext]
    assert j["error"] == PREFIX + expected
    assert "mimeType" not in j, "the bytes are not an image, so no image mime type is claimed"


@pytest.mark.parametrize("name,signature,mime", [
    ("huge.png", b"\x89PNG\r\n\x1a\n", "image/png"),
    ("huge.jpg", b"\xff\xd8\xff\xe0", "image/jpeg"),
    ("huge_gif_without_extension", b"GIF89a", "image/gif"),
])
def test_over_the_limit_is_too_large_without_reading(tmp_path, toolfs_read, name, signature, mime):
    size = 26_528_973  # 25.30 MiB
    path = tmp_path / name
    with open(path, "wb") as f:
        f.write(signature)
        f.truncate(size)
    r = toolfs_read(path)
    assert r.rc == 1
    j = r.json
    assert j["contentType"] == "image"
    assert j["mimeType"] == mime
    assert j["errorCode"] == "too_large"
    assert j["error"] == "Image file exceeds 20MB limit (actual: 25.30MB)"
    assert j["shortResult"] == "Error: Image file exceeds 20MB limit (actual: 25.30MB)"
    assert j["metadata"]["size"] == size
    assert "images" not in j


def test_the_limit_follows_the_option(images, toolfs_read):
    path = images / "png_large.png"
    size = path.stat().st_size
    assert 1 << 20 < size < 2 << 20
    r = toolfs_read(path, "--max-image-size", "1M")
    assert r.json["errorCode"] == "too_large"
    assert r.json["error"] == f"Image file exceeds 1MB limit (actual: {size / 1048576:.2f}MB)"
    r = toolfs_read(path, "--max-image-size", "2M")
    assert r.rc == 0 and r.json["metadata"]["dimensions"] == {"width": 1200, "height": 800}
    # exactly at the limit is allowed
    r = toolfs_read(path, "--max-image-size", str(size))
    assert r.rc == 0
    r = toolfs_read(path, "--max-image-size", str(size - 1))
    assert r.json["errorCode"] == "too_large"
