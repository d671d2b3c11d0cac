# SPDX-License-Identifier: MIT
"""The subset path of the text mime type (readers/util/magic_subset.c, issue 29) against file(1)
on heads built to hit the rules it decides without libmagic (tests/fixtures/gen_mime_heads.py):
for every top-level string, search, integer and regex rule of the magic database whose value is
text, a head that passes the rule's first test and one that just misses it, plus edge texts
(UTF-8, BOM, Latin-1, controls, CRLF, one byte, a full 8 KiB head). Every answer must be file(1)'s
(`file --mime-type -b`, the same libmagic): all heads are at most the 8 KiB toolfs types."""
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
import gen_mime_heads


def test_subset_mime_types_are_file_s(build_dir, tmp_path):
    if not shutil.which("file"):
        pytest.skip("file(1) is not installed")
    paths = gen_mime_heads.generate(tmp_path / "heads")
    assert len(paths) > 20  # the edge texts at least; thousands with a version-18 database
    listing = tmp_path / "list"
    listing.write_text("".join(f"{p}\n" for p in paths))
    oracle = subprocess.Popen(["file", "--mime-type", "-b", "-f", str(listing)],
                              stdout=subprocess.PIPE, text=True)
    ours = subprocess.run([str(build_dir / "tests" / "unit" / "mime_list"), str(listing)],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    theirs = oracle.communicate()[0].splitlines()
    assert oracle.returncode == 0
    assert len(ours) == len(theirs) == len(paths)
    wrong = [f"{p.name}: toolfs {line.split(' ', 1)[1]}, file(1) {want}"
             for p, line, want in zip(paths, ours, theirs) if line.split(" ", 1)[1] != want]
    print(f"\n{len(paths)} heads, {len(wrong)} disagreements")
    assert not wrong, "\n".join(wrong[:50])
