# SPDX-License-Identifier: MIT
"""The README's first command: contrib/mount-workspace mounts a workspace (here the embedded demo
tree, generated into a temporary folder) and every demo file reads as its type, through the mount
and through the CLI alike."""
import json
import os
import pathlib
import re
import stat
import subprocess
import sys

import nbformat
import openpyxl
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# What a reader must find in the scan (its words, by OCR) and in the video (its subtitle cues).
SCAN_WORDS = ["Scanned", "invoice", "2026-001", "no", "text", "layer", "toolfs", "reads", "OCR"]
CLIP_CUES = ["[00:00.000 --> 00:01.500] A test pattern, three seconds long",
             "[00:01.500 --> 00:03.000] toolfs reads these subtitles as timed lines"]

EXPECTED = {  # demo file -> (contentType, success)
    "src/hello.py": ("text", True),
    "README.md": ("text", True),
    "logo.png": ("image", True),
    "diagram.svg": ("image", True),
    "tone.wav": ("audio", True),
    "analysis.ipynb": ("notebook", True),
    "report.pdf": ("pdf", True),
    "scan.pdf": ("pdf", True),
    "clip.mp4": ("video", True),
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
    scan = toolfs_read("scan.pdf", cwd=demo).json
    assert scan["content"].startswith("--- Page 1 (OCR) ---\n")
    assert SCAN_WORDS == [w for w in scan["content"].replace(":", " ").replace(".", " ").split()
                          if w in SCAN_WORDS]
    assert [p["page"] for p in scan["metadata"]["ocr"]["pages"]] == [1]
    clip = toolfs_read("clip.mp4", cwd=demo).json
    assert clip["content"].split("Subtitle track 1 (eng, mov_text):\n")[1].splitlines() == CLIP_CUES
    assert clip["range"] == {"unit": "second", "start": 0, "end": 3, "total": 3}
    assert [i["mediaType"] for i in clip["images"]] == ["image/png"]
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


# A Try line of mount-workspace that reads a region: the file, the selector, the line's comment.
TRY_REGION = re.compile(r"\$mnt/([^':]+):((?:[0-9]+@)?[0-9]+x[0-9]+\+[0-9]+\+[0-9]+)\.tool\.json"
                        r"'.*#(.*)$")


def test_mount_workspace_says_zoomed_only_when_scaled_up(demo, toolfs_read):
    """Each region mount-workspace suggests is called zoomed in its comment exactly when the
    attached image is scaled up: when a pixel of it is less than one of the original (S < 1 in
    the content's "(X + x * S, Y + y * S)")."""
    script = (REPO / "contrib" / "mount-workspace").read_text()
    regions = [TRY_REGION.search(line) for line in script.splitlines()]
    regions = [m.groups() for m in regions if m]
    assert regions
    for name, selector, comment in regions:
        content = toolfs_read(name, "--select", selector, cwd=demo).json["content"]
        scale = float(re.search(r"\(\d+ \+ x \* ([0-9.]+), \d+ \+ y \* \1\)", content)[1])
        assert ("zoom" in comment) == (scale < 1), (name, selector, comment, scale)


@pytest.mark.mount
def test_mount_workspace_mounts_and_prints_what_to_read(demo, tmp_path, build_dir):
    mnt = tmp_path / "mnt"
    proc = subprocess.run(["bash", str(REPO / "contrib" / "mount-workspace"), str(demo), str(mnt)],
                          capture_output=True, text=True, timeout=600)
    try:
        assert proc.returncode == 0, proc.stderr
        assert f"is mounted read-only at {mnt}" in proc.stdout
        assert f"fusermount3 -u {mnt}" in proc.stdout
        listed = {str(p.relative_to(mnt)) for p in mnt.rglob("*.tool.json")}
        assert listed == {f"{name}.tool.json" for name in EXPECTED}
        for name, (kind, ok) in EXPECTED.items():
            cli = subprocess.run([str(build_dir / "cli" / "toolfs-read"), name],
                                 cwd=demo, capture_output=True).stdout
            assert (mnt / f"{name}.tool.json").read_bytes() == cli, name
            doc = json.loads(cli)
            assert (doc["contentType"], doc["success"]) == (kind, ok), name
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)


def mount_workspace(*args, env=None):
    return subprocess.run(["bash", str(REPO / "contrib" / "mount-workspace"), *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=env)


def unmount_printed(proc):
    """Unmounts what a mount-workspace run says it mounted, wherever that was."""
    for mnt in re.findall(r"is mounted read-only at (.+)", proc.stdout):
        subprocess.run(["fusermount3", "-u", mnt], capture_output=True)


def shared_tmp(tmp_path):
    """A directory like /tmp: anyone may create entries in it, only their owner may remove them."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    return tmp


def private_to_me(path: pathlib.Path) -> bool:
    """path (not followed) is a directory of this user's that no other user may enter."""
    st = path.lstat()
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077 == 0


@pytest.mark.mount
@pytest.mark.parametrize("runtime_dir", [False, True], ids=["tmpdir", "xdg_runtime_dir"])
def test_mount_workspace_writes_only_where_other_users_cannot(tmp_path, runtime_dir):
    """With no argument, the demo source goes to the checkout's build/demo, and the mount to a
    directory of this user's alone ($XDG_RUNTIME_DIR/toolfs, else $TMPDIR/toolfs-UID), never to
    a path of the shared temporary directory another user could have created first. Every "Try:"
    line it prints then runs as printed, from the repository."""
    tmp = shared_tmp(tmp_path)
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("XDG_RUNTIME_DIR", None)
    base = tmp / f"toolfs-{os.getuid()}"
    if runtime_dir:
        run = tmp_path / "run"
        run.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(run)
        base = run / "toolfs"
    proc = mount_workspace(env=env)
    try:
        assert proc.returncode == 0, proc.stderr
        src = REPO / "build" / "demo"
        assert f"toolfs: {src} is mounted read-only at {base / 'demo'}\n" in proc.stdout
        assert private_to_me(base)
        assert (base / "demo" / "clip.mp4.tool.json").is_file()
        # nothing else in the shared directory (with $XDG_RUNTIME_DIR, nothing at all)
        assert [p.name for p in tmp.iterdir()] == ([] if runtime_dir else [base.name])
        tries = proc.stdout.split("Try:\n")[1].split("Unmount:")[0].splitlines()
        assert len(tries) >= 10
        for line in tries:  # each suggestion runs as printed, with output
            run = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=REPO,
                                 capture_output=True, text=True, timeout=120)
            assert (run.returncode, run.stderr) == (0, ""), line
            assert run.stdout.strip() not in ("", "null"), line
    finally:
        unmount_printed(proc)


def plant_symlink(tmp_path, base):
    victim = tmp_path / "victim"
    victim.mkdir()
    base.symlink_to(victim)
    return victim


def plant_directory(tmp_path, base, owner, mode):
    base.mkdir()
    os.chown(base, owner, owner)
    base.chmod(mode)
    return base


PLANTS = {
    "symlink": plant_symlink,
    "other_users_dir": lambda tmp_path, base: plant_directory(tmp_path, base, 65534, 0o777),
    "other_users_private_dir": lambda tmp_path, base: plant_directory(tmp_path, base, 65534,
                                                                        0o700),
    "my_dir_others_may_write": lambda tmp_path, base: plant_directory(tmp_path, base,
                                                                        os.getuid(), 0o777),
}


@pytest.mark.mount
@pytest.mark.parametrize("plant", PLANTS)
def test_mount_workspace_refuses_a_planted_mount_directory(tmp_path, plant):
    """Another user who created $TMPDIR/toolfs-UID first (a symlink to a place of theirs, a
    directory of theirs, or one anyone may write into) gets nothing: mount-workspace names it
    and exits 1 without mounting or writing anything there."""
    if plant != "symlink" and os.getuid() != 0:
        pytest.skip("making another user's directory needs root")
    tmp = shared_tmp(tmp_path)
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("XDG_RUNTIME_DIR", None)
    base = tmp / f"toolfs-{os.getuid()}"
    planted = PLANTS[plant](tmp_path, base)
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("a\n")
    proc = mount_workspace(src, env=env)
    unmount_printed(proc)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stdout
    assert proc.stderr.endswith(f"mount-workspace: {base} is not a directory of yours that only "
                                "you may enter: remove it, or give MOUNTPOINT\n")
    assert list(planted.iterdir()) == []


def readme_examples():
    """The `$ ` commands of README.md's console blocks, each with the lines shown under it (up to
    a blank line, the next command or the block's end)."""
    examples, block, shown = [], False, None
    for line in (REPO / "README.md").read_text().splitlines():
        if line.startswith("```"):
            block, shown = line == "```console", None
        elif block and line.startswith("$ "):
            shown = []
            examples.append((line[2:], shown))
        elif block and line and shown is not None:
            shown.append(line)
        else:
            shown = None
    return examples


def test_readme_examples_run_as_written(tmp_path, build_dir):
    """After the README's first command (the demo tree in build/demo, the build in build/), its
    `$` commands run from the repository, as written, exit as toolfs-read(1) documents (1 when a
    result shown has success false, else 0) and print exactly the lines shown: the files of the
    demo tree are dated, so even metadata.modified and sha256 must match. Here a stand-in of the
    repository holds build/cli (the build under test) and a fresh build/demo."""
    root = tmp_path / "repo"
    (root / "build").mkdir(parents=True)
    (root / "build" / "cli").symlink_to(build_dir / "cli")
    subprocess.run(["/usr/bin/python3", str(REPO / "contrib" / "demo" / "make_demo_tree.py"),
                    str(root / "build" / "demo")], check=True)
    examples = readme_examples()
    assert len(examples) >= 2
    for command, shown in examples:
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=root,
                              capture_output=True, text=True, timeout=120)
        status = 1 if any('"success":false' in line for line in shown) else 0
        assert (proc.returncode, proc.stdout) == (status, "".join(f"{l}\n" for l in shown)), \
            (command, proc.stderr)
