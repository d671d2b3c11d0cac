# SPDX-License-Identifier: MIT
"""Region selectors (issue 26 item 3, docs/SPEC.md §4): WxH+X+Y crops an image from its
full-resolution source before it is fitted, P@WxH+X+Y zooms into a rectangle of a PDF page's
image. Through toolfs-read, the mount's virtual names and the MCP server's `region` argument.

Oracles: Pillow's crop + resize of the same source file (pixel by pixel, within a small
tolerance), Pillow's measure of the inked box of text in renders, and the rectangle's arithmetic
(clipping) done here."""
import base64
import io
import os
import pathlib
import re

import pytest
from PIL import Image, ImageChops, ImageOps, ImageStat

from fixtures import gen_regions
from mount_util import mounted

from test_mcp import Bridge, mcp_bin, read  # noqa: F401

MAPPING = re.compile(r"a point \(x, y\) of the attached image is \((\d+) \+ x \* ([0-9.]+), "
                     r"(\d+) \+ y \* ([0-9.]+)\) in the (original|page image)")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    src = tmp_path_factory.mktemp("regions") / "src"
    gen_regions.generate(src)
    return src


def attached(result: dict) -> Image.Image:
    assert len(result["images"]) == 1
    img = Image.open(io.BytesIO(base64.b64decode(result["images"][0]["data"])))
    assert img.size == (result["images"][0]["width"], result["images"][0]["height"])
    return img.convert("RGB")


def mean_difference(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference of two same-sized RGB images, 0-255."""
    assert a.size == b.size
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def pillow_region(path: pathlib.Path, box: tuple, size: tuple) -> Image.Image:
    """The oracle: Pillow's crop of the full-resolution source, resized to size (Lanczos)."""
    x, y, w, h = box
    src = Image.open(path).convert("RGB")
    crop = src.crop((x, y, x + w, y + h))
    return crop if crop.size == size else crop.resize(size, Image.Resampling.LANCZOS)


# (selector, the rectangle clipped to 2400x1800, image_max_dim)
CROPS = [
    ("800x600+1200+400", (1200, 400, 800, 600), 2000),      # inside, shown at its own size
    ("1800x1200+300+450", (300, 450, 1800, 1200), 600),     # inside, shrunk 3x
    ("1000x1000+1900+1500", (1900, 1500, 500, 300), 2000),  # partly outside: clipped
    ("333x77+0+0", (0, 0, 333, 77), 2000),                  # the corner, odd sizes
]


@pytest.mark.parametrize("name", sorted(gen_regions.IMAGES))
@pytest.mark.parametrize("sel,box,max_dim", CROPS)
def test_crop_equals_pillow_crop_and_resize(tree, toolfs_read, name, sel, box, max_dim):
    r = toolfs_read(tree / name, "--select", sel, "--image_max_dim", max_dim)
    assert r.rc == 0, r.json["error"]
    doc = r.json
    x, y, w, h = box
    assert doc["metadata"]["region"] == {"x": x, "y": y, "width": w, "height": h}
    assert doc["metadata"]["dimensions"] == {"width": gen_regions.W, "height": gen_regions.H}
    img = attached(doc)
    scale = max(w, h) / max(img.size)
    if max(w, h) <= max_dim:
        assert img.size == (w, h)
        assert "resized" not in doc["metadata"]
    else:
        assert max(img.size) == max_dim
        assert doc["metadata"]["resized"]["from"] == {"width": w, "height": h}
    want = pillow_region(tree / name, box, img.size)
    diff = mean_difference(img, want)
    # lossless sources, shrunk or not: nearly exact; JPEG: re-encoded and shrunk in the DCT
    assert diff < (4.0 if name.endswith(".jpg") else 1.5), diff
    # the tolerance is far below what a crop off by 20 pixels gives
    shifted = pillow_region(tree / name, (x + 20 if x < 1000 else x - 20, y, w, h), img.size)
    assert mean_difference(img, shifted) > 2 * diff + 1
    # the content line maps the attached image back to the source
    m = MAPPING.search(doc["content"])
    assert m and m.group(5) == "original", doc["content"]
    assert (int(m.group(1)), int(m.group(3))) == (x, y)
    assert float(m.group(2)) == pytest.approx(scale, abs=0.0005)
    assert f"region {w}x{h}+{x}+{y} shown at {img.size[0]}x{img.size[1]}" in doc["shortResult"]


@pytest.mark.parametrize("name", sorted(gen_regions.IMAGES))
@pytest.mark.parametrize("sel", ["10x10+2400+0", "10x10+0+1800", "4294967295x1+4294967295+0"])
def test_a_region_wholly_outside_is_out_of_range(tree, toolfs_read, name, sel):
    r = toolfs_read(tree / name, "--select", sel)
    assert r.rc == 1
    w, h, x, y = map(int, re.split(r"[x+]", sel))
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == (f"Region {w}x{h}+{x}+{y} is outside the 2400x1800 image "
                               "(X must be below 2400 and Y below 1800)")
    assert not r.json.get("images")


def test_a_page_past_an_image_is_out_of_range(tree, toolfs_read):
    r = toolfs_read(tree / "shot.png", "--select", "2@10x10+0+0")
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"].startswith("Part 2 is past the end of the image")
    r = toolfs_read(tree / "shot.png", "--select", "1@10x10+5+6")
    assert r.rc == 0 and r.json["metadata"]["region"] == {"x": 5, "y": 6, "width": 10,
                                                           "height": 10}


def test_a_region_of_a_text_file_is_out_of_range(tree, toolfs_read):
    r = toolfs_read(tree / "notes.txt", "--select", "10x10+0+0")
    assert r.rc == 1 and r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == ("Region selectors (10x10+0+0) apply to PNG, JPEG, GIF and WebP "
                               "images and PDF pages only; this file is read by the text reader")


@pytest.mark.parametrize("sel", ["0x10+0+0", "10x0+0+0", "10x10+01+0", "10x10+0", "10x10",
                                 "10X10+0+0", "10x10-1+0", "0@10x10+0+0", "@10x10+0+0",
                                 "1@2@10x10+0+0", "4294967296x1+0+0", "1x1+0+4294967296",
                                 "10x10+0+0+0", " 10x10+0+0"])
def test_selectors_that_do_not_parse(tree, toolfs_read, sel):
    r = toolfs_read(tree / "shot.png", "--select", sel)
    assert r.rc == 2
    assert "invalid selector" in r.err and "WxH+X+Y" in r.err


def test_txt_format_carries_the_mapping(tree, toolfs_read):
    r = toolfs_read(tree / "shot.png", "--select", "800x600+1200+400", "--format", "txt")
    assert r.rc == 0
    assert "[Region 800x600+1200+400 shown at 800x600; a point (x, y) of the attached image " \
           "is (1200 + x * 1.000, 400 + y * 1.000) in the original]" in r.text


def inked_box(img: Image.Image) -> tuple:
    """The bounding box of dark pixels (text on white)."""
    box = ImageOps.invert(img.convert("L")).point(lambda v: 255 if v > 96 else 0).getbbox()
    assert box, "no ink"
    return box


def test_pdf_region_is_a_real_zoom(tree, toolfs_read):
    page = toolfs_read(tree / "report.pdf", "--select", "2")
    assert page.rc == 0
    page_img = attached(page.json)
    assert page_img.size == (1212, 1568)
    left, top, right, bottom = inked_box(page_img)
    # a rectangle around the text line, in page-image pixels
    x, y, w, h = left - 20, top - 20, right - left + 40, bottom - top + 40
    r = toolfs_read(tree / "report.pdf", "--select", f"2@{w}x{h}+{x}+{y}")
    assert r.rc == 0, r.json["error"]
    doc = r.json
    assert doc["metadata"]["region"] == {"x": x, "y": y, "width": w, "height": h}
    assert doc["images"][0]["page"] == 2
    zoomed = attached(doc)
    assert max(zoomed.size) == 1568
    zoom = 1568 / max(w, h)
    assert zoom > 3
    z_left, z_top, z_right, z_bottom = inked_box(zoomed)
    glyphs_page = bottom - top
    glyphs_zoomed = z_bottom - z_top
    # the text is drawn again at the zoom: its height scales with it (an upscale of the page
    # image would too, but blurred; so the edges are checked as well)
    assert glyphs_zoomed == pytest.approx(glyphs_page * zoom, rel=0.12)
    assert z_left == pytest.approx(20 * zoom, abs=zoom + 2)
    # sharp: pure black and pure white pixels dominate, unlike an upscaled render
    grey = zoomed.convert("L")
    hist = grey.histogram()
    ink = sum(hist[:64])
    blur = sum(hist[64:192])
    assert blur < ink / 2, (ink, blur)
    upscaled = page_img.crop((x, y, x + w, y + h)).resize(zoomed.size,
                                                          Image.Resampling.BICUBIC).convert("L")
    up_hist = upscaled.histogram()
    assert sum(up_hist[64:192]) > 2 * blur
    m = MAPPING.search(doc["content"])
    assert m and m.group(5) == "page image"
    assert (int(m.group(1)), int(m.group(3))) == (x, y)
    assert float(m.group(2)) == pytest.approx(1 / zoom, abs=0.0005)
    assert doc["content"].startswith(f"--- Page 2, region {w}x{h}+{x}+{y} ---\n")
    assert gen_regions.PDF_TEXT not in doc["content"]
    assert doc["shortResult"] == (f"Read PDF: region {w}x{h}+{x}+{y} of page 2 of 3, shown at "
                                  f"{zoomed.size[0]}x{zoomed.size[1]}")


def test_pdf_region_clipped_and_outside(tree, toolfs_read):
    r = toolfs_read(tree / "report.pdf", "--select", "3@5000x5000+1000+1500")
    assert r.rc == 0
    assert r.json["metadata"]["region"] == {"x": 1000, "y": 1500, "width": 212, "height": 68}
    assert attached(r.json).size == (1568, round(68 * 1568 / 212))
    r = toolfs_read(tree / "report.pdf", "--select", "3@10x10+1212+0")
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == ("Region 10x10+1212+0 is outside page 3's 1212x1568 page image "
                               "(X must be below 1212 and Y below 1568)")
    r = toolfs_read(tree / "report.pdf", "--select", "4@10x10+0+0")
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == "Page 4 is past the end of the document (3 pages)"
    # without P@, page 1
    r = toolfs_read(tree / "report.pdf", "--select", "10x10+0+0")
    assert r.rc == 0 and r.json["images"][0]["page"] == 1


@pytest.mark.mount
def test_virtual_names_through_a_mount(tree, build_dir, toolfs_read, tmp_path):
    with mounted(build_dir / "fs" / "toolfs", tree, tmp_path / "mnt") as m:
        for name, sel in [("shot.png", "800x600+1200+400"), ("photo.jpg", "1x1+2399+1799"),
                          ("report.pdf", "2@400x300+100+100")]:
            sibling = m.path / f"{name}:{sel}.tool.json"
            data = sibling.read_bytes()
            assert os.stat(sibling).st_size == len(data)
            assert data == toolfs_read(name, "--select", sel, cwd=tree).out
            txt = (m.path / f"{name}:{sel}.tool.txt").read_text()
            assert "a point (x, y) of the attached image is" in txt
        assert not (m.path / "shot.png:0x600+1+1.tool.json").exists()
        out = m.path / "shot.png:9x9+5000+0.tool.json"
        assert '"errorCode":"out_of_range"' in out.read_text()
        assert not any(":" in n for n in os.listdir(m.path))


@pytest.fixture(scope="module")
def client(mcp_bin, tree):
    bridge = Bridge()
    bridge.send({"op": "connect", "command": str(mcp_bin), "args": [str(tree)]})
    yield bridge
    bridge.close()


def mcp_image(result: dict) -> Image.Image:
    blocks = [b for b in result["content"] if b["type"] == "image"]
    assert len(blocks) == 1
    return Image.open(io.BytesIO(base64.b64decode(blocks[0]["data"]))).convert("RGB")


def test_mcp_region_through_the_sdk(client, tree):
    got = read(client, file_path="shot.png", region="800x600+1200+400")
    assert not got.get("isError")
    img = mcp_image(got)
    assert img.size == (800, 600)
    assert mean_difference(img, pillow_region(tree / "shot.png", (1200, 400, 800, 600),
                                              img.size)) < 1.5
    text = "".join(b["text"] for b in got["content"] if b["type"] == "text")
    assert "(1200 + x * 1.000, 400 + y * 1.000)" in text
    # the server fits to 1568 px
    got = read(client, file_path="photo.jpg", region="2400x1800+0+0")
    assert mcp_image(got).size == (1568, 1176)
    got = read(client, file_path="report.pdf", region="2@400x300+100+100")
    assert not got.get("isError")
    assert mcp_image(got).size == (1568, 1176)


@pytest.mark.parametrize("arguments,word", [
    ({"region": "0x1+0+0"}, "region must be"), ({"region": 5}, "region must be"),
    ({"region": "3"}, "region must be"), ({"region": "1x1+0+0", "pages": "1"}, "region alone"),
    ({"region": "1x1+0+0", "offset": 2}, "region alone"),
])
def test_mcp_bad_region_is_an_argument_error(client, arguments, word):
    got = read(client, file_path="shot.png", **arguments)
    assert got["isError"] is True
    assert got["content"][0]["text"].startswith("Invalid arguments for read: ")
    assert word in got["content"][0]["text"]


def test_mcp_region_out_of_range_is_a_result(client):
    got = read(client, file_path="shot.png", region="5x5+2400+0")
    assert got["isError"] is True
    assert "is outside the 2400x1800 image" in got["content"][0]["text"]


def test_provider_formats_carry_the_region(tree, toolfs_read):
    tool = toolfs_read(tree / "shot.png", "--select", "800x600+1200+400").json
    for fmt in ("anthropic", "openai", "mcp"):
        r = toolfs_read(tree / "shot.png", "--select", "800x600+1200+400", "--format", fmt)
        assert r.rc == 0
        text = r.out.decode()
        assert tool["images"][0]["data"] in text, fmt
        assert "(1200 + x * 1.000, 400 + y * 1.000)" in text, fmt


def test_a_region_of_a_decompression_bomb_is_refused_from_its_header(tmp_path, toolfs_read):
    from test_fit import _bomb_png
    bomb = tmp_path / "bomb.png"
    _bomb_png(bomb, 32000, 32000)
    r = toolfs_read(bomb, "--select", "10x10+0+0", timeout=30)
    assert r.rc == 1 and r.json["errorCode"] == "too_large"
    assert r.json["error"].startswith("Image cannot be made to fit: 32000x32000 is 1024000000 "
                                      "pixels")


def test_a_region_at_the_top_of_a_large_png_decodes_only_its_rows(tmp_path, toolfs_read):
    from test_fit import _bomb_png
    edge = tmp_path / "edge.png"
    _bomb_png(edge, 16384, 16384)
    r = toolfs_read(edge, "--select", "64x32+16000+0", timeout=60)
    assert r.rc == 0
    img = attached(r.json)
    assert img.size == (64, 32)
    assert img.getextrema() == ((0x40, 0x40),) * 3


def test_a_region_of_an_svg_names_the_formats_that_take_one(tmp_path, toolfs_read):
    svg = tmp_path / "a.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50">'
                   '<rect width="100" height="50" fill="red"/></svg>\n')
    r = toolfs_read(svg, "--select", "10x10+0+0")
    assert r.rc == 1 and r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == ("Region selectors (10x10+0+0) apply to PNG, JPEG, GIF and WebP "
                               "images and PDF pages only; this file is read by the svg reader")
