# SPDX-License-Identifier: MIT
"""Images that always fit (docs/SPEC.md §3 "Images"): every image over image_max_dim (2000 px) or
image_max_b64 (5 MiB) comes back decodable by Pillow with its long edge <= 2000, its base64
<= 5 MiB, the scale exact to 3 decimals, the aspect kept within a pixel and the picture the
source's (compared with Pillow's own downscale); images inside the limits come back byte for byte;
BMP/TIFF/ICO/HEIC/AVIF are converted (oracles: Pillow, and ImageMagick for HEIF); notebook image
outputs and PDF page renders obey the same limits."""
import base64
import io
import os
import pathlib
import re
import subprocess

import pytest
from PIL import Image, ImageChops, ImageStat

from conftest import validate_result
from fixtures import gen_pdfs

import gen_fit

MAX_DIM = 2000
MAX_B64 = 5 * 1024 * 1024
PIL_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG"}


@pytest.fixture(scope="module")
def fit_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit")
    gen_fit.generate(out)
    return out


def decoded(image: dict) -> Image.Image:
    """images[] entry -> the Pillow image of its bytes, checked against its declared size."""
    data = base64.b64decode(image["data"], validate=True)
    im = Image.open(io.BytesIO(data))
    im.load()
    assert im.format == PIL_FORMAT[image["mediaType"]]
    assert im.size == (image["width"], image["height"])
    return im


def looks_alike(a: Image.Image, b: Image.Image, tolerance: float = 12.0) -> bool:
    """Both reduced to the same small size by box averaging: mean channel difference."""
    size = (max(1, b.width // 8), max(1, b.height // 8))
    small_a = a.convert("RGB").resize(size, Image.BOX)
    small_b = b.convert("RGB").resize(size, Image.BOX)
    diff = ImageStat.Stat(ImageChops.difference(small_a, small_b)).mean
    return sum(diff) / 3 <= tolerance


def check_fitted(j: dict, src_w: int, src_h: int) -> dict:
    """The limits and the resize bookkeeping of one fitted image result; returns images[0]."""
    assert j["success"] is True
    assert len(j["images"]) == 1
    image = j["images"][0]
    w, h = image["width"], image["height"]
    assert max(w, h) <= MAX_DIM
    assert len(image["data"]) <= MAX_B64
    assert j["metadata"]["dimensions"] == {"width": src_w, "height": src_h}
    if (w, h) == (src_w, src_h):
        assert "resized" not in j["metadata"]
        return image
    from_long, to_long = max(src_w, src_h), max(w, h)
    scale = f"{from_long / to_long:.3f}"
    assert j["metadata"]["resized"] == {"from": {"width": src_w, "height": src_h},
                                        "to": {"width": w, "height": h},
                                        "scale": float(scale)}
    assert (f"[Image: original {src_w}x{src_h}, shown at {w}x{h}; multiply coordinates by "
            f"{scale} to map back]") in j["content"]
    assert j["shortResult"].endswith(f", shown at {w}x{h}")
    ratio = to_long / from_long
    assert abs(w - src_w * ratio) <= 1 and abs(h - src_h * ratio) <= 1
    return image


@pytest.mark.parametrize("name", sorted(gen_fit.OVER))
def test_images_over_a_limit_are_fitted(fit_dir, toolfs_read, name):
    path = fit_dir / name
    with Image.open(path) as src:
        assert src.size == gen_fit.OVER[name]
        src_w, src_h = src.size
        src.seek(0)
        first_frame = src.convert("RGB")
    assert max(src_w, src_h) > MAX_DIM or len(path.read_bytes()) * 4 / 3 > MAX_B64

    r = toolfs_read(path)
    assert r.rc == 0, r.json
    image = check_fitted(r.json, src_w, src_h)
    im = decoded(image)
    assert im.mode in ("RGB", "RGBA", "L", "LA", "P")  # 8-bit, whatever the source depth
    assert looks_alike(im, first_frame.resize(im.size, Image.LANCZOS)), name


def test_formats_chosen_by_the_fit(fit_dir, toolfs_read):
    """JPEG stays JPEG; PNG stays PNG when it fits; a PNG photo that does not fit becomes JPEG."""
    media = {name: toolfs_read(fit_dir / name).json["images"][0]["mediaType"]
             for name in gen_fit.OVER}
    assert media["noisy_4000x3000.jpg"] == "image/jpeg"
    for name in ("wide_8000x600.png", "screenshot_300x9000.png", "deep16_2400x1800.png",
                 "animated_4000.gif"):
        assert media[name] == "image/png", name
    for name in ("photo_12mp.png", "noise_b64_only.png"):
        assert media[name] == "image/jpeg", name
        assert "Converted to JPEG for viewing." in toolfs_read(fit_dir / name).json["content"]


def test_animated_gif_shows_its_first_frame(fit_dir, toolfs_read):
    j = toolfs_read(fit_dir / "animated_4000.gif").json
    im = decoded(j["images"][0]).convert("RGB")
    # The left end of every frame is its background colour; frame 1 is red.
    pixel = im.getpixel((2, im.height - 2))
    assert all(abs(a - b) <= 12 for a, b in zip(pixel, gen_fit.GIF_FRAMES[0])), pixel
    assert f"Only the first of its {len(gen_fit.GIF_FRAMES)} frames is shown." in j["content"]


def test_sixteen_bit_png_keeps_its_colours(fit_dir, toolfs_read):
    """The 16-bit gradient runs from red (top) to blue (bottom): scaled to 8 bits, not cut."""
    j = toolfs_read(fit_dir / "deep16_2400x1800.png").json
    im = decoded(j["images"][0]).convert("RGB")
    top, bottom = im.getpixel((im.width // 2, 0)), im.getpixel((im.width // 2, im.height - 1))
    assert top[0] >= 250 and top[2] <= 5, top
    assert bottom[2] >= 250 and bottom[0] <= 5, bottom


def test_only_base64_over_the_limit_keeps_the_size(fit_dir, toolfs_read):
    j = toolfs_read(fit_dir / "noise_b64_only.png").json
    image = j["images"][0]
    assert (image["width"], image["height"]) == gen_fit.OVER["noise_b64_only.png"]
    assert "resized" not in j["metadata"]
    assert j["shortResult"].endswith(", converted to JPEG")


@pytest.mark.parametrize("name", sorted(gen_fit.WITHIN))
def test_images_within_the_limits_are_byte_identical(fit_dir, toolfs_read, name):
    path = fit_dir / name
    j = toolfs_read(path).json
    assert j["success"] is True
    assert "resized" not in j["metadata"]
    image = j["images"][0]
    assert base64.b64decode(image["data"], validate=True) == path.read_bytes()
    assert (image["width"], image["height"]) == gen_fit.WITHIN[name]
    assert image["mediaType"] == j["mimeType"]


def test_smaller_limits_are_obeyed(fit_dir, toolfs_read):
    path = fit_dir / "small.jpg"
    j = toolfs_read(path, "--image_max_dim", "500").json
    image = check_fitted(j, 640, 480)
    assert (image["width"], image["height"]) == (500, 375)
    assert j["metadata"]["resized"]["scale"] == 1.28
    j = toolfs_read(path, "--image_max_b64", "60K").json
    image = j["images"][0]
    assert len(image["data"]) <= 60 * 1024
    decoded(image)


def magick_decode(path: pathlib.Path) -> Image.Image:
    """An oracle independent of libvips for what Pillow cannot read (HEIC, AVIF)."""
    png = subprocess.run(["convert", str(path), "PNG24:-"], check=True,
                         capture_output=True).stdout
    return Image.open(io.BytesIO(png))


@pytest.mark.parametrize("name", sorted(gen_fit.CONVERTED))
def test_other_formats_are_converted(fit_dir, toolfs_read, name):
    fmt, width, height = gen_fit.CONVERTED[name]
    path = fit_dir / name
    r = toolfs_read(path)
    assert r.rc == 0, r.json
    j = r.json
    assert j["contentType"] == "image"
    image = j["images"][0]
    assert image["mediaType"] == "image/png"
    assert (image["width"], image["height"]) == (width, height)
    assert j["metadata"]["dimensions"] == {"width": width, "height": height}
    assert "resized" not in j["metadata"]
    assert j["content"].startswith(f"{fmt} image, {width}x{height} pixels, ")
    assert "Converted to PNG for viewing." in j["content"]
    assert j["shortResult"].endswith(", converted to PNG")
    im = decoded(image)
    if fmt in ("HEIC", "AVIF"):
        source = magick_decode(path)
    else:
        source = Image.open(path)  # Pillow opens an icon's largest image
        assert source.format == fmt
    assert source.size == (width, height)
    assert looks_alike(im, source, tolerance=4.0), name


def test_icon_shows_its_largest_image(fit_dir, toolfs_read):
    j = toolfs_read(fit_dir / "small.ico").json
    assert "The largest of its 3 images is shown." in j["content"]


def test_big_bmp_is_converted_and_fitted(fit_dir, toolfs_read):
    j = toolfs_read(fit_dir / "big.bmp").json
    assert j["mimeType"] == "image/bmp"
    assert j["images"][0]["mediaType"] in ("image/png", "image/jpeg")
    assert j["metadata"]["resized"]["to"]["width"] == MAX_DIM


@pytest.mark.parametrize("name", ["small.bmp", "small.ico"])
def test_formats_without_a_loader_are_unsupported_by_name(fit_dir, build_dir, name):
    """VIPS_BLOCK_UNTRUSTED=1 blocks libvips's ImageMagick loaders, the only ones for BMP and
    ICO: those formats are then unsupported, by name, not corrupt."""
    fmt = gen_fit.CONVERTED[name][0]
    env = dict(os.environ, VIPS_BLOCK_UNTRUSTED="1")
    proc = subprocess.run([str(build_dir / "cli" / "toolfs-read"), "--", str(fit_dir / name)],
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 1
    j = __import__("json").loads(proc.stdout)
    validate_result(j)
    assert j["errorCode"] == "unsupported"
    assert j["error"] == f"Unsupported image format: {fmt} (no libvips loader for it is available)"
    assert "images" not in j


def test_notebook_image_outputs_are_fitted(fit_dir, toolfs_read):
    import nbformat

    nb = nbformat.read(str(fit_dir / "fit.ipynb"), as_version=4)
    sources = []
    for out in nb.cells[1].outputs:
        for mime in ("image/png", "image/jpeg"):
            if mime in out.data:
                sources.append((mime, base64.b64decode(out.data[mime])))
    j = toolfs_read(fit_dir / "fit.ipynb").json
    assert j["success"] is True
    assert len(j["images"]) == len(gen_fit.NOTEBOOK_IMAGES) == len(sources)
    for n, (image, (w, h), (mime, raw)) in enumerate(
            zip(j["images"], gen_fit.NOTEBOOK_IMAGES, sources), start=1):
        assert image["cell"] == 2
        assert max(image["width"], image["height"]) <= MAX_DIM
        assert len(image["data"]) <= MAX_B64
        im = decoded(image)
        if max(w, h) <= MAX_DIM and len(raw) * 4 / 3 <= MAX_B64:
            assert base64.b64decode(image["data"]) == raw
            assert f"[image {n}: {mime} {w}x{h}, attached]" in j["content"]
            continue
        tw, th = image["width"], image["height"]
        ratio = max(tw, th) / max(w, h)
        assert abs(tw - w * ratio) <= 1 and abs(th - h * ratio) <= 1
        assert (f"[image {n}: {mime} {w}x{h}, shown at {tw}x{th} as {image['mediaType']}; "
                f"multiply coordinates by {max(w, h) / max(tw, th):.3f} to map back, attached]"
                ) in j["content"]
        source = Image.open(io.BytesIO(raw))
        assert looks_alike(im, source.resize(im.size, Image.LANCZOS))


@pytest.mark.parametrize("args,long_edge,max_b64", [
    ((), 1568, MAX_B64),
    (("--image_max_dim", "1000"), 1000, MAX_B64),
    (("--image_max_b64", "200K"), None, 200 * 1024),
])
def test_pdf_page_renders_obey_the_limits(fit_dir, toolfs_read, args, long_edge, max_b64):
    # OCR off: the photo's OCR may take 80% of the read's budget on a loaded machine and leave
    # the render none; this test is about the render's limits
    j = toolfs_read(fit_dir / "photo.pdf", "--select", "1", "--ocr", "off", *args).json
    assert j["success"] is True
    image = j["images"][0]
    assert image["page"] == 1
    assert len(image["data"]) <= max_b64
    decoded(image)
    w, h = image["width"], image["height"]
    if long_edge:
        assert max(w, h) == long_edge
    assert abs(w / h - 612 / 792) < 0.01
    assert re.search(r"\b1 page image\b", j["shortResult"])


@pytest.mark.parametrize("name,render", [("photo.pdf", "JPEG"), ("text.pdf", "PNG")])
def test_pdf_page_render_never_passes_image_max_b64(fit_dir, tmp_path, toolfs_read, name,
                                                    render):
    """An image_max_b64 no render of the page fits (100 bytes of base64): no image past it; the
    page says why. Before: the render (JPEG for the photo, PNG for text) came back whole (965 KB
    and 63 KB)."""
    path = fit_dir / name
    if name == "text.pdf":
        path = tmp_path / name
        gen_pdfs.text_pdf(path, 1)
    j = toolfs_read(path, "--select", "1", "--ocr", "off", "--image_max_b64", "100").json
    assert j["success"] is True
    assert "images" not in j, [len(image["data"]) for image in j["images"]]
    assert re.search(r"\[page 1: could not be rendered: no image of it fits image_max_b64 "
                     r"\(100 bytes of base64\)[^]\n]*\]\n", j["content"]), j["content"]


def _bomb_png(path: pathlib.Path, width: int, height: int) -> None:
    """A real PNG of width x height grey pixels of one value: a decompression bomb of a few MB
    (every row deflated, so any decoder must inflate width x height bytes)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))
    comp = zlib.compressobj(1)
    rows = (b"\0" + b"\x40" * width) * 1000
    idat = bytearray()
    for first in range(0, height, 1000):
        n = min(1000, height - first)
        idat += comp.compress(rows if n == 1000 else rows[:n * (width + 1)])
    idat += comp.flush()
    path.write_bytes(b"\x89PNG\r\n\x1a\n"
                     + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", bytes(idat)) + chunk(b"IEND", b""))


def test_decompression_bomb_is_refused_from_its_header(tmp_path, toolfs_read):
    bomb = tmp_path / "bomb.png"
    _bomb_png(bomb, 32000, 32000)
    assert bomb.stat().st_size < 20 << 20
    r = toolfs_read(bomb, "--format", "tool", timeout=30)
    assert r.rc == 1
    assert r.json["errorCode"] == "too_large"
    assert r.json["error"] == ("Image cannot be made to fit: 32000x32000 is 1024000000 pixels, "
                               "more than the 268435456 (16384x16384) toolfs decodes to downscale")
    validate_result(r.json)


def test_largest_decoded_source_still_fits(tmp_path, toolfs_read):
    """16384x16384 is exactly the pixel limit: decoded (sequentially) and downscaled."""
    edge = tmp_path / "edge.png"
    _bomb_png(edge, 16384, 16384)
    r = toolfs_read(edge, timeout=120)
    assert r.rc == 0, r.json
    assert r.json["metadata"]["resized"] == {"from": {"width": 16384, "height": 16384},
                                             "to": {"width": 2000, "height": 2000},
                                             "scale": 8.192}
    im = decoded(r.json["images"][0])
    assert im.size == (2000, 2000) and ImageStat.Stat(im.convert("L")).extrema[0] == (64, 64)


@pytest.mark.parametrize("size", [(7, 16000), (16000, 3), (1, 9000), (3, 130)])
def test_sliver_jpegs_are_fitted(tmp_path, toolfs_read, size):
    """A JPEG whose short edge is smaller than the decoder's shrink (libvips 8.14's jpegload
    aborts the process on a 0-pixel edge) is fitted like any other: one pixel wide at least."""
    path = tmp_path / "sliver.jpg"
    Image.new("RGB", size, (200, 10, 10)).save(path, quality=90)
    r = toolfs_read(path, "--image-max-dim", "24" if size == (3, 130) else "2000")
    assert r.rc == 0, r.stdout
    image = r.json["images"][0]
    assert min(image["width"], image["height"]) >= 1
    im = decoded(image)
    assert looks_alike(im, Image.new("RGB", im.size, (200, 10, 10)))
