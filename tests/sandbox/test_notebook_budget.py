# SPDX-License-Identifier: MIT
"""Notebook image outputs under the read's time budget (issue 35; docs/SPEC.md §3 "Render time"
and "Notebooks"): a notebook of many 16384x16384 PNG outputs, each a second or so of libvips
decoding to be fitted, is answered within max_render_ms as a success with every cell's text and
the images fitted in time; each image output not fitted is noted in its place. Before, the worker
was killed 2 s past the budget and the whole read was `timeout`, its text lost.

Oracles: nbformat (the cells' sources, from /usr/bin/python3's Debian package), Pillow (each
image attached decodes and is within image_max_dim and image_max_b64), and the note's exact
words. The count of images done depends on the machine's speed: the test asserts their order
(the images attached are the first outputs; then at most one stopped fit; then only fits not
started), never a time."""
import base64
import io
import json
import re
import subprocess

import nbformat
import pytest
from PIL import Image

from budget_util import answer, rpc
from fixtures import gen_huge_png_notebook as gen
from test_sandbox_workers import no_worker_left, wait_for_workers

BUDGET_MS = 2000
# 40 images of about a second each: far past the budget on any machine.
COPIES = 40
SIDE = gen.SIDE
REF = re.compile(r"^\[image (\d+): image/png (\d+)x(\d+)(, shown at (\d+)x(\d+) as image/png"
                 r"; multiply coordinates by [0-9.]+ to map back)?, attached\]$")


def stopped(budget=BUDGET_MS) -> str:
    return (f"[image output omitted: image/png {SIDE}x{SIDE}, timeout: not fitted within "
            f"max_render_ms ({budget} ms), fitting stopped]")


def not_started(name, cell, budget=BUDGET_MS, hint=True) -> str:
    """The note of a fit not started; the hint when earlier fits took the time."""
    return (f"[image output omitted: image/png {SIDE}x{SIDE}, timeout: not fitted within "
            f"max_render_ms ({budget} ms), not started, the time went to earlier work"
            + (f"; read {name}:{cell}.tool.json to show it alone]" if hint else "]"))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    src = tmp_path_factory.mktemp("nbbudget")
    gen.write(src / "huge.ipynb", COPIES)
    gen.write(src / "one.ipynb", 1)
    (src / "sibling.txt").write_text("sibling\n")
    return src


def cell_texts(content: str) -> dict:
    """{cell number: its text} of a notebook result's content."""
    out, cell = {}, None
    for line in content.splitlines():
        m = re.match(r"^--- Cell (\d+) \[", line)
        if m:
            cell = int(m.group(1))
            out[cell] = ""
        elif cell is not None:
            out[cell] += line + "\n"
    return out


def check_result(path, content: str, images: list, max_dim: int, max_b64: int,
                 budget=BUDGET_MS) -> int:
    """Checks content and images (decoded bytes, in order) against the notebook at path: every
    cell's source and stream text, each image output either attached (a valid image within the
    limits) or noted; the images attached come first, then at most one stopped fit, then fits
    not started. Returns how many huge images were attached."""
    nb = nbformat.read(str(path), as_version=4)
    cells = cell_texts(content)
    assert sorted(cells) == list(range(1, len(nb.cells) + 1)), content[:2000]
    states = []
    for i, cell in enumerate(nb.cells, 1):
        assert cell.source in cells[i], (i, cells[i])
        if cell.cell_type != "code":
            continue
        assert f"TOKEN-OUT-{i}\n" in cells[i]
        line = [x for x in cells[i].splitlines() if x.startswith("[")]
        assert len(line) == 1, cells[i]
        m = REF.match(line[0])
        if m:
            assert int(m.group(1)) == len(states) + 1 and not any(s != "shown" for s in states)
            assert (int(m.group(2)), int(m.group(3))) == (SIDE, SIDE)
            states.append("shown")
        elif line[0] == stopped(budget):
            assert "stopped" not in states and "not started" not in states, states
            states.append("stopped")
        else:
            # nothing else: a fit of an earlier cell (done or stopped) makes the hint name it
            hint = "shown" in states or "stopped" in states
            assert line[0] == not_started(path.name, i, budget, hint), line[0]
            states.append("not started")
    shown = states.count("shown")
    assert len(images) == shown
    for data in images:
        assert len(base64.b64encode(data)) <= max_b64
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            assert im.format == "PNG" and max(im.size) == max_dim, im.size
    return shown


def test_cli_answers_the_images_done_and_notes_the_rest(toolfs_read, tree):
    r = toolfs_read("huge.ipynb", "--max_render_ms", BUDGET_MS, cwd=tree)
    assert r.rc == 0, r.out[:2000]
    doc = r.json
    assert doc["success"] and doc["contentType"] == "notebook", doc.get("error")
    images = [base64.b64decode(i["data"]) for i in doc.get("images", [])]
    shown = check_result(tree / "huge.ipynb", doc["content"], images, 2000, 5 * 1024 * 1024)
    assert shown < COPIES
    assert all(i["cell"] == n + 2 for n, i in enumerate(doc.get("images", [])))
    assert doc["shortResult"].endswith(
        f", {COPIES - shown} images not fitted (timeout)"), doc["shortResult"]


def test_cli_one_huge_image_past_the_budget(toolfs_read, tree):
    """The notebook's one image cannot be fitted within 1 ms: its note, not a whole-read
    timeout (the fit is stopped by libvips' eval signal, or, when the budget passed before it
    began, not started, without a hint: nothing else took the time)."""
    r = toolfs_read("one.ipynb", "--max_render_ms", 1, cwd=tree)
    assert r.rc == 0 and r.json["success"], r.out[:2000]
    cells = cell_texts(r.json["content"])
    note = [x for x in cells[2].splitlines() if x.startswith("[")]
    assert note in ([stopped(1)], [not_started("one.ipynb", 2, 1, hint=False)]), note
    assert "images" not in r.json
    assert "TOKEN-NB-END" in cells[3]


def mcp_server(build_dir, tree, *args):
    proc = subprocess.Popen([str(build_dir / "mcp" / "toolfs-mcp"), *args, str(tree)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    rpc(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}})
    assert answer(proc, 60)["id"] == 0
    rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def mcp_read(proc, rid, name):
    rpc(proc, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
               "params": {"name": "read", "arguments": {"file_path": name}}})


def test_mcp_answers_the_images_done_and_notes_the_rest(build_dir, tree):
    proc = mcp_server(build_dir, tree, "--max-render-ms", str(BUDGET_MS))
    try:
        mcp_read(proc, 1, "huge.ipynb")
        msg = answer(proc, 300)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    result = msg["result"]
    assert not result.get("isError"), result["content"][0]["text"][:2000]
    blocks = result["content"]
    assert blocks[0]["type"] == "text"
    images = [base64.b64decode(b["data"]) for b in blocks if b["type"] == "image"]
    # toolfs-mcp's limits: image_max_dim 1568, image_max_b64 1 MiB
    check_result(tree / "huge.ipynb", blocks[0]["text"], images, 1568, 1024 * 1024)


def test_mcp_cancel_ends_a_notebook_read(build_dir, tree):
    """notifications/cancelled for a notebook read (a budget of 10 minutes: only the cancel
    ends it): its worker goes, the call is never answered, the next call is."""
    proc = mcp_server(build_dir, tree, "--max-render-ms", "600000")
    try:
        mcp_read(proc, 7, "huge.ipynb")
        assert len(wait_for_workers(build_dir, proc.pid, 1, 30)) == 2
        rpc(proc, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "the user gave up"}})
        left = wait_for_workers(build_dir, proc.pid, 0, 20)
        assert len(left) == 1, f"the notebook's worker still runs after the cancel: {left}"
        mcp_read(proc, 8, "sibling.txt")
        msg = answer(proc, 60)
        assert msg["id"] == 8 and msg["result"]["content"][0]["text"] == "     1\tsibling\n"
    finally:
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
    assert [json.loads(x) for x in rest.splitlines() if json.loads(x).get("id") == 7] == []
    assert no_worker_left(build_dir, proc.pid)
