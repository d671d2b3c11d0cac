# SPDX-License-Identifier: MIT
"""Plots that do not grow when fitted (issue 37 item 6, docs/SPEC.md §3 "Images"): a matplotlib
plot just over image_max_dim (2000 px) resampled by a few percent gets a colour per pixel along
every anti-aliased line, and its full-colour PNG came back 1.5 to 2.5 times the source's bytes.
A fitted image is never larger than a PNG, JPEG, GIF or WebP source: here a PNG of 256 colours
(metadata.resized.saving "palette"), the picture still the source's (oracle: Pillow's own
Lanczos downscale); a fit that saves bytes as it is stays full-colour. As notebook outputs, the
same, within SPEC's memory bound for notebooks (3 times the size plus 64 MiB, peak RSS)."""
import base64
import io
import pathlib

import pytest
from PIL import Image, ImageChops, ImageStat

from conftest import validate_result
from test_notebooks import _peak_rss_kib
from worker_util import modules_linked_in

import gen_plots

MAX_DIM = 2000


@pytest.fixture(scope="module")
def plots(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots")
    gen_plots.generate(out)
    return out


def decoded(image: dict) -> tuple:
    raw = base64.b64decode(image["data"], validate=True)
    return raw, Image.open(io.BytesIO(raw))


def on_white(im: Image.Image) -> Image.Image:
    """What is seen: the colours over white (those of transparent pixels do not count)."""
    return Image.alpha_composite(Image.new("RGBA", im.size, "white"), im.convert("RGBA"))


def mean_difference(a: Image.Image, b: Image.Image) -> float:
    return max(ImageStat.Stat(ImageChops.difference(on_white(a), on_white(b))).mean)


def lanczos(path: pathlib.Path, size) -> Image.Image:
    return Image.open(path).convert("RGBA").resize(size, Image.LANCZOS)


@pytest.mark.parametrize("name", list(gen_plots.PLOTS) + [gen_plots.TRANSPARENT_PLOT[0]])
def test_a_plot_just_over_the_limit_is_not_larger_than_its_source(plots, toolfs_read, name):
    source = (plots / name).read_bytes()
    w, h = Image.open(plots / name).size
    r = toolfs_read(plots / name)
    assert r.rc == 0, r.json
    validate_result(r.json)
    image = r.json["images"][0]
    raw, im = decoded(image)
    assert len(raw) <= len(source), f"fitted {len(raw)} bytes, source {len(source)}"
    assert max(im.size) == MAX_DIM and im.size == (image["width"], image["height"])
    assert abs(im.size[0] / im.size[1] - w / h) < 0.002
    assert image["mediaType"] == "image/png" and im.format == "PNG" and im.mode == "P"
    resized = r.json["metadata"]["resized"]
    assert resized["saving"] == "palette"
    assert resized["from"] == {"width": w, "height": h}
    assert ("[The attached image is encoded with 256 colours, as the full-colour PNG at this "
            "size was larger than the source]") in r.json["content"]
    assert mean_difference(im, lanczos(plots / name, im.size)) < 1.0
    if name == gen_plots.TRANSPARENT_PLOT[0]:
        alpha = im.convert("RGBA").getchannel("A")
        assert "transparency" in im.info and alpha.getextrema() == (0, 255)
        want = lanczos(plots / name, im.size).getchannel("A")
        assert ImageStat.Stat(ImageChops.difference(alpha, want)).mean[0] < 1.0


def test_a_jpeg_just_over_the_limit_is_not_larger_than_its_source(plots, toolfs_read):
    name = gen_plots.JPEG_PHOTO[0]
    source = (plots / name).read_bytes()
    r = toolfs_read(plots / name)
    assert r.rc == 0, r.json
    image = r.json["images"][0]
    raw, im = decoded(image)
    assert len(raw) <= len(source), f"fitted {len(raw)} bytes, source {len(source)}"
    assert image["mediaType"] == "image/jpeg" and max(im.size) == MAX_DIM
    assert r.json["metadata"]["resized"]["saving"] == "jpeg"
    assert ("[The attached image is encoded at a lower JPEG quality, as the first was larger "
            "than the source]") in r.json["content"]
    # the same picture (its noise is what JPEG gives up): compared at an eighth of the size
    small = (im.size[0] // 8, im.size[1] // 8)
    assert mean_difference(im.resize(small, Image.BOX),
                           lanczos(plots / name, im.size).resize(small, Image.BOX)) < 4.0


def test_a_plot_shrunk_by_half_or_more_stays_full_colour(plots, toolfs_read):
    """The rule is for fits by less than half: a plot of 4030x2812 is shrunk on load by 2."""
    name = gen_plots.BIG_PLOT[0]
    r = toolfs_read(plots / name)
    assert r.rc == 0, r.json
    raw, im = decoded(r.json["images"][0])
    assert len(raw) <= (plots / name).stat().st_size
    assert im.mode == "RGBA" and max(im.size) == MAX_DIM
    assert "saving" not in r.json["metadata"]["resized"]
    assert "The attached image is" not in r.json["content"]


def test_notebook_plots_are_not_larger_than_their_outputs_within_the_memory_bound(
        plots, toolfs_read, build_dir):
    import json

    nb = plots / gen_plots.NOTEBOOK
    size = nb.stat().st_size
    rc, out, peak = _peak_rss_kib([str(build_dir / "cli" / "toolfs-read"), "--", str(nb)])
    assert rc == 0, out[:300]
    j = json.loads(out)
    assert len(j["images"]) == len(gen_plots.PLOTS)
    for n, (image, name) in enumerate(zip(j["images"], gen_plots.PLOTS), start=1):
        raw, im = decoded(image)
        source = (plots / name).read_bytes()
        assert len(raw) <= len(source), f"image {n}: fitted {len(raw)} bytes, source {len(source)}"
        assert max(im.size) == MAX_DIM
        assert mean_difference(im, lanczos(plots / name, im.size)) < 1.0
        w, h = Image.open(plots / name).size
        assert (f"[image {n}: image/png {w}x{h}, shown at {im.size[0]}x{im.size[1]} as image/png "
                "(encoded with 256 colours, as the full-colour PNG at this size was larger than "
                "the source); multiply coordinates by") in j["content"]
    bound_kib = (3 * size + 64 * 1024 * 1024) // 1024
    print(f"peak RSS {peak} KiB for a {size}-byte notebook (bound {bound_kib} KiB)")
    if not modules_linked_in(build_dir):  # a sanitizer's shadow memory is not toolfs's
        assert peak <= bound_kib, f"peak RSS {peak} KiB > {bound_kib} KiB"
