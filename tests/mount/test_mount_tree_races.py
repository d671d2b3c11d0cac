# SPDX-License-Identifier: MIT
"""The inode tree under attack (issue 36, items 1, 2 and 4): a directory bound inside itself and
two mounts bound into each other's SOURCE (the daemon must keep answering), SOURCE renamed while
a reader holds a directory that a later move puts where SOURCE was, and a directory whose ACL
denies a user that the kernel's cached entries would otherwise let through.

Each runs in every cache mode. Every call into the mount runs in a child process with a timeout,
so a hung daemon fails the test instead of hanging the suite. The oracles are the source tree and
the errors docs/SPEC.md §4 names (ELOOP for a directory inside itself, ESTALE for a directory
that left SOURCE, EACCES where SOURCE itself refuses the reader)."""
import json
import os
import subprocess
import time

import pytest

from conftest import CACHE_MODES
from mount_util import mounted, settled
from test_mount_confine import base, toolfs_bin  # noqa: F401 (fixtures: a dir uid 65534 reaches)

ANSWER = 2  # seconds within which the mount must answer a request (a hang guard, not a timing)
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
PY = "/usr/bin/python3"
# Prints "ok" and the bytes read, or the errno's name, of an open + read (or a listing with -l).
ACCESS = r"""
import errno, os, sys
path = sys.argv[2]
try:
    if sys.argv[1] == "-l":
        got = "\n".join(sorted(os.listdir(path)))
    else:
        fd = os.open(path, os.O_RDONLY)
        got = os.read(fd, 1 << 20).decode(errors="replace")
        os.close(fd)
    print("ok\n" + got, end="")
except OSError as e:
    print(errno.errorcode[e.errno], end="")
"""


def access(path, listing=False, user=()) -> str:
    """What a read (or a listing) of path gives: "ok\\n" + its bytes, or the errno's name. Runs
    in a child with ANSWER seconds to answer (subprocess.TimeoutExpired fails the test)."""
    argv = [*user, PY, "-c", ACCESS, "-l" if listing else "-r", str(path)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=ANSWER)
    except subprocess.TimeoutExpired:
        # Not waited for: a request the daemon never answers leaves the child unkillable until
        # the mount goes (mounted() then unmounts it lazily and kills the daemon).
        child.kill()
        raise AssertionError(f"{path}: no answer within {ANSWER} s (the daemon hangs)")
    assert child.returncode == 0, err
    return out


def sibling_content(path, user=()) -> str:
    got = access(path, user=user)
    assert got.startswith("ok\n"), f"{path}: {got}"
    return json.loads(got[3:])["content"]


def bind(what, where) -> None:
    if subprocess.run(["mount", "--bind", str(what), str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here (needs CAP_SYS_ADMIN)")


def unbind(where) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


# -- 2. no cycles in the inode tree -----------------------------------------------------------

@pytest.mark.parametrize("mode", CACHE_MODES)
def test_directory_bound_inside_itself_keeps_the_mount_answering(base, toolfs_bin, mode):
    src = base / "src"
    (src / "x" / "y").mkdir(parents=True)
    (src / "x" / "f.txt").write_bytes(b"f\n")
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode}") as m:
        bind(src / "x", src / "x" / "y")
        try:
            # x/y is x itself: the lookup that would make x its own parent is ELOOP
            assert access(m.path / "x" / "y" / "f.txt.tool.json") == "ELOOP"
            assert access(m.path / "x" / "y" / "y" / "f.txt") == "ELOOP"
            # and everything else is answered, at once
            assert sibling_content(m.path / "x" / "f.txt.tool.json") == "     1\tf\n"
            assert access(m.path / "x" / "f.txt") == "ok\nf\n"
            assert access(m.path / "x", listing=True) == "ok\nf.txt\nf.txt.tool.json\ny"
            assert access(m.path / "x" / "y" / "f.txt.tool.json") == "ELOOP"
        finally:
            unbind(src / "x" / "y")
        assert os.path.exists(f"/proc/{m.pid}"), "the daemon died"


@pytest.mark.parametrize("mode", CACHE_MODES)
def test_two_mounts_bound_into_each_others_source_keep_answering(base, toolfs_bin, mode):
    src_a, src_b = base / "a", base / "b"
    (src_a / "to_b").mkdir(parents=True)
    (src_b / "to_a").mkdir(parents=True)
    (src_a / "fa.txt").write_bytes(b"in a\n")
    (src_b / "fb.txt").write_bytes(b"in b\n")
    with mounted(toolfs_bin, src_a, base / "mnt_a", "-o", f"cache={mode}") as ma, \
            mounted(toolfs_bin, src_b, base / "mnt_b", "-o", f"cache={mode}") as mb:
        bind(mb.path, src_a / "to_b")
        try:
            bind(ma.path, src_b / "to_a")
            try:
                # through the other mount and back: the second visit of a directory is ELOOP
                deep = ma.path / "to_b" / "to_a" / "to_b" / "fb.txt.tool.json"
                assert access(deep) == "ELOOP"
                assert access(mb.path / "to_a" / "to_b" / "to_a" / "fa.txt.tool.json") == \
                    "ELOOP"
                assert sibling_content(ma.path / "to_b" / "fb.txt.tool.json") == "     1\tin b\n"
                assert sibling_content(ma.path / "fa.txt.tool.json") == "     1\tin a\n"
                assert sibling_content(mb.path / "to_a" / "fa.txt.tool.json") == \
                    "     1\tin a\n"
                assert sibling_content(mb.path / "fb.txt.tool.json") == "     1\tin b\n"
                assert access(deep) == "ELOOP"
                # B's siblings are regular files of A's SOURCE, with siblings of their own
                assert access(ma.path / "to_b", listing=True) == \
                    "ok\nfb.txt\nfb.txt.tool.json\nfb.txt.tool.json.tool.json\nto_a"
            finally:
                unbind(src_b / "to_a")
        finally:
            unbind(src_a / "to_b")
        assert os.path.exists(f"/proc/{ma.pid}") and os.path.exists(f"/proc/{mb.pid}")


# -- 4. the inside test against SOURCE's current identity --------------------------------------

@pytest.mark.parametrize("mode", CACHE_MODES)
def test_renamed_source_does_not_keep_a_directory_moved_to_its_old_path(base, toolfs_bin, mode):
    src = base / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "f.txt").write_bytes(b"moved\n")
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode}") as m:
        held = os.open(m.path / "d", os.O_RDONLY | os.O_DIRECTORY)
        try:
            fd_dir = f"/proc/{os.getpid()}/fd/{held}"
            assert access(f"{fd_dir}/f.txt") == "ok\nmoved\n"
            os.rename(src, base / "src.old")
            (base / "src").mkdir()
            os.rename(base / "src.old" / "d", base / "src" / "d")
            (base / "src" / "d" / "new.txt").write_bytes(b"new\n")
            time.sleep(1.2)  # past the moved mark's grace of cache=relaxed and watch
            # the held directory now lies outside SOURCE (src.old): every request is ESTALE
            attempts = {
                "listing": lambda: access(fd_dir, listing=True),
                "file": lambda: access(f"{fd_dir}/f.txt"),
                "new file": lambda: access(f"{fd_dir}/new.txt"),
                "sibling": lambda: access(f"{fd_dir}/f.txt.tool.json"),
            }
            for what, attempt in attempts.items():
                assert attempt() == "ESTALE", what
            # SOURCE itself, under its new name, is still served
            (base / "src.old" / "g.txt").write_bytes(b"g\n")
            assert access(m.path / "g.txt") == "ok\ng\n"
        finally:
            os.close(held)
        assert os.path.exists(f"/proc/{m.pid}"), "the daemon died"


# -- 1. directory ACLs, under allow_other ------------------------------------------------------

@pytest.mark.parametrize("mode", CACHE_MODES)
def test_directory_acl_denies_through_entries_another_user_walked(base, toolfs_bin, mode):
    src = base / "src"
    (src / "acldir" / "sub").mkdir(parents=True)
    (src / "open").mkdir()
    (src / "acldir" / "x.txt").write_bytes(b"x\n")
    (src / "acldir" / "sub" / "y.txt").write_bytes(b"y\n")
    (src / "open" / "z.txt").write_bytes(b"z\n")
    for path in src.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    src.chmod(0o755)
    subprocess.run(["setfacl", "-m", "u:nobody:---", str(src / "acldir")], check=True)
    # natively, uid 65534 may not search acldir, though its mode is 0755
    assert access(src / "acldir" / "x.txt", user=NOBODY) == "EACCES"
    acl = [("acldir/x.txt", False), ("acldir/sub/y.txt", False),
           ("acldir/sub/y.txt.tool.json", False), ("acldir/x.txt.tool.txt", False),
           ("acldir", True), ("acldir/sub", True)]
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode},allow_other") as m:
        for rel, listing in acl:  # root walks first: the kernel caches what it may
            assert access(m.path / rel, listing=listing).startswith("ok\n"), rel
        for rel, listing in acl:
            assert access(m.path / rel, listing=listing, user=NOBODY) == "EACCES", rel
        # what the ACL does not cover is served to uid 65534, and root still reads everything
        assert access(m.path / "open" / "z.txt", user=NOBODY) == "ok\nz\n"
        assert sibling_content(m.path / "open" / "z.txt.tool.json", user=NOBODY) == \
            "     1\tz\n"
        assert access(m.path / "acldir" / "sub" / "y.txt") == "ok\ny\n"
        # an ACL set while mounted holds from then on (relaxed: after the invalidation delay)
        subprocess.run(["setfacl", "-m", "u:nobody:---", str(src / "open")], check=True)
        assert settled(mode, lambda: access(m.path / "open" / "z.txt", user=NOBODY) == "EACCES")
        assert os.path.exists(f"/proc/{m.pid}"), "the daemon died"


@pytest.mark.parametrize("mode", CACHE_MODES)
def test_source_acl_does_not_widen_the_root_its_ancestors_narrow(base, toolfs_bin, mode):
    """Issue 36, items 1 and 6 together: SOURCE's own ACL grants uid 65534, but an ancestor
    (0700) keeps it out natively; the mount's root, narrowed to the ancestors' classes, must not
    hand the kernel that ACL, which would let uid 65534 in past the narrowed mode."""
    home = base / "home"
    src = home / "src"
    src.mkdir(parents=True)
    (src / "f.txt").write_bytes(b"f\n")
    (src / "f.txt").chmod(0o644)
    src.chmod(0o750)
    home.chmod(0o700)
    subprocess.run(["setfacl", "-m", "u:nobody:r-x", str(src)], check=True)
    assert access(src / "f.txt", user=NOBODY) == "EACCES"  # natively: home keeps it out
    with mounted(toolfs_bin, src, base / "mnt", "-o", f"cache={mode},allow_other") as m:
        assert access(m.path / "f.txt") == "ok\nf\n"
        assert access(m.path, listing=True, user=NOBODY) == "EACCES"
        assert access(m.path / "f.txt", user=NOBODY) == "EACCES"
