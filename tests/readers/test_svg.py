# SPDX-License-Identifier: MIT
"""SVG and SVGZ (issue 26 item 2, docs/SPEC.md §3 "SVG"): the render against rsvg-convert (the
same librsvg) at the same size, pixel by pixel with Pillow; sizes; the numbered source and its
selectors; every hostile case (no file, http: URL, XInclude, external entity or other document
is ever loaded; entity expansion and render time bounded); through toolfs-read, a real mount and
the MCP server (an image block image/png)."""
import base64
import gzip
import io
import json
import os
import pathlib
import socket
import shutil
import subprocess
import threading
import time

import pytest
from PIL import Image, ImageChops

from fixtures import gen_svg
from mount_util import mounted



def cat_n(text: str, first: int = 1, last: int = None) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    last = last or len(lines)
    return "".join(f"{n:6d}\t{lines[n - 1]}\n" for n in range(first, last + 1))


class Listener:
    """A local TCP listener that counts the connections it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture(scope="module")
def fx(tmp_path_factory, listener) -> pathlib.Path:
    out = tmp_path_factory.mktemp("svg")
    gen_svg.generate(out, http_port=listener.port)
    return out


def png_of(result: dict, index: int = 0) -> Image.Image:
    image = result["images"][index]
    assert image["mediaType"] == "image/png"
    im = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    assert im.format == "PNG" and im.size == (image["width"], image["height"])
    return im.convert("RGBA")


def rsvg_convert(path, width=None, height=None) -> Image.Image:
    args = ["rsvg-convert"] + (["-w", str(width), "-h", str(height)] if width else []) + [
        str(path)]
    out = subprocess.run(args, capture_output=True, check=True, timeout=120).stdout
    return Image.open(io.BytesIO(out)).convert("RGBA")


def assert_close(got: Image.Image, want: Image.Image, max_mean=0.5, max_off=0.002):
    """Equal sizes; mean absolute channel difference under max_mean; under max_off of the pixels
    with a channel off by more than 8."""
    assert got.size == want.size
    diff = ImageChops.difference(got, want)
    hist = diff.histogram()
    total = got.size[0] * got.size[1]
    mean = sum(v * (i % 256) for i, v in enumerate(hist)) / (4 * total)
    assert mean <= max_mean, f"mean channel difference {mean:.3f}"
    off = sum(1 for px in diff.getdata() if max(px) > 8)
    assert off <= max_off * total, f"{off} of {total} pixels differ by more than 8"


def assert_transparent(im: Image.Image):
    assert im.getextrema()[3] == (0, 0), "something was drawn: an external resource loaded"


# ---- the render -----------------------------------------------------------------------------


@pytest.mark.parametrize("name,own,shown", [
    ("chart.svg", (800, 500), (800, 500)),
    ("huge.svg", (100000, 62500), (2000, 1250)),  # drawn at the target, never at 100000
    ("viewbox.svg", (240, 120), (240, 120)),      # no width/height: the viewBox
    ("prolog.svg", (64, 32), (64, 32)),           # BOM, declaration, comment, doctype, prefix
    ("chart.svgz", (800, 500), (800, 500)),
])
def test_render_equals_rsvg_convert_at_the_same_size(toolfs_read, fx, name, own, shown):
    r = toolfs_read(fx / name)
    assert r.rc == 0, r.json
    j = r.json
    assert j["contentType"] == "image" and j["mimeType"] == "image/svg+xml"
    assert j["metadata"]["dimensions"] == {"width": own[0], "height": own[1]}
    assert len(j["images"]) == 1
    got = png_of(j)
    assert got.size == shown
    if own != shown:
        resized = j["metadata"]["resized"]
        assert resized["from"] == {"width": own[0], "height": own[1]}
        assert resized["to"] == {"width": shown[0], "height": shown[1]}
        assert resized["scale"] == pytest.approx(own[0] / shown[0], rel=1e-3)
    else:
        assert "resized" not in j["metadata"]
    assert_close(got, rsvg_convert(fx / name, *shown))


def boxed(path: pathlib.Path, box, size) -> pathlib.Path:
    """The document's drawing in a sized copy whose viewBox is box: what it looks like cropped
    to box, as an independent rsvg-convert render."""
    text = path.read_text()
    inner = text[text.index(">", text.index("<svg")) + 1:text.rindex("</svg>")]
    out = path.with_name("boxed_" + path.name)
    out.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{size[0]}" '
                   f'height="{size[1]}" viewBox="{" ".join(map(str, box))}">{inner}</svg>\n')
    return out


# The drawings' ink corners, known from their geometry (gen_svg: the red rect's stroke; offset.svg
# moves it by (-500, -300)).
@pytest.mark.parametrize("name,corner", [
    ("percent.svg", (10, 10)), ("negative.svg", (8.5, 18.25)), ("nosize.svg", (8.5, 18.25)),
    ("percent_mixed.svg", (8.5, 18.25)), ("offset.svg", (-491.5, -281.75)),
    ("percent_viewbox.svg", None)])
def test_a_sizeless_svg_is_drawn_at_its_bounding_box_as_rsvg_convert(toolfs_read, fx, name,
                                                                     corner):
    """Issue 37 item 5: no usable width/height and no viewBox: the drawing's ink box, the size
    rsvg-convert gives. rsvg-convert 2.54 then draws from the user space's origin, cutting off
    what lies left of or above it (all of offset.svg); toolfs draws from the box's corner, so the
    pixels are compared with rsvg-convert's render of the drawing with that box as its viewBox."""
    j = toolfs_read(fx / name).json
    size = rsvg_convert(fx / name).size
    got = png_of(j)
    assert got.size == size
    assert j["metadata"]["dimensions"] == {"width": size[0], "height": size[1]}
    assert "resized" not in j["metadata"]
    want = rsvg_convert(boxed(fx / name, corner + size, size) if corner else fx / name)
    assert_close(got, want)


def test_a_sizeless_svg_larger_than_image_max_dim_is_fitted(toolfs_read, fx):
    assert rsvg_convert(fx / "wide_sizeless.svg").size == (5000, 400)
    j = toolfs_read(fx / "wide_sizeless.svg").json
    assert j["metadata"]["dimensions"] == {"width": 5000, "height": 400}
    assert j["metadata"]["resized"]["to"] == {"width": 2000, "height": 160}
    want = rsvg_convert(boxed(fx / "wide_sizeless.svg", (100, 100, 5000, 400), (2000, 160)))
    assert_close(png_of(j), want)


def test_an_empty_sizeless_svg_is_the_default_canvas(toolfs_read, fx):
    assert subprocess.run(["rsvg-convert", str(fx / "empty.svg")],
                          capture_output=True).returncode != 0
    j = toolfs_read(fx / "empty.svg").json
    assert png_of(j).size == (1024, 768)
    assert j["metadata"]["dimensions"] == {"width": 1024, "height": 768}
    assert_transparent(png_of(j))


def test_image_max_dim_and_image_max_b64(toolfs_read, fx):
    j = toolfs_read(fx / "chart.svg", "--image_max_dim", "400").json
    assert png_of(j).size == (400, 250)
    assert_close(png_of(j), rsvg_convert(fx / "chart.svg", 400, 250))
    # a base64 budget the 800x500 PNG does not meet: drawn smaller until it fits
    full = len(toolfs_read(fx / "chart.svg").json["images"][0]["data"])
    j = toolfs_read(fx / "chart.svg", "--image_max_b64", str(full // 2)).json
    assert len(j["images"][0]["data"]) <= full // 2
    assert png_of(j).size[0] < 800


# ---- the source -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chart.svg", "chart.svgz", "prolog.svg"])
def test_content_is_the_numbered_source(toolfs_read, fx, name):
    raw = (fx / name).read_bytes()
    text = (gzip.decompress(raw) if name.endswith("z") else raw).decode("utf-8-sig")
    j = toolfs_read(fx / name).json
    assert j["content"] == cat_n(text)
    total = len(text.splitlines())
    assert j["range"] == {"unit": "line", "start": 1, "end": total, "total": total}
    assert j["shortResult"].startswith("Read SVG image ")


def test_selectors_give_source_lines_without_the_render(toolfs_read, fx):
    text = (fx / "long.svg").read_text()
    default = toolfs_read(fx / "long.svg").json
    assert default["truncated"] and len(default["images"]) == 1
    assert default["next"].startswith("long.svg:")
    j = toolfs_read(fx / "long.svg", "--select", "40-80").json
    assert j["success"] and j["contentType"] == "image" and j["mimeType"] == "image/svg+xml"
    assert j["content"] == cat_n(text, 40, 80)
    assert "images" not in j
    assert j["range"]["start"] == 40 and j["range"]["end"] == 80
    assert j["next"] == "long.svg:81-2080.tool.json"
    past = toolfs_read(fx / "long.svg", "--select", "5000")
    assert past.json["errorCode"] == "out_of_range"
    # a .svgz: lines of the inflated document
    text = gzip.decompress((fx / "chart.svgz").read_bytes()).decode()
    j = toolfs_read(fx / "chart.svgz", "--select", "3-5").json
    assert j["content"] == cat_n(text, 3, 5) and "images" not in j


def test_an_svg_root_outside_the_svg_namespace_is_text(toolfs_read, fx):
    j = toolfs_read(fx / "nonamespace.svg").json
    assert j["contentType"] == "text"


def test_broken_svg_is_corrupt_with_the_parser_reason_and_its_source(toolfs_read, fx):
    r = toolfs_read(fx / "broken.svg")
    assert r.rc == 1
    j = r.json
    assert j["errorCode"] == "corrupt" and j["contentType"] == "image"
    assert j["error"].startswith("Failed to parse SVG: XML parse error: ")
    assert "Premature end of data" in j["error"]
    assert j["content"].endswith(cat_n((fx / "broken.svg").read_text()))


def test_a_renderer_that_aborts_is_corrupt_naming_the_signal(toolfs_read, build_dir, tmp_path):
    """librsvg 2.54 panics on a text whose font FreeType cannot scale (text.rs: "assertion
    failed: h >= 0.0") and, unable to unwind into C, aborts: found by fuzz_svg in CI. Pango's
    warning before it went through GLib's log writer, whose journald probe (getpeername) the
    worker's filter killed: the error named the probe, not the crash. The read is corrupt
    naming SIGABRT; the source stays readable by lines (a selector renders nothing), and the
    mount serves on."""
    f = tmp_path / "hugefont.svg"
    f.write_text('<svg xmlns="http://www.w3.org/2000/svg"><text x="190" '
                 'font-size="433333333333333333" fill="black">sizeless</text></svg>\n')
    r = toolfs_read(f)
    j = r.json
    assert r.rc == 1 and j["errorCode"] == "corrupt", j
    assert "SIGABRT" in j["error"] and "syscall" not in j["error"], j["error"]
    assert j["content"] == j["error"]
    lines = toolfs_read(f, "--select", "1").json
    assert lines["success"] and lines["content"] == cat_n(f.read_text())
    with mounted(build_dir / "fs" / "toolfs", tmp_path, tmp_path.parent / "mnt-hugefont") as m:
        sib = json.loads((m.path / "hugefont.svg.tool.json").read_bytes())
        assert sib["errorCode"] == "corrupt" and "SIGABRT" in sib["error"]
        assert (m.path / "hugefont.svg").read_bytes() == f.read_bytes()


def test_a_broken_svg_shows_its_source_in_txt_and_provider_formats(toolfs_read, fx):
    want = toolfs_read(fx / "broken.svg").json["content"]
    assert "The SVG source:\n     1\t<svg " in want
    assert toolfs_read(fx / "broken.svg", "--format", "txt").text == want
    mcp = toolfs_read(fx / "broken.svg", "--format", "mcp").json
    assert mcp["isError"] and mcp["content"][0]["text"] == want
    anthropic = toolfs_read(fx / "broken.svg", "--format", "anthropic").json
    assert anthropic["is_error"] and anthropic["content"][0]["text"] == want


def test_svgz_failures(toolfs_read, fx):
    j = toolfs_read(fx / "truncated.svgz").json
    assert j["errorCode"] == "corrupt" and "inflate" in j["error"]
    j = toolfs_read(fx / "bomb.svgz", "--max_image_size", "1M").json
    assert j["errorCode"] == "too_large" and "inflates past" in j["error"]
    assert toolfs_read(fx / "bomb.svgz").json["success"]


# ---- hostile documents ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["file_uri.svg", "file_uri_xlink.svg", "relative.svg",
                                  "use_other.svg", "xinclude.svg", "css_import.svg"])
def test_no_file_is_loaded(toolfs_read, fx, name):
    # the control: rsvg-convert, given the file's path as base, loads the reference
    assert rsvg_convert(fx / name).getextrema()[3][1] == 255
    r = toolfs_read(fx / name)
    assert r.rc == 0, r.json
    assert_transparent(png_of(r.json))
    assert gen_svg.SECRET.encode() not in r.out


@pytest.mark.parametrize("name", ["xxe.svg", "xxe_param.svg"])
def test_external_entities_are_not_loaded(toolfs_read, fx, name):
    r = toolfs_read(fx / name)
    assert r.json["errorCode"] == "corrupt"
    assert "not defined" in r.json["error"] or "not found" in r.json["error"]
    assert gen_svg.SECRET.encode() not in r.out


def test_http_urls_are_never_fetched(toolfs_read, fx, listener):
    r = toolfs_read(fx / "http.svg")
    assert r.rc == 0
    assert_transparent(png_of(r.json))
    time.sleep(0.3)
    assert listener.connections == 0
    # the control: the listener does count a connection
    socket.create_connection(("127.0.0.1", listener.port)).close()
    deadline = time.monotonic() + 5
    while listener.connections == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listener.connections == 1


def test_billion_laughs_is_refused_fast(build_dir, fx):
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", str(build_dir / "cli" / "toolfs-read"),
                           "--", str(fx / "laughs.svg")], capture_output=True, timeout=60)
    assert time.monotonic() - start < 5
    j = json.loads(proc.stdout)
    assert j["errorCode"] == "corrupt"
    assert "entity reference loop" in j["error"]
    # 10^9 "lol"s would be 3 GB: the read and its render child stay small
    assert int(proc.stderr.decode().split()[-1]) < 100 * 1024


@pytest.mark.parametrize("name", ["slow.svg", "million.svg"])
def test_pathological_renders_stop_at_the_budget(build_dir, fx, name):
    binary = build_dir / "cli" / "toolfs-read"
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", str(binary), "--max_render_ms", "500",
                           "--", str(fx / name)], capture_output=True, timeout=60)
    elapsed = time.monotonic() - start
    j = json.loads(proc.stdout)
    assert j["errorCode"] in ("timeout", "too_large"), j["error"]
    assert elapsed < 3, f"{elapsed:.1f}s for a 500 ms budget"
    # the read and its render child together (time(1) counts waited children)
    assert int(proc.stderr.decode().split()[-1]) < 1100 * 1024
    # the source is still shown
    assert "\n     1\t<svg " in j["content"]


# The render's process (the user nobody, no new privileges, none of the reading process's
# descriptors) is the reader worker's: tests/sandbox/test_sandbox.py
# test_worker_holds_only_its_socket_and_the_file checks it for every family, SVG included.


# slow: (and under AddressSanitizer the worker has no address-space limit to stop it early)
@pytest.mark.slow
def test_pathological_render_without_a_short_budget_is_bounded(toolfs_read, fx):
    start = time.monotonic()
    j = toolfs_read(fx / "slow.svg").json
    assert j["errorCode"] in ("timeout", "too_large")
    assert time.monotonic() - start < 15


# ---- the other front ends -------------------------------------------------------------------


def test_txt_format_shows_the_numbered_source(toolfs_read, fx):
    text = toolfs_read(fx / "chart.svg", "--format", "txt").text
    assert text == (cat_n((fx / "chart.svg").read_text())
                    + "\n[image 1: image/png 800x500, in chart.svg.tool.json or the MCP read "
                      "tool]\n")


def test_provider_formats_carry_a_png(toolfs_read, fx):
    mcp = toolfs_read(fx / "chart.svg", "--format", "mcp").json
    assert [b["type"] for b in mcp["content"]] == ["text", "image"]
    assert mcp["content"][1]["mimeType"] == "image/png"
    anthropic = toolfs_read(fx / "chart.svg", "--format", "anthropic").json
    assert anthropic["content"][1]["source"]["media_type"] == "image/png"
    openai = toolfs_read(fx / "chart.svg", "--format", "openai").json
    assert openai["output"][1]["image_url"].startswith("data:image/png;base64,")


def test_mcp_server_gives_an_image_block_png(build_dir, fx):
    from test_mcp import Bridge

    bridge = Bridge()
    try:
        bridge.send({"op": "connect", "command": str(build_dir / "mcp" / "toolfs-mcp"),
                     "args": [str(fx)]})
        got = bridge.send({"op": "call", "name": "read",
                           "arguments": {"file_path": "huge.svg"}})
        assert got["ok"] and got["schemaOk"]
        blocks = got["result"]["content"]
        assert [b["type"] for b in blocks] == ["text", "image"]
        assert blocks[1]["mimeType"] == "image/png"
        im = Image.open(io.BytesIO(base64.b64decode(blocks[1]["data"])))
        assert im.size == (1568, 980)  # the server's image_max_dim
        assert blocks[0]["text"] == cat_n((fx / "huge.svg").read_text())
    finally:
        bridge.close()


@pytest.mark.mount
def test_mount_shows_source_and_render(build_dir, fx, toolfs_read, tmp_path):
    (tmp_path / "mnt").mkdir()
    with mounted(build_dir / "fs" / "toolfs", fx, tmp_path / "mnt") as m:
        txt = (m.path / "chart.svg.tool.txt").read_text()
        assert txt.startswith(cat_n((fx / "chart.svg").read_text()))
        assert "[image 1: image/png 800x500" in txt
        data = (m.path / "chart.svg.tool.json").read_bytes()
        assert data == toolfs_read("chart.svg", cwd=fx).out
        assert os.stat(m.path / "chart.svg.tool.json").st_size == len(data)
        lines = json.loads((m.path / "long.svg:40-80.tool.json").read_bytes())
        assert lines["content"] == cat_n((fx / "long.svg").read_text(), 40, 80)
        assert "images" not in lines
        hostile = json.loads((m.path / "relative.svg.tool.json").read_bytes())
        assert_transparent(png_of(hostile))


def test_missing_module_is_unsupported_and_still_shows_the_source(build_dir, fx, tmp_path):
    if not (build_dir / "readers" / "toolfs-svg.so").exists():
        pytest.skip("this build links the modules into its executables")
    # the reader worker is there (the read goes to it, docs/SPEC.md §8); the module is not
    shutil.copy(build_dir / "readers" / "toolfs-reader-worker", tmp_path)
    proc = subprocess.run([str(build_dir / "cli" / "toolfs-read"), str(fx / "chart.svg")],
                          capture_output=True, timeout=60,
                          env={**os.environ, "TOOLFS_MODULE_DIR": str(tmp_path)})
    j = json.loads(proc.stdout)
    assert proc.returncode == 1 and j["errorCode"] == "unsupported"
    assert j["error"] == ("SVG rendering needs librsvg: toolfs's module toolfs-svg.so is not "
                          f"installed in {tmp_path}")
    assert j["content"].endswith("\n\nThe SVG source:\n" + cat_n((fx / "chart.svg").read_text()))


@pytest.mark.mount
def test_mount_stops_a_slow_render_and_goes_on_serving(build_dir, fx, tmp_path):
    (tmp_path / "mnt").mkdir()
    with mounted(build_dir / "fs" / "toolfs", fx, tmp_path / "mnt",
                 "-o", "max_render_ms=500") as m:
        results = {}

        def read(name):
            results[name] = json.loads((m.path / f"{name}.tool.json").read_bytes())

        start = time.monotonic()
        threads = [threading.Thread(target=read, args=(n,)) for n in ("slow.svg", "million.svg")]
        for t in threads:
            t.start()
        read("chart.svg")  # read while the two renders run
        for t in threads:
            t.join(timeout=30)
        assert time.monotonic() - start < 5
        assert results["chart.svg"]["success"]
        for name in ("slow.svg", "million.svg"):
            assert results[name]["errorCode"] in ("timeout", "too_large"), results[name]["error"]
        # the daemon serves on, and renders the next SVG
        read("viewbox.svg")
        assert png_of(results["viewbox.svg"]).size == (240, 120)
