# SPDX-License-Identifier: MIT
"""The README's first command: contrib/mount-workspace mounts a workspace (here the embedded demo
tree, generated into a temporary folder) and every demo file reads as its type, through the mount
and through the CLI alike."""
import json
import pathlib
import subprocess

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
