# SPDX-License-Identifier: MIT
"""toolfs's mime types against file(1) over a large real corpus (issue 29, docs/SPEC.md §2
"mimeType"): every regular file under /usr/include, /usr/share, /usr/lib/python3, the Python
standard library and tests/sdk/node_modules (at least 50,000 files), typed by the classification
path of the readers (tests/unit/mime_list.c) and by `file --mime-type -b -f LIST` (the same
libmagic). The two may differ only where SPEC §2 says why, and each such file is checked too:
an empty file (file(1) answers from stat), and a text file longer than the 8 KiB head toolfs
types, whose answer must be file(1)'s answer for those 8 KiB."""
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HEAD_SIZE = 8192  # TR_HEAD_SIZE, readers/core/reader.h
MIN_FILES = 50_000
ROOTS = ["/usr/include", "/usr/share", "/usr/lib/python3",
         f"/usr/lib/python{sys.version_info.major}.{sys.version_info.minor}",
         str(REPO / "tests" / "sdk" / "node_modules")]


def corpus() -> list[str]:
    """Every readable regular file under ROOTS (symlinks not followed), sorted."""
    paths = []
    for root in ROOTS:
        for top, dirs, files in os.walk(root):
            dirs.sort()
            for name in files:
                path = os.path.join(top, name)
                if "\n" in path or "\\" in path:
                    continue  # file -f reads one name a line, unescaped
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK):
                    paths.append(path)
    return sorted(set(paths))


def file_mime_types(list_path: pathlib.Path) -> subprocess.Popen:
    return subprocess.Popen(["file", "--mime-type", "-b", "-f", str(list_path)],
                            stdout=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_mime_types_agree_with_file(build_dir, tmp_path):
    if not shutil.which("file"):
        pytest.skip("file(1) is not installed")
    paths = corpus()
    if len(paths) < MIN_FILES:
        pytest.skip(f"only {len(paths)} files under {ROOTS}; the agreement needs {MIN_FILES}")
    listing = tmp_path / "list"
    listing.write_text("".join(p + "\n" for p in paths))
    # Both sides take about a minute on one core each: run side by side.
    oracle = file_mime_types(listing)
    ours = subprocess.run([str(build_dir / "tests" / "unit" / "mime_list"), str(listing)],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    theirs = oracle.communicate()[0].splitlines()
    assert oracle.returncode == 0
    assert len(ours) == len(theirs) == len(paths)

    empty, long_heads, unexplained = [], [], []
    for path, line, want in zip(paths, ours, theirs):
        kind, got = line.split(" ", 1)
        if got == want:
            continue
        size = os.path.getsize(path)
        if size == 0 and (got, want) == ("application/x-empty", "inode/x-empty"):
            empty.append(path)
        elif kind == "text" and size > HEAD_SIZE:
            long_heads.append((path, got))
        else:
            unexplained.append(f"{path}: toolfs {got}, file(1) {want}")

    # A text file longer than the head: toolfs's answer is file(1)'s for the bytes it types.
    if long_heads:
        heads = tmp_path / "heads"
        heads.mkdir()
        head_list = tmp_path / "head_list"
        names = []
        for i, (path, _) in enumerate(long_heads):
            name = heads / f"{i}"
            with open(path, "rb") as src:
                name.write_bytes(src.read(HEAD_SIZE))
            names.append(str(name))
        head_list.write_text("".join(n + "\n" for n in names))
        head_types = file_mime_types(head_list).communicate()[0].splitlines()
        for (path, got), want in zip(long_heads, head_types):
            if got != want:
                unexplained.append(f"{path}: toolfs {got}, file(1) of its head {want}")

    print(f"\n{len(paths)} files; {len(empty)} empty (inode/x-empty), {len(long_heads)} "
          f"longer than the head typed from it; {len(unexplained)} unexplained")
    assert not unexplained, "\n".join(unexplained[:50])
