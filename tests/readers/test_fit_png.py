# SPDX-License-Identifier: MIT
"""PNG shrink-on-load (docs/SPEC.md §3 "Images"): a PNG whose long edge is at least twice
image_max_dim is decoded at 1/N of its size, each N x N block of pixels averaged (alpha-weighted)
as it inflates. Every kind it takes must come back as the exact block means of the pixels Pillow
decodes from the same file (within 1 for rounding); the kinds it declines and damaged pixel data
take libvips' path as before; the PNG toolfs writes holds IHDR, IDAT and IEND only."""
import base64
import io
import struct

import pytest
from PIL import Image

import gen_png_shrink

MAX_DIM = 100
FACTOR = gen_png_shrink.WIDTH // MAX_DIM
OUT_SIZE = (MAX_DIM, -(-gen_png_shrink.HEIGHT // FACTOR))  # 100x16: no resize after the shrink


@pytest.fixture(scope="module")
def png_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("png_shrink")
    gen_png_shrink.generate(out)
    return out


def fitted(toolfs_read, path) -> tuple:
    """Reads path with image_max_dim 100; returns (result, PNG bytes of images[0])."""
    r = toolfs_read(path, "--image_max_dim", MAX_DIM)
    assert r.rc == 0, r.json
    image = r.json["images"][0]
    assert image["mediaType"] == "image/png"
    return r.json, base64.b64decode(image["data"], validate=True)


def block_means(src: Image.Image, factor: int) -> list:
    """The oracle: per factor x factor block (partial at the edges) the mean of each colour
    weighted by alpha (0 where all is transparent) and the mean alpha, rounded."""
    w, h = src.size
    bands = len(src.getbands())
    has_alpha = src.mode in ("LA", "RGBA")
    pixels = [p if isinstance(p, tuple) else (p,) for p in src.getdata()]
    out = []
    for by in range(0, h, factor):
        for bx in range(0, w, factor):
            block = [pixels[y * w + x] for y in range(by, min(h, by + factor))
                     for x in range(bx, min(w, bx + factor))]
            if not has_alpha:
                out.append(tuple(int(sum(p[b] for p in block) / len(block) + 0.5)
                                 for b in range(bands)))
                continue
            alpha = sum(p[-1] for p in block)
            colours = tuple(int(sum(p[b] * p[-1] for p in block) / alpha + 0.5) if alpha else 0
                            for b in range(bands - 1))
            out.append(colours + (int(alpha / len(block) + 0.5),))
    return out


@pytest.mark.parametrize("name", sorted(gen_png_shrink.SHRUNK))
def test_shrunk_on_load_gives_the_block_means(png_dir, toolfs_read, name):
    doc, png = fitted(toolfs_read, png_dir / name)
    assert doc["metadata"]["resized"]["to"] == {"width": OUT_SIZE[0], "height": OUT_SIZE[1]}
    with Image.open(png_dir / name) as src:
        src.load()
        if src.mode == "P":
            src = src.convert("RGBA" if "transparency" in src.info else "RGB")
        want_mode = src.mode
        want = block_means(src, FACTOR)
    got = Image.open(io.BytesIO(png))
    assert got.mode == want_mode  # palettes expanded, alpha kept
    assert got.size == OUT_SIZE
    worst = max(abs(a - b) for g, w in zip(got.getdata(), want)
                for a, b in zip(g if isinstance(g, tuple) else (g,), w))
    assert worst <= 1, f"{name}: a block mean is off by {worst}"


@pytest.mark.parametrize("name", sorted(gen_png_shrink.DECLINED) + list(gen_png_shrink.DAMAGED))
def test_other_pngs_are_fitted_by_libvips(png_dir, toolfs_read, name):
    """16 bits, interlacing, a colour key and damaged pixel data are libvips' to decode (it
    fills what it cannot read): fitted all the same, within the limit and decodable."""
    doc, png = fitted(toolfs_read, png_dir / name)
    got = Image.open(io.BytesIO(png))
    got.load()
    assert max(got.size) == MAX_DIM
    # libvips' own resize rounds the short edge from the source's size: 61 / 4 -> 15.
    assert got.size == (MAX_DIM, round(gen_png_shrink.HEIGHT / FACTOR))
    assert doc["metadata"]["resized"]["scale"] == FACTOR


def test_written_png_holds_only_its_pixels(png_dir, toolfs_read):
    """The encoder writes IHDR, one IDAT and IEND: no text, time or profile chunk."""
    _, png = fitted(toolfs_read, png_dir / "rgba.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    kinds, pos = [], 8
    while pos < len(png):
        length = struct.unpack(">I", png[pos:pos + 4])[0]
        kinds.append(png[pos + 4:pos + 8])
        pos += 12 + length
    assert pos == len(png)
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
