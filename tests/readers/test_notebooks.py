# SPDX-License-Identifier: MIT
"""The notebook reader through toolfs-read: sources verbatim, outputs, ANSI removal, images,
caps and next, parse error positions, non-notebooks, selectors (docs/SPEC.md §3 "Notebooks")."""
import base64
import hashlib
import importlib.util
import io
import json
import pathlib
import re

import nbformat
import pytest
from PIL import Image

TESTS = pathlib.Path(__file__).resolve().parents[1]
MAX_OUTPUT = 100 * 1024
CELL_OUTPUT_CHARS = 10000
# ECMA-48 CSI sequences and OSC strings: the oracle for "no terminal escapes left".
CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
NEXT = re.compile(r"^(?P<name>.+):(?P<start>[1-9][0-9]*)-\.tool\.json$")


def _load_generator(name: str = "gen_notebooks"):
    spec = importlib.util.spec_from_file_location(name, TESTS / "fixtures" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def nbdir(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("notebooks")
    gen.generate(out)
    return out


def read_ok(toolfs_read, path, *args):
    r = toolfs_read(path, *args)
    assert r.rc == 0, r.out
    assert r.json["success"] and r.json["contentType"] == "notebook"
    return r.json


def joined(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def cell_block(content: str, index: int) -> str:
    """The text of cell index: from its header to the next cell's header."""
    start = content.index(f"\n--- Cell {index} [")
    end = content.find(f"\n--- Cell {index + 1} [", start + 1)
    return content[start:] if end < 0 else content[start:end]


def test_basic_sources_verbatim_and_metadata(toolfs_read, nbdir):
    path = nbdir / "basic.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    res = read_ok(toolfs_read, path)
    content = res["content"]
    assert content.startswith(f"Jupyter notebook: python, {len(nb.cells)} cells, nbformat 4.5\n")
    for i, cell in enumerate(nb.cells, 1):
        block = cell_block(content, i)
        header = block.split("\n")[1]
        assert header.startswith(f"--- Cell {i} [{cell.cell_type}]")
        if cell.cell_type == "code":
            count = cell.execution_count
            assert header == f"--- Cell {i} [code] In [{count if count else ' '}] ---"
        assert f"{header}\n{cell.source}\n" in block
    assert res["mimeType"] == "application/x-ipynb+json"
    assert res["range"] == {"unit": "cell", "start": 1, "end": len(nb.cells),
                            "total": len(nb.cells)}
    assert res["truncated"] is False and "next" not in res
    meta = res["metadata"]
    raw = path.read_bytes()
    assert meta["cellCount"] == len(nb.cells)
    assert meta["language"] == nb.metadata.kernelspec.language == "python"
    assert meta["nbformat"] == f"{nb.nbformat}.{nb.nbformat_minor}"
    assert meta["size"] == len(raw)
    assert meta["sha256"] == hashlib.sha256(raw).hexdigest()
    assert res["shortResult"] == f"Read notebook: {len(nb.cells)} cells (1-{len(nb.cells)} of " \
                                 f"{len(nb.cells)}), 2 images"


def test_basic_outputs(toolfs_read, nbdir):
    path = nbdir / "basic.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    content = read_ok(toolfs_read, path)["content"]
    assert "\x1b" not in content
    for i, cell in enumerate(nb.cells, 1):
        block = cell_block(content, i)
        for k, out in enumerate(cell.get("outputs", []), 1):
            assert f"--- Output {k} ({out.output_type}" in block
            if out.output_type == "stream" and "\r" not in out.text:
                assert f"--- Output {k} (stream {out.name}) ---\n{out.text}" in block
            elif out.output_type == "execute_result":
                assert f"--- Output {k} (execute_result) Out [{out.execution_count}] ---\n" \
                       f"{out.data['text/plain']}\n" in block
                html = out.data["text/html"]
                assert f"[text/html output omitted; {len(html)} chars]" in block
            elif out.output_type == "error":
                lines = [f"{out.ename}: {out.evalue}"] + [CSI.sub("", t) for t in out.traceback]
                assert f"--- Output {k} (error) ---\n" + "\n".join(lines) + "\n" in block
    # The tqdm stream: each carriage return starts the line over, as in a terminal.
    assert "--- Output 1 (stream stderr) ---\n100%|###| 3/3\n" in cell_block(content, 6)


def test_basic_images(toolfs_read, nbdir):
    path = nbdir / "basic.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    res = read_ok(toolfs_read, path)
    expected = []
    for i, cell in enumerate(nb.cells, 1):
        for out in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg"):
                if mime in out.get("data", {}):
                    expected.append((i, mime, base64.b64decode(out.data[mime])))
    assert len(expected) == 2
    assert len(res["images"]) == len(expected)
    for n, (image, (cell, mime, raw)) in enumerate(zip(res["images"], expected), 1):
        data = base64.b64decode(image["data"], validate=True)
        assert data == raw
        assert image["cell"] == cell and image["mediaType"] == mime
        with Image.open(io.BytesIO(data)) as pil:
            assert (image["width"], image["height"]) == pil.size
        ref = f"[image {n}: {mime} {pil.size[0]}x{pil.size[1]}, attached]"
        assert ref in cell_block(res["content"], cell)


def test_v3_notebook(toolfs_read, nbdir):
    path = nbdir / "v3.ipynb"
    raw = json.loads(path.read_text())
    cells = raw["worksheets"][0]["cells"]
    res = read_ok(toolfs_read, path)
    content = res["content"]
    assert content.startswith(f"Jupyter notebook: python, {len(cells)} cells, nbformat 3.0\n")
    assert res["metadata"]["nbformat"] == "3.0"
    assert res["metadata"]["cellCount"] == len(cells)
    for i, cell in enumerate(cells, 1):
        block = cell_block(content, i)
        source = joined(cell["input"] if cell["cell_type"] == "code" else cell["source"])
        assert source + "\n" in block
        if cell["cell_type"] == "heading":
            assert f"--- Cell {i} [heading {cell['level']}] ---" in block
        if cell["cell_type"] == "code":
            assert f"--- Cell {i} [code] In [{cell['prompt_number']}] ---" in block
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                assert f"(stream {out['stream']}) ---\n{joined(out['text'])}" in block
            elif out["output_type"] == "pyout":
                assert f"(pyout) Out [{out['prompt_number']}] ---\n{joined(out['text'])}\n" \
                       in block
            elif out["output_type"] == "pyerr":
                assert f"{out['ename']}: {out['evalue']}\n" in block
                assert CSI.sub("", out["traceback"][0]) + "\n" in block
    assert "\x1b" not in content
    [image] = res["images"]
    png = base64.b64decode(cells[3]["outputs"][0]["png"])
    assert base64.b64decode(image["data"]) == png
    assert image["cell"] == 4 and image["mediaType"] == "image/png"
    with Image.open(io.BytesIO(png)) as pil:
        assert (image["width"], image["height"]) == pil.size


def long_output(nbdir):
    nb = nbformat.read(str(nbdir / "long_output.ipynb"), as_version=4)
    return nb.cells[1].outputs[0].text


def test_cell_output_cap(toolfs_read, nbdir):
    text = long_output(nbdir)
    assert len(text) == 50000
    res = read_ok(toolfs_read, nbdir / "long_output.ipynb")
    header = "--- Output 1 (stream stdout) ---\n"
    total = len(header) + len(text) + (0 if text.endswith("\n") else 1)
    shown = text[:CELL_OUTPUT_CHARS - len(header)]
    note = f"[... output truncated: {CELL_OUTPUT_CHARS} of {total} chars shown; " \
           f"read long_output.ipynb:2.tool.json for all of it]\n"
    block = cell_block(res["content"], 2)
    assert block.endswith(header + shown + ("" if shown.endswith("\n") else "\n") + note)
    assert "--- Cell 3 [markdown] ---\nA cell after the long one.\n" in res["content"]
    assert res["truncated"] is True and "next" not in res
    assert res["range"] == {"unit": "cell", "start": 1, "end": 3, "total": 3}


def test_single_cell_shows_whole_output(toolfs_read, nbdir):
    text = long_output(nbdir)
    res = read_ok(toolfs_read, nbdir / "long_output.ipynb", "--select", "2")
    assert "--- Output 1 (stream stdout) ---\n" + text in res["content"]
    assert "truncated" not in res["content"]
    assert res["range"] == {"unit": "cell", "start": 2, "end": 2, "total": 3}
    assert res["next"] == "long_output.ipynb:3-.tool.json"
    assert res["shortResult"] == "Read notebook: 1 cell (2-2 of 3)"


def test_single_cell_byte_cap(toolfs_read, nbdir):
    text = long_output(nbdir)
    res = read_ok(toolfs_read, nbdir / "long_output.ipynb", "--select", "2-2",
                  "--max-output", "20K")
    content = res["content"]
    assert len(content.encode()) <= 20 * 1024
    header = "--- Output 1 (stream stdout) ---\n"
    m = re.search(r"\n\[\.\.\. output truncated: (\d+) of (\d+) chars shown; the rest is in the "
                  r"raw notebook\]\n$", content)
    assert m, content[-300:]
    kept, total = int(m.group(1)), int(m.group(2))
    assert total == len(header) + len(text) + (0 if text.endswith("\n") else 1)
    assert 10000 < kept < total
    shown = text[:kept - len(header)]
    newline = "" if shown.endswith("\n") else "\n"
    assert content.endswith(header + shown + newline + m.group(0)[1:])


def test_content_cap_and_next_cover_every_cell(toolfs_read, nbdir):
    path = nbdir / "many_cells.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    assert len(path.read_bytes()) > MAX_OUTPUT
    seen, args, reads = [], [], 0
    while True:
        res = read_ok(toolfs_read, path, *args)
        reads += 1
        content = res["content"]
        assert len(content.encode()) <= MAX_OUTPUT
        rng = res["range"]
        assert rng["total"] == 300
        for i in range(rng["start"], rng["end"] + 1):
            cell = nb.cells[i - 1]
            block = cell_block(content, i)
            assert f"--- Cell {i} [code] In [{i}] ---\n{cell.source}\n" in block
            assert cell.outputs[0].text in block
        seen.extend(range(rng["start"], rng["end"] + 1))
        if "next" not in res:
            assert rng["end"] == 300
            break
        assert res["truncated"] is True
        m = NEXT.match(res["next"])
        assert m and m["name"] == "many_cells.ipynb" and int(m["start"]) == rng["end"] + 1
        # The next cell did not fit: adding it would pass max_output.
        assert f"--- Cell {rng['end'] + 1} [" not in content
        args = ["--select", f"{m['start']}-"]
    assert seen == list(range(1, 301))
    assert reads > 2


def test_broken_json_position_matches_python(toolfs_read, nbdir):
    path = nbdir / "broken.ipynb"
    with pytest.raises(json.JSONDecodeError) as err:
        json.loads(path.read_text(encoding="utf-8"))
    r = toolfs_read(path)
    assert r.rc == 1
    assert r.json["contentType"] == "notebook"
    assert r.json["errorCode"] == "corrupt"
    assert r.json["error"] == f"Failed to parse notebook: invalid JSON at line " \
                              f"{err.value.lineno} column {err.value.colno}"
    assert err.value.lineno > 1


@pytest.mark.parametrize("text", [
    '{"nbformat": 4, "cells": [\n  {"cell_type": "markdown", "source": "é"}\n  {"x": 1}]}',
    '{"nbformat": 4,\n "cells": [1, 2,]}',
    '{"nbformat": 4, "cells": []}\n\ntrailing',
    '{"nbformat": 4,\n  "cells": [{"source": "unterminated\n',
    '\n\n   ',
])
def test_json_error_positions(toolfs_read, tmp_path, text):
    path = tmp_path / "bad.ipynb"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as err:
        json.loads(text)
    r = toolfs_read(path)
    assert r.rc == 1 and r.json["errorCode"] == "corrupt"
    assert r.json["error"].endswith(f"at line {err.value.lineno} column {err.value.colno}")


def test_not_a_notebook(toolfs_read, nbdir):
    r = toolfs_read(nbdir / "not_notebook.ipynb")
    assert r.rc == 1
    assert r.json["contentType"] == "notebook"
    assert r.json["errorCode"] == "corrupt"
    assert r.json["error"] == 'Invalid notebook: no "nbformat" version number'


def test_selector_past_the_end(toolfs_read, nbdir):
    r = toolfs_read(nbdir / "basic.ipynb", "--select", "9")
    assert r.rc == 1
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == "Cell 9 is past the end of the notebook (8 cells)"


def test_selector_range(toolfs_read, nbdir):
    res = read_ok(toolfs_read, nbdir / "basic.ipynb", "--select", "4-5")
    assert res["range"] == {"unit": "cell", "start": 4, "end": 5, "total": 8}
    assert res["truncated"] is True and res["next"] == "basic.ipynb:6-.tool.json"
    assert "--- Cell 3 [" not in res["content"] and "--- Cell 6 [" not in res["content"]
    # Images of the shown cells only, numbered from 1 in this result.
    assert [i["cell"] for i in res["images"]] == [4, 4]
    res = read_ok(toolfs_read, nbdir / "basic.ipynb", "--select", "5-")
    assert res["range"]["start"] == 5 and res["range"]["end"] == 8
    assert "images" not in res and "next" not in res


def test_empty_notebook(toolfs_read, nbdir):
    res = read_ok(toolfs_read, nbdir / "empty.ipynb")
    assert res["shortResult"] == "Notebook has no cells"
    assert res["metadata"]["cellCount"] == 0
    assert res["range"]["total"] == 0


def test_extension_any_case(toolfs_read, nbdir):
    res = read_ok(toolfs_read, nbdir / "Upper.IPYNB")
    assert "--- Cell 1 [markdown] ---\nupper-case extension\n" in res["content"]


def test_too_large(toolfs_read, nbdir):
    path = nbdir / "basic.ipynb"
    size = path.stat().st_size
    r = toolfs_read(path, "--max-notebook-size", "2K")
    assert r.rc == 1
    assert r.json["errorCode"] == "too_large"
    assert r.json["error"] == f"Notebook file exceeds 2KB limit (actual: {size / 1024:.2f}KB)"


@pytest.fixture(scope="module")
def big_notebook(tmp_path_factory) -> pathlib.Path:
    """60 MiB of notebook (under max_notebook_size 64M): long outputs, images, Plotly data."""
    path = tmp_path_factory.mktemp("bignb") / "big.ipynb"
    _load_generator("gen_big_notebook").write(path, 60)
    return path


def _peak_rss_kib(argv) -> tuple:
    """Runs argv under /usr/bin/time; returns (exit status, stdout, its peak RSS in KiB). (Not
    wait4's rusage of a child of this process: that counts the forked pytest's pages too.)"""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile() as report:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, *argv],
                              capture_output=True, timeout=300)
        return proc.returncode, proc.stdout, int(pathlib.Path(report.name).read_text().split()[-1])


def test_big_notebook_in_bounded_memory(build_dir, big_notebook):
    """Issue 24 item 2: a notebook under max_notebook_size is read with a peak RSS of at most
    3x its size plus 64 MiB, in the default view, one cell alone and a range (it took 2.4 GB
    for 60 MB when the whole text was parsed into a cJSON tree)."""
    size = big_notebook.stat().st_size
    bound_kib = (3 * size + 64 * 1024 * 1024) // 1024
    binary = str(build_dir / "cli" / "toolfs-read")
    for args in ([], ["--select", "7"], ["--select", "50-"]):
        rc, out, peak = _peak_rss_kib([binary, *args, "--", str(big_notebook)])
        assert rc == 0, out[:300]
        doc = json.loads(out)
        assert doc["success"] and doc["metadata"]["cellCount"] > 300
        print(f"toolfs-read {' '.join(args)}: peak RSS {peak} KiB for {size} bytes")
        assert peak <= bound_kib, f"peak RSS {peak} KiB > {bound_kib} KiB ({args})"


def test_big_notebook_three_concurrent_mcp_reads_share_the_budget(build_dir, big_notebook):
    """Issue 24 item 2: toolfs-mcp reads on 4 workers; three calls on the 60 MiB notebook at once
    take turns within max_read_memory (default 256M, a notebook read counts 3x its size), so
    the server's peak RSS stays within one read's: the file's size plus 64 MiB (1.32 GiB on
    e43a76a; 194 MiB with the in-place reader but no budget, --max-read-memory 4G)."""
    import re
    import subprocess
    size = big_notebook.stat().st_size
    mcp = build_dir / "mcp" / "toolfs-mcp"
    proc = subprocess.Popen([str(mcp), str(big_notebook.parent)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "read", "arguments": {"file_path": big_notebook.name,
                                                           **({"offset": 50} if i == 2 else {})}}}
                 for i in (1, 2, 3)]
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(4)]
        status = pathlib.Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
    assert sorted(a["id"] for a in answers) == [0, 1, 2, 3]
    assert all(not a["result"].get("isError") for a in answers if a["id"]), answers
    print(f"three concurrent MCP reads: peak RSS {peak} KiB for {size} bytes")
    assert peak <= (size + 64 * 1024 * 1024) // 1024, f"VmHWM {peak} KiB"
