# SPDX-License-Identifier: MIT
"""PDFs through the mount (issue 4): page selectors resolve as siblings, `cat ... | jq` works,
st_size is exact, and the bytes equal toolfs-read run from the tree's root."""
import json
import os
import pathlib
import subprocess

import pytest

from fixtures import gen_pdfs
from mount_util import mounted


@pytest.fixture(scope="module")
def pdf_tree(tmp_path_factory) -> pathlib.Path:
    src = tmp_path_factory.mktemp("pdf-tree") / "src"
    gen_pdfs.generate(src)
    return src


@pytest.fixture(scope="module")
def mnt(pdf_tree, build_dir, tmp_path_factory):
    with mounted(build_dir / "fs" / "toolfs", pdf_tree, tmp_path_factory.mktemp("mnt")) as m:
        yield m.path


@pytest.mark.parametrize("name,sel", [("four.pdf", ""), ("four.pdf", "2-3"), ("eleven.pdf", "11"),
                                      ("p150.pdf", "12-"), ("p150.pdf", "151")])
def test_pdf_siblings_equal_cli_and_sizes_are_exact(mnt, pdf_tree, toolfs_read, name, sel):
    sibling = mnt / (name + (f":{sel}" if sel else "") + ".tool.json")
    data = sibling.read_bytes()
    assert os.stat(sibling).st_size == len(data)
    args = ["--select", sel] if sel else []
    assert data == toolfs_read(name, *args, cwd=pdf_tree).out


def test_cat_pages_through_jq(mnt):
    sibling = mnt / "four.pdf:2-3.tool.json"
    out = subprocess.run(f"cat '{sibling}' | jq -c '{{range, pages: [.images[].page]}}'",
                         shell=True, capture_output=True, check=True, timeout=60).stdout
    assert json.loads(out) == {"range": {"unit": "page", "start": 2, "end": 3, "total": 4},
                               "pages": [2, 3]}
    assert "four.pdf:2-3.tool.json" not in os.listdir(mnt)
