"""The architecture holds: no dependency cycle between headers or between C files, the reader
core knows nothing of FUSE, front ends see include/ alone, and nothing points outside the
repository for its contract."""
import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / p for p in out.decode().split("\0") if p and (REPO / p).is_file()]


def test_no_dependency_cycle(build_dir):
    proc = subprocess.run(["/usr/bin/python3", str(REPO / "tests" / "dep_graph.py"),
                           str(build_dir)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b0 cycles$", proc.stdout.strip()), proc.stdout


def test_reader_core_has_no_fuse():
    for path in list((REPO / "readers").rglob("*.[ch]")) + list((REPO / "include").glob("*.h")):
        text = path.read_text(errors="replace")
        assert not re.search(r'#\s*include\s*[<"]fuse', text), path


def test_front_ends_use_the_public_api_only():
    public = {p.name for p in (REPO / "include").glob("*.h")}
    for folder in [REPO / "fs", REPO / "readers" / "cli"]:
        own = {p.name for p in folder.glob("*.h")}
        for path in folder.glob("*.[ch]"):
            for name in re.findall(r'#\s*include\s*"([^"]+)"', path.read_text()):
                assert name in public or name in own, f"{path.name} includes private {name}"


def test_contract_lives_in_the_repository():
    spec = REPO / "docs" / "SPEC.md"
    assert spec.is_file()
    for path in tracked_files():
        if "node_modules" in path.parts or path == pathlib.Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        assert "../shared" not in text, f"{path.relative_to(REPO)} points outside the repository"
        for section in re.findall(r"SPEC(?:\.md)? §(\d+)", text):
            assert f"\n## {section}." in spec.read_text(), f"{path.name}: no §{section}"
