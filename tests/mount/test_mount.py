# SPDX-License-Identifier: MIT
"""The mounted tree (docs/SPEC.md §4): a byte-identical read-only mirror of SOURCE in which every regular
file and symlink has a sibling NAME.tool.json equal to `toolfs-read NAME` run from the root.

Oracles: the source tree itself (os.lstat, bytes), the toolfs-read CLI, and the tools agents
use to read files (cat, jq, node, python, mmap, rg, wc, tail, head, cp, less)."""
import concurrent.futures
import errno
import hashlib
import json
import mmap
import os
import pathlib
import stat
import subprocess

import pytest

from conftest import validate_result
from fixtures.gen_tree import LONG_LINES, WIDE_LINE_CHARS, generate
from mount_util import mounted, mounts

SUFFIX = b".tool.json"
HANG_GUARD = 120  # seconds a tool may take before the test calls it hung


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    src = tmp_path_factory.mktemp("tree") / "src"
    generate(src)
    return src


@pytest.fixture(scope="module")
def toolfs_bin(build_dir) -> pathlib.Path:
    return build_dir / "fs" / "toolfs"


@pytest.fixture(scope="module")
def mnt(tree, toolfs_bin, tmp_path_factory):
    with mounted(toolfs_bin, tree, tmp_path_factory.mktemp("mnt")) as m:
        yield m.path


def walk(root: pathlib.Path):
    """(relative bytes path, lstat) of every entry under root."""
    base = os.fsencode(root)
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            yield os.path.relpath(full, base), os.lstat(full)


def has_sibling(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)


def inside_link(tree: pathlib.Path, rel: bytes) -> bool:
    """True for a symlink whose target is a regular file inside the tree (the oracle: realpath)."""
    full = os.path.join(os.fsencode(tree), rel)
    real = os.path.realpath(full)
    root = os.fsencode(os.path.realpath(tree))
    return real.startswith(root + b"/") and os.path.isfile(real)


def cli(toolfs_read, tree, rel: bytes, *args) -> bytes:
    """The bytes toolfs-read prints for rel run from the tree's root."""
    return toolfs_read(os.fsdecode(rel), *args, cwd=tree).out


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def sibling(mnt: pathlib.Path, rel: str, sel: str = "") -> pathlib.Path:
    return mnt / (rel + (":" + sel if sel else "") + ".tool.json")


def test_listing_is_source_plus_siblings(tree, mnt):
    for dirpath, dirnames, filenames in os.walk(os.fsencode(tree)):
        rel = os.path.relpath(dirpath, os.fsencode(tree))
        real = set(dirnames + filenames)
        expected = set(real)
        for name in real:
            if has_sibling(os.lstat(os.path.join(dirpath, name))) and \
                    name + SUFFIX not in real:
                expected.add(name + SUFFIX)
        listed = os.listdir(os.path.join(os.fsencode(mnt), rel))
        assert sorted(listed) == sorted(expected), rel
        assert len(listed) == len(set(listed)), f"{rel}: a name is listed twice"


def test_real_entries_mirror_source(tree, mnt):
    count = 0
    for rel, st in walk(tree):
        m = os.lstat(os.path.join(os.fsencode(mnt), rel))
        for field in ("st_mode", "st_uid", "st_gid", "st_size", "st_mtime_ns", "st_ctime_ns",
                      "st_ino", "st_nlink"):
            assert getattr(m, field) == getattr(st, field), (rel, field)
        if stat.S_ISREG(st.st_mode):
            assert read(os.path.join(os.fsencode(mnt), rel)) == \
                read(os.path.join(os.fsencode(tree), rel)), rel
        elif stat.S_ISLNK(st.st_mode):
            assert os.readlink(os.path.join(os.fsencode(mnt), rel)) == \
                os.readlink(os.path.join(os.fsencode(tree), rel)), rel
        count += 1
    assert count > 250, "the tree should hold real source code"
    root = os.stat(mnt)
    assert (root.st_mode, root.st_ino) == (os.stat(tree).st_mode, os.stat(tree).st_ino)


def test_siblings_equal_cli_and_sizes_are_exact(tree, mnt, toolfs_read):
    rels = [rel for rel, st in walk(tree)
            if (stat.S_ISREG(st.st_mode) or
                (stat.S_ISLNK(st.st_mode) and inside_link(tree, rel)))
            # a real file may shadow the name (test_real_file_named_like_a_sibling)
            and not os.path.exists(os.path.join(os.fsencode(tree), rel + SUFFIX))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        expected = dict(zip(rels, pool.map(lambda rel: cli(toolfs_read, tree, rel), rels)))
    checked = 0
    for rel in rels:
        path = os.path.join(os.fsencode(mnt), rel + SUFFIX)
        data = read(path)
        assert data == expected[rel], rel
        validate_result(json.loads(data))
        vst = os.stat(path)
        assert vst.st_size == len(data), rel
        shown = os.stat(os.path.join(os.fsencode(tree), rel))  # a link's target
        assert stat.S_IFMT(vst.st_mode) == stat.S_IFREG
        assert stat.S_IMODE(vst.st_mode) == stat.S_IMODE(shown.st_mode) & 0o444, rel
        assert (vst.st_uid, vst.st_gid) == (shown.st_uid, shown.st_gid)
        assert (vst.st_mtime_ns, vst.st_ctime_ns) == (shown.st_mtime_ns, shown.st_ctime_ns)
        assert vst.st_nlink == 1
        assert vst.st_ino >= 1 << 63, "virtual inode numbers have the top bit set"
        assert os.stat(path).st_ino == vst.st_ino, "inode numbers are stable"
        checked += 1
    assert checked > 200


def test_virtual_inode_numbers_are_distinct(tree, mnt):
    inos = {}
    for rel, st in walk(tree):
        if has_sibling(st) and not os.path.exists(os.path.join(os.fsencode(tree), rel + SUFFIX)):
            inos[rel] = os.stat(os.path.join(os.fsencode(mnt), rel + SUFFIX)).st_ino
    assert len(set(inos.values())) == len(inos)
    listed = {e.name: e.inode() for e in os.scandir(mnt / "text")}
    assert listed["long.txt.tool.json"] == os.stat(mnt / "text" / "long.txt.tool.json").st_ino


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may set a mount's readahead")
def test_readahead_is_raised_to_a_mebibyte(mnt):
    """The daemon raises the mount's readahead from the kernel's 128 KiB to its max_readahead of
    1 MiB, so that large siblings are read in requests of 1 MiB."""
    st = os.stat(mnt)
    bdi = pathlib.Path(f"/sys/class/bdi/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    assert (bdi / "read_ahead_kb").read_text().strip() == "1024"


def test_fstat_of_a_handle_equals_what_it_reads(mnt):
    for rel in ["src/main.c", "media/logo.png", "media/wide.png", "notebooks/analysis.ipynb",
                "bin/true", "text/empty.txt", "links/dangling"]:
        with open(sibling(mnt, rel), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read()
            assert size == len(data) == os.fstat(f.fileno()).st_size, rel
            assert data.endswith(b"\n") and data.count(b"\n") == 1
            validate_result(json.loads(data))


# -- the tools agents read files with ------------------------------------------------------

TOOL_FILES = ["media/wide.png", "notebooks/analysis.ipynb", "src/include/stdlib.h",
              "text/long.txt"]

NODE_SCRIPT = r"""
const fs = require('fs');
const crypto = require('crypto');
const path = process.argv[1];
const sync = fs.readFileSync(path);
fs.promises.readFile(path).then((buf) => {
  const h = (b) => crypto.createHash('sha256').update(b).digest('hex');
  console.log(JSON.stringify({sync: [sync.length, h(sync)], promise: [buf.length, h(buf)],
                              parsed: JSON.parse(sync.toString('utf8')).path}));
});
"""


@pytest.mark.parametrize("rel", TOOL_FILES)
def test_full_json_through_every_tool(mnt, tree, toolfs_read, rel, tmp_path):
    expected = cli(toolfs_read, tree, os.fsencode(rel))
    path = str(sibling(mnt, rel))
    digest = hashlib.sha256(expected).hexdigest()

    def run(*cmd, **kw):
        return subprocess.run(cmd, capture_output=True, check=True, timeout=HANG_GUARD, **kw).stdout

    assert run("cat", path) == expected
    assert json.loads(run("jq", "-c", ".", path)) == json.loads(expected)
    node = json.loads(run("/usr/bin/node", "-e", NODE_SCRIPT, path))
    assert node["sync"] == [len(expected), digest]
    assert node["promise"] == [len(expected), digest]
    assert node["parsed"] == rel
    assert read(path) == expected
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
        assert m[:] == expected
    assert run("rg", "--no-config", "--passthru", "-F", "success", path) == expected
    assert run("wc", "-c", path).split()[0] == str(len(expected)).encode()
    assert run("tail", "-c", "100", path) == expected[-100:]
    assert run("head", "-c", "100", path) == expected[:100]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LESS")}
    assert run("less", "-F", path, env=env) == expected
    run("cp", path, str(tmp_path / "copy.json"))
    assert read(tmp_path / "copy.json") == expected


# -- selectors and names --------------------------------------------------------------------

@pytest.mark.parametrize("sel", ["7", "4990-", "100-250", "2.3000-", "1-5000", "4999-5000"])
def test_text_selectors_equal_cli(mnt, tree, toolfs_read, sel):
    rel = "text/wide.txt" if "." in sel else "text/long.txt"
    data = read(sibling(mnt, rel, sel))
    assert data == cli(toolfs_read, tree, os.fsencode(rel), "--select", sel)
    assert os.stat(sibling(mnt, rel, sel)).st_size == len(data)
    doc = json.loads(data)
    validate_result(doc)
    assert doc["success"] is True


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "mcp"])
@pytest.mark.parametrize("rel,sel", [("src/main.c", ""), ("media/logo.png", ""),
                                     ("text/long.txt", "3-5"), ("text/empty.txt", "")])
def test_provider_format_siblings_equal_cli(mnt, tree, toolfs_read, fmt, rel, sel):
    name = os.path.basename(rel) + (f":{sel}" if sel else "") + f".tool.{fmt}.json"
    path = mnt / os.path.dirname(rel) / name
    args = ["--format", fmt] + (["--select", sel] if sel else [])
    expected = cli(toolfs_read, tree, os.fsencode(rel), *args)
    assert read(path) == expected
    assert os.stat(path).st_size == len(expected)
    assert name not in os.listdir(mnt / os.path.dirname(rel)), "format names are not listed"


@pytest.mark.parametrize("rel,sel", [("src/main.c", ""), ("media/logo.png", ""),
                                     ("text/long.txt", ""), ("text/long.txt", "3-5"),
                                     ("notebooks/analysis.ipynb", ""), ("text/empty.txt", ""),
                                     ("links/inside_abs", "")])
def test_txt_siblings_equal_cli_and_the_tool_json(mnt, tree, toolfs_read, rel, sel):
    """NAME[:SEL].tool.txt (docs/SPEC.md §6): toolfs-read --format txt's bytes, whose text is the
    .tool.json's content, with footers and no base64; not listed."""
    name = os.path.basename(rel) + (f":{sel}" if sel else "") + ".tool.txt"
    path = mnt / os.path.dirname(rel) / name
    args = ["--format", "txt"] + (["--select", sel] if sel else [])
    expected = cli(toolfs_read, tree, os.fsencode(rel), *args)
    data = read(path)
    assert data == expected
    assert os.stat(path).st_size == len(data)
    assert name not in os.listdir(mnt / os.path.dirname(rel))
    doc = json.loads(read(sibling(mnt, rel, sel)))
    text = data.decode()
    assert text.startswith(doc["content"])
    footers = text[len(doc["content"]):]
    for im in doc.get("images", []):
        assert im["data"][:40] not in text
        assert f"{im['mediaType']} {im['width']}x{im['height']}" in footers
    if doc["truncated"] and "next" in doc:
        nxt = doc["next"][:-len(".json")] + ".txt"
        assert footers == f"\n[truncated: read {nxt} next]\n"
        first = doc["range"]["end"] + 1
        assert read(mnt / os.path.dirname(rel) / nxt).startswith(f"{first:6d}\t".encode())
    elif not doc.get("images"):
        assert footers == ""


def test_selector_content(mnt):
    doc = json.loads(read(sibling(mnt, "text/long.txt", "100-102")))
    assert doc["content"] == "".join(f"{n:6d}\tline {n} of the long file\n"
                                     for n in (100, 101, 102))
    assert doc["range"] == {"unit": "line", "start": 100, "end": 102, "total": LONG_LINES}
    wide = json.loads(read(sibling(mnt, "text/wide.txt", "2.4001-")))
    tail = "".join(chr(ord("a") + i % 26) for i in range(4000, WIDE_LINE_CHARS))
    assert wide["content"].startswith(f"{2:6d}\t{tail}\n")


def test_default_view_points_to_next_window(mnt):
    doc = json.loads(read(sibling(mnt, "text/long.txt")))
    assert doc["truncated"] is True
    nxt = mnt / "text" / doc["next"]
    assert json.loads(read(nxt))["range"]["start"] == 2001


@pytest.mark.parametrize("sel", ["5001", "6000-", "9000-9100"])
def test_selector_past_the_end_is_out_of_range(mnt, sel):
    doc = json.loads(read(sibling(mnt, "text/long.txt", sel)))
    validate_result(doc)
    assert doc["success"] is False and doc["errorCode"] == "out_of_range"


@pytest.mark.parametrize("name", [
    "long.txt:0x.tool.json", "long.txt:abc.tool.json", "long.txt:3-2.tool.json",
    "long.txt:.tool.json", "long.txt:+3.tool.json", "long.txt:1-2-3.tool.json",
    "long.txt.tool", "long.txt.json", "long.txt.tool.json.tool", "missing.txt.tool.json",
    "missing.txt:3.tool.json", "missing.txt.tool.anthropic.json", "long.txt:3.tool.mcp.jsn",
    "long.txt.tool.Anthropic.json", "long.txt:3.tool..json",
    "long.txt.tool.xml.json", ".tool.json", ":3.tool.json",
    "long.txt.tool.txt.json", "long.txt.tool.TXT", "long.txt:3.tool.txt.txt", ".tool.txt",
    "missing.txt.tool.txt",
])
def test_unparseable_or_unknown_names_are_enoent(mnt, name):
    with pytest.raises(FileNotFoundError):
        os.stat(mnt / "text" / name)
    with pytest.raises(FileNotFoundError):
        open(mnt / "text" / name, "rb")


def test_no_sibling_for_directories_and_fifos(mnt):
    for name in ["text.tool.json", "src/include.tool.json", "names/pipe.tool.json",
                 "names/pipe:1.tool.json"]:
        assert not os.path.lexists(mnt / name), name


def test_selector_names_are_not_listed(mnt):
    names = os.listdir(mnt / "text")
    assert not [n for n in names if ":" in n]
    assert os.path.exists(sibling(mnt, "text/long.txt", "3"))


def test_real_name_with_colon_wins_over_selector(mnt, tree, toolfs_read):
    # names/notes:3.tool.json is the sibling of the real file "notes:3", not line 3 of "notes".
    data = read(mnt / "names" / "notes:3.tool.json")
    assert data == cli(toolfs_read, tree, b"names/notes:3")
    assert json.loads(data)["path"] == "names/notes:3"
    # and a selector still applies to it
    doc = json.loads(read(mnt / "names" / "notes:3:1.tool.json"))
    assert doc["path"] == "names/notes:3" and doc["range"]["start"] == 1


def test_real_file_named_like_a_sibling(mnt, tree):
    real = read(tree / "names" / "x.png.tool.json")
    assert read(mnt / "names" / "x.png.tool.json") == real
    assert os.listdir(mnt / "names").count("x.png.tool.json") == 1
    # the real file's own sibling is there too
    doc = json.loads(read(mnt / "names" / "x.png.tool.json.tool.json"))
    assert doc["path"] == "names/x.png.tool.json" and doc["contentType"] == "text"


@pytest.mark.parametrize("name", [b"with space.txt", b"new\nline.txt", b"bad\xffutf8.txt"])
def test_odd_names(mnt, tree, toolfs_read, name):
    rel = b"names/" + name
    path = os.path.join(os.fsencode(mnt), rel + SUFFIX)
    assert name + SUFFIX in os.listdir(os.path.join(os.fsencode(mnt), b"names"))
    data = read(path)
    assert data == cli(toolfs_read, tree, rel)
    doc = json.loads(data)
    assert doc["path"] == rel.decode("utf-8", "replace")
    assert doc["success"] is True


# -- symlinks -------------------------------------------------------------------------------

@pytest.mark.parametrize("link,target", [
    ("inside_rel", "text/long.txt"), ("inside_abs", "media/logo.png"),
    ("inside_dotdot", "src/main.c"), ("chain", "text/long.txt"),
])
def test_symlink_inside_follows_target(mnt, tree, toolfs_read, link, target):
    data = read(sibling(mnt, "links/" + link))
    assert data == cli(toolfs_read, tree, b"links/" + link.encode())
    doc = json.loads(data)
    assert doc["success"] is True and doc["path"] == "links/" + link
    assert doc["metadata"]["sha256"] == hashlib.sha256(read(tree / target)).hexdigest()
    assert os.readlink(mnt / "links" / link) == os.readlink(tree / "links" / link)


@pytest.mark.parametrize("link,code", [
    ("outside_abs", "outside_root"), ("outside_rel", "outside_root"), ("dangling", "not_found"),
    ("loop_a", "not_regular"), ("to_dir", "not_regular"), ("to_fifo", "not_regular"),
])
def test_symlink_failures_are_results(mnt, tree, link, code):
    path = sibling(mnt, "links/" + link)
    data = read(path)
    doc = json.loads(data)
    validate_result(doc)
    assert doc["success"] is False and doc["errorCode"] == code
    assert doc["path"] == "links/" + link
    if code == "outside_root":
        assert doc["error"] == f"Symbolic link points outside the mounted tree: links/{link}"
    link_st = os.lstat(tree / "links" / link)
    vst = os.stat(path)
    assert vst.st_size == len(data)
    assert stat.S_IMODE(vst.st_mode) == 0o444 and vst.st_mtime_ns == link_st.st_mtime_ns


def test_a_time_split_off_a_missing_name_is_read_as_lines(toolfs_bin, toolfs_read, tmp_path):
    """docs/SPEC.md §4: `log:1:30-100.tool.json` is 90-100 s of `log` when there is a `log`;
    where there is none, lines 30-100 of `log:1` (the selector after the last colon); and a
    continuation names the file read, whatever the grammar would split."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "log:1").write_text("".join(f"line {i}\n" for i in range(1, 151)))
    with mounted(toolfs_bin, src, tmp_path / "mnt") as m:
        data = read(m.path / "log:1:30-100.tool.json")
        assert data == cli(toolfs_read, src, b"log:1", "--select", "30-100")
        doc = json.loads(data)
        assert doc["path"] == "log:1" and doc["range"]["start"] == 30
        # the continuation names log:1, not the grammar's log (95-150 s)
        text = read(m.path / "log:1:30-34.tool.txt").decode()
        assert text.endswith("[truncated: read log:1:35-150.tool.txt next]\n"), text[-80:]
        assert json.loads(read(m.path / "log:1:30-34.tool.json"))["next"] == \
            "log:1:35-150.tool.json"
        (src / "log").write_text("now there is a log\n")
        doc = json.loads(read(m.path / "log:1:30-100.tool.json"))
        assert doc["path"] == "log" and doc["errorCode"] == "out_of_range"  # a time on text


def test_symlinks_none_gives_links_no_sibling(tree, toolfs_bin, tmp_path):
    with mounted(toolfs_bin, tree, tmp_path / "mnt", "-o", "symlinks=none") as m:
        names = os.listdir(m.path / "links")
        assert "inside_rel" in names and not [n for n in names if n.endswith(".tool.json")]
        assert not os.path.exists(sibling(m.path, "links/inside_rel"))
        assert os.path.exists(sibling(m.path, "text/long.txt"))


# -- read-only ------------------------------------------------------------------------------

def _erofs(fn, *args):
    with pytest.raises(OSError) as info:
        fn(*args)
    assert info.value.errno == errno.EROFS, (fn, args, info.value)


@pytest.mark.parametrize("rel", ["src/main.c", "src/main.c.tool.json", "src/main.c:2.tool.json"])
def test_every_mutation_is_erofs(mnt, rel):
    path = mnt / rel
    _erofs(os.open, path, os.O_WRONLY)
    _erofs(os.open, path, os.O_RDWR)
    _erofs(os.open, path, os.O_RDONLY | os.O_TRUNC)
    _erofs(os.truncate, path, 0)
    _erofs(os.unlink, path)
    _erofs(os.rename, path, mnt / "src" / "renamed")
    _erofs(os.chmod, path, 0o600)
    _erofs(os.utime, path, (0, 0))
    _erofs(os.setxattr, path, "user.test", b"1")
    _erofs(os.link, path, mnt / "src" / "hardlink")
    _erofs(os.symlink, "x", mnt / "src" / "newlink")
    _erofs(os.mkdir, mnt / "src" / "newdir")
    _erofs(os.rmdir, mnt / "src" / "include")
    _erofs(os.open, mnt / "src" / "created.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    _erofs(os.mkfifo, mnt / "src" / "newfifo")


@pytest.mark.parametrize("rel", ["src/main.c", "src/main.c.tool.json", "src", ""])
def test_extended_attributes_are_not_supported(mnt, rel):
    # EOPNOTSUPP, not ENODATA: `ls -l` then stops asking for ACLs after the first name of the
    # mount (coreutils remembers a device without support) instead of looking every sibling up
    # a second time for its getxattr.
    path = mnt / rel
    for name in ("system.posix_acl_access", "system.posix_acl_default", "security.selinux",
                 "security.capability", "user.test"):
        with pytest.raises(OSError) as info:
            os.getxattr(path, name)
        assert info.value.errno == errno.EOPNOTSUPP, (rel, name, info.value)
    with pytest.raises(OSError) as info:
        os.listxattr(path)
    assert info.value.errno == errno.EOPNOTSUPP


def test_mount_options(mnt, tree):
    source, fstype, options = mounts()[os.path.realpath(mnt)]
    assert (fstype, source) == ("fuse.toolfs", "toolfs:" + os.path.realpath(tree))
    for opt in ("ro", "nodev", "nosuid", "default_permissions"):
        assert opt in options


# -- special files and whole-tree tools -------------------------------------------------------

def test_fifo_does_not_hang_tools(mnt):
    st = os.lstat(mnt / "names" / "pipe")
    assert stat.S_ISFIFO(st.st_mode)
    for cmd in (["ls", "-lR", str(mnt)], ["find", str(mnt)],
                ["grep", "-r", "a name with a space", str(mnt / "names")]):
        done = subprocess.run(cmd, capture_output=True, timeout=HANG_GUARD)
        assert done.returncode == 0, (cmd, done.stderr)
    done = subprocess.run(["find", str(mnt), "-type", "p"], capture_output=True,
                          timeout=HANG_GUARD)
    assert done.stdout.strip() == os.fsencode(mnt / "names" / "pipe")


# -- options --------------------------------------------------------------------------------

def test_reader_options_equal_cli_flags(tree, toolfs_bin, toolfs_read, tmp_path):
    opts = "max_lines=50,max_line_chars=100,max_output=2K"
    with mounted(toolfs_bin, tree, tmp_path / "mnt", "-o", opts) as m:
        for rel in ["text/long.txt", "text/wide.txt", "src/include/stdio.h"]:
            data = read(sibling(m.path, rel))
            assert data == cli(toolfs_read, tree, rel.encode(), "--max-lines", "50",
                               "--max-line-chars", "100", "--max-output", "2K"), rel
            assert os.stat(sibling(m.path, rel)).st_size == len(data)


def test_hide_siblings(tree, toolfs_bin, tmp_path):
    with mounted(toolfs_bin, tree, tmp_path / "mnt", "-o", "hide_siblings") as m:
        names = os.listdir(m.path / "text")
        assert "long.txt" in names and "long.txt.tool.json" not in names
        assert json.loads(read(sibling(m.path, "text/long.txt")))["success"] is True
        # a real file named like a sibling is still shown
        assert "x.png.tool.json" in os.listdir(m.path / "names")


# -- git ----------------------------------------------------------------------------------

def test_git_in_the_mount(toolfs_bin, tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}

    def git(cwd, *args):
        return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True,
                              timeout=HANG_GUARD).stdout

    git(src, "init", "-q", "-b", "main")
    (src / "a.c").write_text("int a;\n")
    (src / "docs").mkdir()
    (src / "docs" / "README").write_text("readme\n")
    git(src, "add", ".")
    git(src, "commit", "-q", "-m", "first")
    (src / "a.c").write_text("int a = 1;\n")
    git(src, "commit", "-q", "-am", "second")
    (src / "a.c").write_text("int a = 2;\n")  # modified, not committed
    (src / "new.txt").write_text("untracked\n")
    native_status = git(src, "status", "--porcelain")
    native_log = git(src, "log", "--format=%H %s")
    native_diff = git(src, "diff")

    with mounted(toolfs_bin, src, tmp_path / "mnt") as m:
        status = git(m.path, "status", "--porcelain")
        shown = [l for l in status.splitlines() if not l.endswith(b".tool.json")]
        assert shown == native_status.splitlines()
        assert b"?? a.c.tool.json" in status.splitlines()
        assert git(m.path, "log", "--format=%H %s") == native_log
        assert git(m.path, "diff") == native_diff
        assert git(m.path, "show", "HEAD~1:a.c") == b"int a;\n"


def test_mcp_options_in_the_mount(tree, toolfs_bin, toolfs_read, tmp_path):
    """-o mcp_structured,mcp_documents: the mount's .tool.mcp.json equals the CLI's with
    --mcp-structured --mcp-documents; without them it carries neither (docs/SPEC.md §6)."""
    rel = "media/logo.png"
    with mounted(toolfs_bin, tree, tmp_path / "mnt", "-o", "mcp_structured,mcp_documents") as m:
        data = read(m.path / "media" / "logo.png.tool.mcp.json")
    expected = cli(toolfs_read, tree, os.fsencode(rel), "--mcp-structured", "--mcp-documents",
                   "--format", "mcp")
    assert data == expected
    assert list(json.loads(data)) == ["content", "isError", "structuredContent"]
