# SPDX-License-Identifier: MIT
"""Office files through the mount: siblings of a .docx, an .xlsx selector and a .pptx in a
provider format hold exactly the bytes toolfs-read prints, with exact st_size."""
import os
import pathlib

import pytest

from fixtures import gen_office
from mount_util import mounted


@pytest.fixture(scope="module")
def office_tree(tmp_path_factory) -> pathlib.Path:
    src = tmp_path_factory.mktemp("office-tree") / "src"
    src.mkdir()
    for name, make in (("basic.docx", gen_office.basic_docx), ("basic.xlsx", gen_office.basic_xlsx),
                       ("deck.pptx", gen_office.deck_pptx)):
        (src / name).write_bytes(make())
    return src


@pytest.fixture(scope="module")
def mnt(office_tree, build_dir, tmp_path_factory):
    with mounted(build_dir / "fs" / "toolfs", office_tree, tmp_path_factory.mktemp("mnt")) as m:
        yield m.path


@pytest.mark.parametrize("sibling,args", [
    ("basic.docx.tool.json", []),
    ("basic.docx:20-.tool.json", ["--select", "20-"]),
    ("basic.xlsx:3.25-.tool.json", ["--select", "3.25-"]),
    ("deck.pptx:2.tool.mcp.json", ["--select", "2", "--format", "mcp"]),
])
def test_office_siblings_equal_cli(mnt, office_tree, toolfs_read, sibling, args):
    path = mnt / sibling
    data = path.read_bytes()
    assert os.stat(path).st_size == len(data)
    name = sibling.split(":")[0].split(".tool")[0]
    assert data == toolfs_read(name, *args, cwd=office_tree).out
