# SPDX-License-Identifier: MIT
"""The README's first command: contrib/mount-workspace mounts a workspace (here the embedded demo
tree, generated into a temporary folder) and every demo file reads as its type, through the mount
and through the CLI alike."""
import json
import pathlib
import subprocess
import sys

import nbformat
import openpyxl
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent

EXPECTED = {  # demo file -> (contentType, success)
    "src/hello.py": ("text", True),
    "README.md": ("text", True),
    "logo.png": ("image", True),
    "diagram.svg": ("image", True),
    "tone.wav": ("audio", True),
    "analysis.ipynb": ("notebook", True),
    "report.pdf": ("pdf", True),
    "notes.docx": ("document", True),
    "budget.xlsx": ("spreadsheet", True),
    "broken.png": ("image", False),
}


@pytest.fixture
def demo(tmp_path):
    src = tmp_path / "demo"
    subprocess.run(["/usr/bin/python3", str(REPO / "contrib" / "demo" / "make_demo_tree.py"),
                    str(src)], check=True)
    return src


def test_demo_tree_holds_every_type(demo, toolfs_read):
    files = sorted(str(p.relative_to(demo)) for p in demo.rglob("*") if p.is_file())
    assert files == sorted(EXPECTED)
    for name, (kind, ok) in EXPECTED.items():
        r = toolfs_read(name, cwd=demo)
        assert (r.json["contentType"], r.json["success"]) == (kind, ok), name
    sheet = openpyxl.load_workbook(demo / "budget.xlsx").active
    txt = toolfs_read("budget.xlsx", "--format", "txt", cwd=demo).out.decode()
    for row in sheet.iter_rows(values_only=True):
        assert f"| {row[0]} |" in txt


# Runs the code cells of a notebook (argv[1]) in order in one namespace, as a kernel would, and
# prints per cell what it would output: its stdout, the repr of a last expression that is not
# None (an execute_result), or the name of the exception it raised.
RUN_CELLS = r"""
import ast, contextlib, io, json, sys
import matplotlib
matplotlib.use("Agg")
import nbformat
namespace, report = {"__name__": "__main__"}, []
for cell in nbformat.read(sys.argv[1], as_version=4).cells:
    if cell.cell_type != "code":
        continue
    out, result, error = io.StringIO(), None, None
    tree = ast.parse(cell.source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                result = None if value is None else repr(value)
    except Exception as e:
        error = type(e).__name__ + ": " + str(e)
    report.append({"stdout": out.getvalue(), "result": result, "error": error})
print(json.dumps(report))
"""


def test_demo_notebook_runs_top_to_bottom(demo):
    """analysis.ipynb is a valid notebook whose code cells, run top to bottom, give the outputs it
    records: the same stdout, an execute_result only where the last expression has a value, and
    an exception only in the cell that records that error."""
    nb = nbformat.read(demo / "analysis.ipynb", as_version=4)
    nbformat.validate(nb)
    run = subprocess.run([sys.executable, "-c", RUN_CELLS, str(demo / "analysis.ipynb")],
                         capture_output=True, text=True, check=True)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    for cell, got in zip(code, json.loads(run.stdout), strict=True):
        outputs = cell.outputs
        stdout = "".join(o.text for o in outputs if o.output_type == "stream")
        errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]
        has_result = any(o.output_type == "execute_result" for o in outputs)
        assert (got["error"], got["stdout"], got["result"] is not None) == \
            (errors[0] if errors else None, stdout, has_result), cell.source


@pytest.mark.mount
def test_mount_workspace_mounts_and_prints_what_to_read(demo, tmp_path, build_dir):
    mnt = tmp_path / "mnt"
    proc = subprocess.run(["bash", str(REPO / "contrib" / "mount-workspace"), str(demo), str(mnt)],
                          capture_output=True, text=True, timeout=600)
    try:
        assert proc.returncode == 0, proc.stderr
        assert f"is mounted read-only at {mnt}" in proc.stdout
        assert f"fusermount3 -u {mnt}" in proc.stdout
        listed = {p.name for p in mnt.iterdir()}
        assert {"budget.xlsx.tool.json", "notes.docx.tool.json", "logo.png.tool.json"} <= listed
        cli = subprocess.run([str(build_dir / "cli" / "toolfs-read"), "notes.docx"],
                             cwd=demo, capture_output=True).stdout
        assert (mnt / "notes.docx.tool.json").read_bytes() == cli
        assert json.loads(cli)["contentType"] == "document"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)
