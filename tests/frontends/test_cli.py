# SPDX-License-Identifier: MIT
"""toolfs-read as a command (docs/SPEC.md §1): exit codes, usage errors, options as flags, errors before
any reader runs (not_found with suggestions, not_regular), files whose size is not known in
advance, and the JSON shape every result shares."""
import os
import pathlib
import socket
import subprocess

import pytest


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("cli")
    (root / "src").mkdir()
    for name in ["main.c", "mainx.c", "man.c", "unrelated_long_name.py"]:
        (root / "src" / name).write_text(f"/* {name} */\nint x;\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    os.mkfifo(root / "pipe")
    return root


def run_raw(build_dir, *args, cwd=None):
    return subprocess.run([str(build_dir / "cli" / "toolfs-read"), *map(str, args)], cwd=cwd,
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("args,message", [
    ([], "no FILE given"),
    (["a", "b"], "more than one FILE given: b"),
    (["--select", "0x", "notes.txt"], "invalid selector: 0x"),
    (["--select", "3-1", "notes.txt"], "invalid selector: 3-1"),
    (["--format", "yaml", "notes.txt"], "unknown format: yaml"),
    (["--max-lines", "ten", "notes.txt"], "invalid value for --max-lines"),
    (["--max-lines", "0", "notes.txt"], "invalid value for --max-lines"),
    (["--no-such-option", "1", "notes.txt"], "unknown option: --no-such-option"),
    (["--max-lines"], "option --max-lines needs a value"),
])
def test_usage_errors_exit_2_with_a_message_and_no_json(build_dir, tree, args, message):
    proc = run_raw(build_dir, *args, cwd=tree)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert message in proc.stderr.decode()


def test_help_and_version(build_dir):
    help_proc = run_raw(build_dir, "--help")
    assert help_proc.returncode == 0
    text = help_proc.stdout.decode()
    for option in ["max_lines", "max_line_chars", "max_output", "max_image_size", "image_max_dim",
                   "image_max_b64", "max_pdf_size", "max_pdf_pages", "max_notebook_size",
                   "max_office_size", "max_read_memory",
                   "cache_size", "symlinks", "hide_siblings", "--select", "--format"]:
        assert option in text
    version = run_raw(build_dir, "--version")
    assert version.returncode == 0 and version.stdout.startswith(b"toolfs-read ")


def test_success_exits_0_and_failure_exits_1(toolfs_read, tree):
    ok = toolfs_read("notes.txt", cwd=tree)
    assert ok.rc == 0 and ok.json["success"] is True
    failed = toolfs_read("notes.txt", "--select", "9", cwd=tree)
    assert failed.rc == 1 and failed.json["errorCode"] == "out_of_range"


def test_options_accept_dashes_underscores_and_equals(toolfs_read, tree):
    a = toolfs_read("notes.txt", "--max-lines", "1", cwd=tree).out
    b = toolfs_read("notes.txt", "--max_lines", "1", cwd=tree).out
    c = toolfs_read("notes.txt", "--max-lines=1", cwd=tree).out
    assert a == b == c
    j = toolfs_read("notes.txt", "--max-lines", "1", cwd=tree).json
    assert j["content"] == "     1\tone\n"
    assert j["next"] == "notes.txt:2.tool.json"  # a window of max_lines = 1 line


def test_selector_with_a_leading_colon(toolfs_read, tree):
    assert (toolfs_read("notes.txt", "--select", ":2", cwd=tree).out
            == toolfs_read("notes.txt", "--select", "2", cwd=tree).out)


def test_missing_file_suggests_up_to_three_close_names(toolfs_read, tree):
    r = toolfs_read("src/mian.c", cwd=tree)
    assert r.rc == 1
    j = r.json
    assert j["errorCode"] == "not_found"
    assert j["contentType"] == "unknown"
    assert j["error"] == ("File not found: src/mian.c. "
                          "Did you mean src/main.c, src/man.c or src/mainx.c?")
    assert j["content"] == j["error"]
    assert j["shortResult"] == "Error: " + j["error"]
    assert set(j["metadata"]) == {"tokens"}  # no file: only what the error sentence costs


def test_missing_file_with_nothing_close_has_no_suggestion(toolfs_read, tree):
    j = toolfs_read("src/zzzzzzzz.rs", cwd=tree).json
    assert j["error"] == "File not found: src/zzzzzzzz.rs"
    j = toolfs_read("nodir/main.c", cwd=tree).json
    assert j["error"] == "File not found: nodir/main.c"


@pytest.mark.parametrize("name,kind", [("src", "directory"), ("pipe", "fifo"),
                                       ("/dev/null", "character device")])
def test_not_regular_files_are_never_opened(toolfs_read, tree, name, kind):
    r = toolfs_read(name, cwd=tree, timeout=20)  # a FIFO that was opened would hang here
    assert r.rc == 1
    assert r.json["errorCode"] == "not_regular"
    assert r.json["error"] == f"Not a regular file: {name} ({kind})"


def test_socket_is_not_regular(toolfs_read, tmp_path):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        j = toolfs_read(path, timeout=20).json
    assert j["errorCode"] == "not_regular"
    assert j["error"].endswith("(socket)")


def test_permission_denied_names_the_kind_of_file(toolfs_read, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads mode-0000 files; the unprivileged case is in test_mount_hostile")
    path = tmp_path / "secret.png"
    path.write_bytes(b"x")
    path.chmod(0)
    j = toolfs_read(path).json
    assert j["errorCode"] == "permission_denied"
    assert j["error"] == f"Permission denied accessing image file: {path}"


def test_proc_file_with_size_zero_is_read_whole(toolfs_read):
    """/proc files report st_size 0; cat shows their content, and so does toolfs-read."""
    expected = pathlib.Path("/proc/version").read_bytes().decode()
    assert os.stat("/proc/version").st_size == 0
    j = toolfs_read("/proc/version").json
    assert j["success"] is True
    lines = expected.split("\n")[:-1] if expected.endswith("\n") else expected.split("\n")
    assert j["content"] == "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(lines, 1))
    assert j["metadata"]["size"] == len(expected.encode())


def test_truly_empty_file(toolfs_read, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    j = toolfs_read(path).json
    assert j["success"] is True and j["content"] == "" and j["shortResult"] == "File is empty"
    assert j["metadata"]["size"] == 0


def test_output_is_one_line_and_path_is_as_given(toolfs_read, tree):
    for given in ["notes.txt", "./notes.txt", str(tree / "notes.txt")]:
        r = toolfs_read(given, cwd=tree)
        assert r.json["path"] == given
        assert r.out.count(b"\n") == 1


def test_invalid_utf8_in_path_becomes_replacement_character(toolfs_read, tmp_path):
    name = b"caf\xe9.txt"
    with open(os.path.join(os.fsencode(tmp_path), name), "wb") as f:
        f.write(b"hi\n")
    r = toolfs_read(os.fsdecode(name), cwd=tmp_path)
    assert r.rc == 0
    assert r.json["path"] == "caf\ufffd.txt"
