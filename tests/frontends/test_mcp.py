# SPDX-License-Identifier: MIT
"""toolfs-mcp (docs/SPEC.md §7) driven by the official TypeScript SDK's Client over stdio
(tests/sdk/mcp_bridge.mjs, @modelcontextprotocol/sdk pinned in tests/sdk), and by raw JSON-RPC
lines where the SDK would refuse to send what is tested (malformed lines, unknown methods).

Oracles: the SDK's own schemas (CallToolResultSchema, the client's validation of every answer),
`toolfs-read --format mcp` run from the root on the same file with the server's options (equal
but for the continuation phrase), `cat -n` built in Python, and os.path.realpath."""
import json
import os
import pathlib
import re
import select
import subprocess
import threading
import time

import jsonschema
import pytest

import gen_formats

SDK = pathlib.Path(__file__).resolve().parents[1] / "sdk"
# The server's defaults that differ from toolfs-read's (mcp/mcp_main.c, README).
SERVER_OPTIONS = ["--max-tokens", "20000", "--image-max-dim", "1568", "--image-max-b64", "1M",
                  "--max-pdf-pages", "5"]
HINT = re.compile(r"^\[(.*)\. More: (.*)\]$")
CALL_HINT = re.compile(r"^call read with offset (\d+)(?:, limit (\d+))?$")


@pytest.fixture(scope="module")
def mcp_bin(build_dir) -> pathlib.Path:
    path = build_dir / "mcp" / "toolfs-mcp"
    assert path.exists(), "toolfs-mcp is not built"
    return path


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> pathlib.Path:
    base = tmp_path_factory.mktemp("mcp")
    src = base / "root"
    gen_formats.generate(src)
    (src / "sub").mkdir()
    (src / "sub" / "inner.txt").write_text("inside a folder\n")
    # long lines and many of them: cut by max_tokens (20000) before max_lines
    (src / "wide.log").write_text("".join(f"{n} " + " ".join(f"w{k}" for k in range(n % 97 // 3))
                                          + "\n" for n in range(1, 3001)))
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the model\n")
    os.symlink(outside / "secret.txt", src / "escape.txt")
    os.symlink("../outside", src / "escape_dir")
    os.symlink("small.png", src / "alias.png")
    # 3000 lines of text (past the 8 KiB binary check) then a 200 MB hole: a read from line
    # 2990 scans and hashes it all, long enough (about a second) to be cancelled
    with open(src / "slow.txt", "wb") as f:
        f.write(b"".join(b"line %d\n" % i for i in range(3000)))
        f.truncate(200 * 1024 * 1024)
    return src


class Bridge:
    """One node process running mcp_bridge.mjs: send(op dict) -> the op's value."""

    def __init__(self, script="mcp_bridge.mjs", package="sdk"):
        if not (SDK / "node_modules" / "@modelcontextprotocol" / package).is_dir():
            pytest.fail("the SDKs are not installed: run (cd tests/sdk && npm ci), as tests/run does")
        self.proc = subprocess.Popen(["node", str(SDK / script)], cwd=SDK,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, cmd: dict, timeout: float = 120):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"the bridge did not answer {cmd['op']} in {timeout}s"
        answer = json.loads(self.proc.stdout.readline())
        assert answer["ok"], answer.get("error")
        return answer["value"]

    def close(self):
        try:
            self.send({"op": "close"})
        finally:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def client(mcp_bin, root):
    bridge = Bridge()
    info = bridge.send({"op": "connect", "command": str(mcp_bin), "args": [str(root)]})
    bridge.info = info
    yield bridge
    bridge.close()


def read(client, **arguments) -> dict:
    got = client.send({"op": "call", "name": "read", "arguments": arguments})
    assert got["ok"], got
    assert got["schemaOk"], "CallToolResultSchema rejects the result"
    return got["result"]


def cli_mcp(toolfs_read, root, rel, *args) -> dict:
    r = toolfs_read(rel, *SERVER_OPTIONS, *args, "--format", "mcp", cwd=root)
    assert r.rc in (0, 1), r.err
    return r.json


def split_hint(result: dict):
    """(blocks without the continuation block, the continuation phrase or None)."""
    blocks = result["content"]
    if len(blocks) > 1 and blocks[-1]["type"] == "text":
        m = HINT.match(blocks[-1]["text"])
        if m:
            return blocks[:-1], m.group(2)
    return blocks, None


# ---- handshake and tools/list ----

def test_handshake(client):
    info = client.info
    assert info["serverVersion"]["name"] == "toolfs-mcp"
    assert info["capabilities"]["tools"] is not None
    assert "read" in info["instructions"]


def test_protocol_versions_negotiated_as_the_sdk_does(mcp_bin, root, client):
    supported, latest = client.info["supported"], client.info["latest"]
    for asked, expected in [(v, v) for v in supported] + [("1999-01-01", latest)]:
        out = raw_session(mcp_bin, root, [request(1, "initialize", {
            "protocolVersion": asked, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})])
        assert out[0]["result"]["protocolVersion"] == expected


def test_tools_list(client):
    tools = {t["name"]: t for t in client.send({"op": "list"})["tools"]}
    assert set(tools) == {"read", "list_allowed_directories"}
    read_tool = tools["read"]
    jsonschema.Draft202012Validator.check_schema(read_tool["inputSchema"])
    assert read_tool["inputSchema"]["required"] == ["file_path"]
    assert set(read_tool["inputSchema"]["properties"]) == {"file_path", "offset", "limit", "pages",
                                                           "region", "time",
                                                           "max_tokens", "ocr"}
    assert read_tool["annotations"]["readOnlyHint"] is True
    assert read_tool["annotations"]["idempotentHint"] is True
    assert read_tool["annotations"]["openWorldHint"] is False
    assert "call read with offset" in read_tool["description"]
    for word in ("line numbers", "images", "PDFs", "notebooks"):
        assert word in read_tool["description"], word
    assert "outputSchema" not in read_tool
    jsonschema.Draft202012Validator.check_schema(tools["list_allowed_directories"]["inputSchema"])
    validator = jsonschema.Draft202012Validator(read_tool["inputSchema"])
    assert validator.is_valid({"file_path": "a", "offset": 2, "limit": 3})
    assert not validator.is_valid({"file_path": "a", "offset": 0})
    assert not validator.is_valid({"file_path": "a", "pages": "3-"})
    assert validator.is_valid({"file_path": "a", "region": "800x600+1200+400"})
    assert validator.is_valid({"file_path": "a", "region": "3@400x300+0+500"})
    assert not validator.is_valid({"file_path": "a", "region": "0x600+1+1"})
    assert not validator.is_valid({"file_path": "a", "region": "8x6+01+1"})
    assert validator.is_valid({"file_path": "a", "ocr": "on"})
    assert not validator.is_valid({"file_path": "a", "ocr": "yes"})


def test_list_allowed_directories(client, root):
    got = client.send({"op": "call", "name": "list_allowed_directories", "arguments": {}})
    assert got["result"]["content"] == [{"type": "text", "text": os.path.realpath(root)}]


# ---- read: the same result as toolfs-read --format mcp ----

CASES = {
    "text": ("hello.py", {}, []),
    "selector": ("long.txt", {"offset": 10, "limit": 5}, ["--select", "10-14"]),
    "open_selector": ("long.txt", {"offset": 2490}, ["--select", "2490-"]),
    "first_n": ("long.txt", {"limit": 3}, ["--select", "1-3"]),
    "truncated": ("long.txt", {}, []),
    "subfolder": ("sub/inner.txt", {}, []),
    "notebook": ("figures.ipynb", {}, []),
    "pdf": ("two pages.pdf", {}, []),
    "pdf_pages": ("two pages.pdf", {"pages": "1-2"}, ["--select", "1-2"]),
    "image_fitted": ("wide.png", {}, []),
    "image_converted": ("icon.bmp", {}, []),
    "image_via_link": ("alias.png", {}, []),
    "corrupt_image": ("corrupt.png", {}, []),
    "binary": ("tool.bin", {}, []),
    "missing": ("lnog.txt", {}, []),
    "empty": ("empty.txt", {}, []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_read_equals_cli_but_for_the_hint(client, toolfs_read, root, case):
    rel, arguments, cli_args = CASES[case]
    got = read(client, file_path=rel, **arguments)
    want = cli_mcp(toolfs_read, root, rel, *cli_args)
    got_blocks, got_more = split_hint(got)
    want_blocks, want_more = split_hint(want)
    assert got_blocks == want_blocks
    assert {k: v for k, v in got.items() if k != "content"} == \
        {k: v for k, v in want.items() if k != "content"}
    assert (got_more is None) == (want_more is None)
    if got_more:
        # the same sibling, said in the tool's arguments
        sel = re.match(r"read .*:(\d+)(?:-(\d+)?)?\.tool\.mcp\.json$", want_more)
        assert sel, want_more
        start, end = int(sel.group(1)), sel.group(2)
        expected = f"call read with offset {start}" + (
            f", limit {int(end) - start + 1}" if end else "")
        assert got_more == expected
        assert got["content"][-1]["text"].startswith("[" + want["_meta"]["toolfs/result"]
                                                     ["shortResult"])


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.mark.parametrize("rel", ["big.txt", "small.png"])
def test_a_result_line_is_the_cli_document_in_its_envelope(mcp_bin, toolfs_read, tmp_path, rel):
    """The answer to a read is, byte for byte, `toolfs-read --format mcp`'s document (without its
    newline) in the JSON-RPC envelope, and for 2026-07-28 with resultType spliced in as its last
    member: a 9.7 MB text (its literal runs) and an image (its base64), streamed from the
    document since issue 38."""
    gen_formats.generate(tmp_path)
    with open(tmp_path / "big.txt", "w") as f:
        f.writelines(f"{n} the quick brown fox jumps over the lazy dog, again and again "
                     f"{n * 7919 % 100000}\n" for n in range(1, 110001))
    options = ["--max-tokens", "off", "--max-output", "9M", "--max-lines", "1000000"]
    want = toolfs_read(rel, *SERVER_OPTIONS, *options, "--format", "mcp", cwd=tmp_path)
    assert want.rc == 0, want.err
    document = want.out
    assert document.endswith(b"}\n") and (rel != "big.txt" or len(document) > 9_000_000)
    args = {"name": "read", "arguments": {"file_path": rel}}
    lines = "".join(json.dumps(m) + "\n" for m in [
        request(1, "tools/call", args),
        request("m", "tools/call", {**args, "_meta": MODERN_META})])
    proc = subprocess.run([str(mcp_bin), *SERVER_OPTIONS, *options, str(tmp_path)],
                          input=lines.encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = {json.loads(line)["id"]: line for line in proc.stdout.split(b"\n")[:-1]}
    assert got[1] == b'{"jsonrpc":"2.0","id":1,"result":' + document[:-1] + b"}"
    assert got["m"] == (b'{"jsonrpc":"2.0","id":"m","result":' + document[:-2] +
                        b',"resultType":"complete"}}')


def test_read_results_cover_their_kinds(client):
    meta = lambda **a: read(client, **a)["_meta"]["toolfs/result"]  # noqa: E731
    assert meta(file_path="wide.png")["metadata"]["resized"]["to"]["width"] <= 1568
    assert meta(file_path="corrupt.png")["errorCode"] == "corrupt"
    assert meta(file_path="tool.bin")["errorCode"] == "binary"
    assert meta(file_path="lnog.txt")["errorCode"] == "not_found"
    pages = read(client, file_path="two pages.pdf", pages="1-2")
    assert [b["type"] for b in pages["content"]] == ["text", "image", "image"]
    nb = read(client, file_path="figures.ipynb")
    assert any(b["type"] == "image" for b in nb["content"])
    pdf = read(client, file_path="two pages.pdf")
    assert all(b["type"] != "resource" for b in pdf["content"]), "PDFs embedded only on request"


def test_absolute_path_inside_the_root(client, root):
    got = read(client, file_path=str(root / "sub" / "inner.txt"))
    assert got["content"][0]["text"] == "     1\tinside a folder\n"
    assert got["_meta"]["toolfs/result"]["path"] == "sub/inner.txt"


# ---- confinement ----

@pytest.mark.parametrize("path,through_link", [
    ("/etc/passwd", False), ("../outside/secret.txt", False),
    ("sub/../../outside/secret.txt", False), ("escape.txt", True),
    ("escape_dir/secret.txt", True), ("escape_dir/missing.txt", True),
])
def test_outside_the_root_is_refused(client, root, path, through_link):
    got = read(client, file_path=path)
    assert got["isError"] is True
    meta = got["_meta"]["toolfs/result"]
    assert meta["errorCode"] == "outside_root"
    text = got["content"][0]["text"]
    assert "not for the model" not in json.dumps(got)
    if through_link:
        assert text.startswith("Symbolic link points outside the allowed directories")
    else:
        assert text.startswith(f"Access denied: {path} is outside the allowed directories. "
                               f"Read files under {os.path.realpath(root)}")


def mcp_texts(mcp_bin, root, paths) -> list:
    """(errorCode, first text) of a read of each path, in order, from one raw session."""
    out = raw_session(mcp_bin, root, [request(i, "tools/call", {
        "name": "read", "arguments": {"file_path": p}}) for i, p in enumerate(paths, 1)])
    got = {m["id"]: m["result"] for m in out}
    return [(got[i]["_meta"]["toolfs/result"].get("errorCode"), got[i]["content"][0]["text"])
            for i in range(1, len(paths) + 1)]


def test_dotdot_out_and_back_is_not_called_a_link(mcp_bin, root):
    """A path whose ".." climbs out of the root and comes back (issue 37 item 7) is refused
    for its "..", not as a symbolic link escape, and names the path to ask instead."""
    rel = f"../{root.name}/sub/inner.txt"
    [(code, text), (code_abs, text_abs), (code_link, text_link)] = mcp_texts(
        mcp_bin, root, [rel, f"{root}/../{root.name}/sub/inner.txt", "escape_dir/../small.png"])
    assert code == code_abs == "outside_root"
    assert "ymbolic link" not in text and "ymbolic link" not in text_abs
    assert text == (f'Access denied: {rel} climbs out of the allowed directories with ".." '
                    "before coming back: each name is followed in turn, and none may leave "
                    "them. Ask for sub/inner.txt instead.")
    # through a link that leads outside, the link is what happened
    assert code_link == "outside_root"
    assert text_link.startswith("Symbolic link points outside the allowed directories")


def test_a_trailing_slash_is_not_answered_with_the_same_name(mcp_bin, root):
    """"sub/inner.txt/" named a directory: the answer says so, never "Did you mean
    sub/inner.txt?" for the name asked (issue 37 item 7); a misspelling still gets its
    suggestion."""
    [(code, text), (code_dd, text_dd), (code_typo, text_typo)] = mcp_texts(
        mcp_bin, root, ["sub/inner.txt/", "nothing/../sub/inner.txt", "sub/iner.txt"])
    assert code == "not_found"
    assert text == ("Not a directory: sub/inner.txt/. sub/inner.txt is a file, and a trailing "
                    "slash names a directory: ask for sub/inner.txt.")
    assert code_dd == "not_found"
    assert text_dd == ('File not found: nothing/../sub/inner.txt. A name before ".." does not '
                       'exist or is not a directory (each name is followed in turn: ".." does '
                       "not cancel it); sub/inner.txt itself exists.")
    assert code_typo == "not_found"
    assert text_typo == "File not found: sub/iner.txt. Did you mean sub/inner.txt?"


def test_symlinks_none_follows_no_link(mcp_bin, root):
    out = raw_session(mcp_bin, root, [request(1, "tools/call", {
        "name": "read", "arguments": {"file_path": "alias.png"}})])
    assert out[0]["result"]["_meta"]["toolfs/result"]["success"] is True  # inside: followed
    proc = subprocess.run([str(mcp_bin), "--symlinks", "none", str(root)], capture_output=True,
                          input=(json.dumps(request(1, "tools/call", {
                              "name": "read", "arguments": {"file_path": "alias.png"}})) + "\n"
                                 ).encode(), timeout=60)
    got = json.loads(proc.stdout)["result"]
    assert got["_meta"]["toolfs/result"]["errorCode"] == "not_regular"
    assert got["content"][0]["text"] == ("Not a regular file: alias.png (a symbolic link; this "
                                         "server follows none: symlinks=none)")


def test_a_link_stays_beneath_the_root_it_starts_in(mcp_bin, tmp_path):
    """Two roots: a link in the first to a file in the second is outside (its root's), and
    the same file asked by its own path is read."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "b.txt").write_text("in the second root\n")
    os.symlink(second / "b.txt", first / "to_second")
    proc = subprocess.run([str(mcp_bin), str(first), str(second)], capture_output=True,
                          input="".join(json.dumps(request(i, "tools/call", {
                              "name": "read", "arguments": {"file_path": p}})) + "\n"
                              for i, p in enumerate(["to_second", str(second / "b.txt")], 1)
                          ).encode(), timeout=60)
    # the calls run concurrently: their answers come in any order
    out = {m["id"]: m for m in map(json.loads, proc.stdout.decode().splitlines())}
    assert out[1]["result"]["_meta"]["toolfs/result"]["errorCode"] == "outside_root"
    assert out[2]["result"]["content"][0]["text"] == "     1\tin the second root\n"


def test_the_read_tool_tells_the_limits_in_force(mcp_bin, root):
    """The description, the limit property and the instructions say this server's window, not
    the default's (issue 38: "lines 1-2000 by default" with --max_lines 500), and the
    instructions name every kind of file the tool reads, audio and video among them."""
    proc = subprocess.run([str(mcp_bin), "--max_lines", "500", str(root)], capture_output=True,
                          timeout=60, input=(json.dumps(request(1, "initialize", {
                              "protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}})) + "\n" +
                              json.dumps(request(2, "tools/list", {})) + "\n").encode())
    init, listed = [json.loads(line)["result"] for line in proc.stdout.decode().splitlines()]
    read = next(t for t in listed["tools"] if t["name"] == "read")
    assert "lines 1-500 by default" in read["description"]
    assert "offset 501, limit 500" in read["description"]
    assert "1-2000" not in read["description"] and "limit 2000" not in read["description"]
    assert read["inputSchema"]["properties"]["limit"]["description"].endswith(
        "Default: 500 lines, the whole notebook, or 10 PDF pages.")
    for kind in ("numbered text", "images", "PDFs", "notebooks", "Word, Excel and PowerPoint",
                 "SVG", "audio", "video"):
        assert kind in init["instructions"], kind
    usage = subprocess.run([str(mcp_bin), "--help"], capture_output=True, timeout=30)
    head = " ".join(usage.stdout.decode().split("Options:")[0].split())
    for kind in ("text with line numbers", "images", "PDFs",
                 "notebooks", "Word, Excel and PowerPoint", "SVG", "audio", "video"):
        assert kind in head, kind


def test_hints_beneath_another_root_name_it_whole(mcp_bin, tmp_path):
    """A relative file_path is taken beneath the first root, so a hint for a file of the second
    names it by its whole path: "Ask for sub/inner.txt" would read first/sub/inner.txt (on
    bc9d6c4 every hint below was relative)."""
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "sub").mkdir(parents=True)
    (second / "sub").mkdir(parents=True)
    (first / "sub" / "inner.txt").write_text("the first root's\n")
    (second / "sub" / "inner.txt").write_text("the second root's\n")
    want = f"{second}/sub/inner.txt"
    asked = [f"{second}/../second/sub/inner.txt", f"{want}/", f"{second}/nothing/../sub/inner.txt",
             f"{second}/sub/iner.txt"]
    proc = subprocess.run([str(mcp_bin), str(first), str(second)], capture_output=True,
                          input="".join(json.dumps(request(i, "tools/call", {
                              "name": "read", "arguments": {"file_path": p}})) + "\n"
                              for i, p in enumerate(asked, 1)).encode(), timeout=60)
    # the calls run concurrently: their answers come in any order
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.decode().splitlines())}
    texts = [answers[i]["result"]["content"][0]["text"] for i in range(1, len(asked) + 1)]
    assert texts == [
        f'Access denied: {asked[0]} climbs out of the allowed directories with ".." before '
        "coming back: each name is followed in turn, and none may leave them. "
        f"Ask for {want} instead.",
        f"Not a directory: {want}/. {want} is a file, and a trailing slash names a directory: "
        f"ask for {want}.",
        f'File not found: {asked[2]}. A name before ".." does not exist or is not a directory '
        f'(each name is followed in turn: ".." does not cancel it); {want} itself exists.',
        f"File not found: {asked[3]}. Did you mean {want}?",
    ]


# ---- continuation ----

def test_truncated_text_continued_by_its_hints_joins_to_cat_n(client, root):
    lines = (root / "wide.log").read_text().splitlines()
    whole = "".join(f"{n:6d}\t{line}\n" for n, line in enumerate(lines, 1))
    arguments, pieces = {"file_path": "wide.log"}, []
    for _ in range(50):
        got = read(client, **arguments)
        assert got["isError"] is False
        pieces.append(got["content"][0]["text"])
        assert len(got["content"][0]["text"].encode()) <= 100 * 1024
        assert got["_meta"]["toolfs/result"]["metadata"]["tokens"]["content"] <= 20000
        _, more = split_hint(got)
        if more is None:
            break
        m = CALL_HINT.match(more)
        assert m, more
        arguments = {"file_path": "wide.log", "offset": int(m.group(1))}
        if m.group(2):
            arguments["limit"] = int(m.group(2))
    assert len(pieces) > 2, "the fixture must take several reads"
    assert "".join(pieces) == whole


# ---- bad arguments and protocol errors ----

@pytest.mark.parametrize("arguments,word", [
    ({}, "file_path"), ({"file_path": 3}, "file_path"), ({"file_path": ""}, "file_path"),
    ({"file_path": "a", "offset": "2"}, "offset"), ({"file_path": "a", "offset": 0}, "offset"),
    ({"file_path": "a", "offset": 1.5}, "offset"), ({"file_path": "a", "limit": -1}, "limit"),
    ({"file_path": "a", "pages": 3}, "pages"), ({"file_path": "a", "pages": "2-"}, "pages"),
    ({"file_path": "a", "pages": "2", "offset": 1}, "either pages"),
])
def test_wrong_arguments_are_error_results(client, arguments, word):
    got = read(client, **arguments)
    assert got["isError"] is True
    assert got["content"][0]["text"].startswith("Invalid arguments for read: ")
    assert word in got["content"][0]["text"]
    client.send({"op": "ping"})


def test_unknown_tool_is_invalid_params(client):
    got = client.send({"op": "call", "name": "write", "arguments": {}})
    assert got["ok"] is False and got["code"] == -32602
    assert "Unknown tool: write" in got["message"]
    client.send({"op": "ping"})


def request(id_, method, params=None) -> dict:
    msg = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def raw_session(mcp_bin, root, messages, timeout=60) -> list:
    """Sends each message (a dict, or a str sent as the line) to a fresh server, closes stdin,
    returns the JSON answers in order; the server must exit 0."""
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    proc = subprocess.run([str(mcp_bin), str(root)], input=lines.encode(), capture_output=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out == "" or out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


def test_protocol_errors_and_the_server_keeps_serving(mcp_bin, root):
    out = raw_session(mcp_bin, root, [
        "this is not json", '{"jsonrpc":"2.0","id":1,"method":"ping"', "[]",
        '[{"jsonrpc":"2.0","id":2,"method":"ping"}]', "42",
        {"jsonrpc": "1.0", "id": 3, "method": "ping"}, {"jsonrpc": "2.0", "id": {}, "method": "x"},
        {"jsonrpc": "2.0", "id": 4, "method": 7}, {"jsonrpc": "2.0", "id": 5},
        request(6, "resources/list"), request(7, "tools/call", {"name": "nope"}),
        request(8, "tools/call", {"arguments": {}}), {"jsonrpc": "2.0", "method": "unknown/note"},
        "", "   ", request(9, "ping"),
    ])
    codes = [(m.get("id"), m["error"]["code"]) if "error" in m else (m["id"], "ok") for m in out]
    assert codes == [
        (None, -32700), (None, -32700), (None, -32600), (None, -32600), (None, -32600),
        (3, -32600), (None, -32600), (4, -32600), (5, -32600),
        (6, -32601), (7, -32602), (8, -32602), (9, "ok"),
    ]
    for m in out:
        assert m["jsonrpc"] == "2.0"


def raw_lines(mcp_bin, root, lines, *args, timeout=60) -> list:
    """Sends the lines (str) to a fresh server started with args, returns its output lines."""
    proc = subprocess.run([str(mcp_bin), *args, str(root)],
                          input="".join(line + "\n" for line in lines).encode(),
                          capture_output=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().splitlines()


# ---- hostile input (issue 23, defect 5) ----

def test_suggestions_only_name_entries_beneath_a_root(mcp_bin, tmp_path):
    """A dangling link whose target folder appears and goes while reads run through it: no
    answer names what that folder holds (a "Did you mean" listed it, 133 in 26,096 calls)."""
    src = tmp_path / "root"
    src.mkdir()
    (src / "real.txt").write_text("x\n")
    appears = tmp_path / "appears"
    os.symlink("../appears", src / "d")
    stop = threading.Event()

    def toggle():
        while not stop.is_set():
            try:
                appears.mkdir()
                (appears / "secret-name.txt").write_text("")
                os.unlink(appears / "secret-name.txt")
                appears.rmdir()
            except OSError:
                pass

    thread = threading.Thread(target=toggle)
    thread.start()
    try:
        calls = [request(i, "tools/call", {"name": "read",
                                           "arguments": {"file_path": "d/secret-nam.txt"}})
                 for i in range(1, 4001)]
        out = raw_session(mcp_bin, src, calls, timeout=300)
    finally:
        stop.set()
        thread.join()
    assert len(out) == 4000
    leaked = [m for m in out if "secret-name" in json.dumps(m)]
    assert not leaked, f"{len(leaked)} of {len(out)} answers name an entry outside: {leaked[0]}"
    for m in out:
        assert m["result"]["_meta"]["toolfs/result"]["errorCode"] == "outside_root"


def test_a_request_line_over_the_limit_is_refused_and_the_server_goes_on(mcp_bin, root):
    def ping(id_, size):
        line = json.dumps({"jsonrpc": "2.0", "id": id_, "method": "ping", "params": {"p": ""}})
        return line.replace('"p": ""', '"p": "' + "x" * (size - len(line)) + '"')

    out = [json.loads(line) for line in raw_lines(mcp_bin, root, [
        ping(1, 1024), ping(2, 1025), ping(3, 100), ping(4, 5000)], "--max-request", "1K")]
    assert [m.get("id") for m in out] == [1, None, 3, None]
    assert "result" in out[0] and "result" in out[2]
    for m in (out[1], out[3]):
        assert m["error"]["code"] == -32600
        assert "1024 bytes" in m["error"]["message"] and "--max-request" in m["error"]["message"]
    # the default: 1 MiB
    out = [json.loads(line) for line in raw_lines(mcp_bin, root, [
        ping(1, 1 << 20), ping(2, (1 << 20) + 1), ping(3, 10)])]
    assert [m.get("id") for m in out] == [1, None, 3]
    assert out[1]["error"]["code"] == -32600 and "1048576 bytes" in out[1]["error"]["message"]


def test_a_100_mb_line_is_never_held(mcp_bin, root):
    """A 100 MB line is discarded as it arrives: the server's peak RSS stays low, it answers
    the line with -32600 and the next with its result."""
    proc = subprocess.Popen([str(mcp_bin), str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        chunk = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"' + b"x" * (1 << 20)
        for _ in range(100):
            proc.stdin.write(chunk)
        proc.stdin.write(b'"}}\n' + json.dumps(request(2, "ping")).encode() + b"\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        status = open(f"/proc/{proc.pid}/status").read()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert answers[0]["id"] is None and answers[0]["error"]["code"] == -32600
    assert answers[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert rss < 64 * 1024 and peak < 64 * 1024, f"VmRSS {rss} kB, VmHWM {peak} kB"


def test_a_nul_in_file_path_is_an_argument_error(mcp_bin, root):
    out = raw_session(mcp_bin, root, [
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read",'
        '"arguments":{"file_path":"hello.py\\u0000.png"}}}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read",'
        '"arguments":{"file_path":"hello.py","x":"\\u0000"}}}'])
    got = out[0]["result"]
    assert got["isError"] is True
    assert got["content"] == [{"type": "text", "text": "Invalid arguments for read: file_path "
                               "must not contain a NUL character (\\u0000)."}]
    assert out[1]["result"]["isError"] is False  # a NUL elsewhere is no concern of file_path


@pytest.mark.parametrize("token", ["1e400", "1.0", "12345678901234567890", "-0", "1E+2",
                                   "0.5e-7", "-12", '"\\u00e9"', '"a\\/b"', '""'])
def test_ids_are_echoed_exactly_as_sent(mcp_bin, root, token):
    lines = raw_lines(mcp_bin, root, [
        f'{{"jsonrpc":"2.0","id":{token},"method":"ping"}}',
        f'{{"jsonrpc":"2.0","method":"nope","id" : {token} }}',
        f'{{"jsonrpc":"2.0","id":{token},"method":"tools/call","params":{{"name":"read",'
        f'"arguments":{{"file_path":"hello.py"}}}}}}'])
    assert lines[0] == f'{{"jsonrpc":"2.0","id":{token},"result":{{}}}}'
    assert lines[1].startswith(f'{{"jsonrpc":"2.0","id":{token},"error":{{"code":-32601,')
    assert lines[2].startswith(f'{{"jsonrpc":"2.0","id":{token},"result":{{')


@pytest.mark.parametrize("token", ["01", "1.", "-", '"a\tb"', '"\\x"', '"\xff"'])
def test_ids_that_are_no_json_number_or_string_are_invalid(mcp_bin, root, token):
    """cJSON takes these (strtod's numbers, raw control characters, invalid UTF-8); echoed as
    sent they would not be JSON, so the request is refused without an id."""
    line = f'{{"jsonrpc":"2.0","id":{token},"method":"ping"}}'
    proc = subprocess.run([str(mcp_bin), str(root)], input=line.encode("latin-1") + b"\n",
                          capture_output=True, timeout=60)
    out = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert len(out) == 1 and out[0]["id"] is None
    assert out[0]["error"]["code"] in (-32600, -32700)


# ---- concurrency, cancellation, end of input ----

def test_32_concurrent_calls(client, toolfs_read, root):
    names = ["hello.py", "long.txt", "small.png", "figures.ipynb", "tool.bin", "two pages.pdf",
             "sub/inner.txt", "lnog.txt"] * 4
    got = client.send({"op": "calls", "calls": [
        {"name": "read", "arguments": {"file_path": n}} for n in names]})
    assert len(got) == 32
    for name, answer in zip(names, got):
        assert answer["ok"] and answer["schemaOk"]
        blocks, _ = split_hint(answer["result"])
        assert blocks == split_hint(cli_mcp(toolfs_read, root, name))[0], name


def test_cancelled_call_through_the_sdk(client):
    got = client.send({"op": "cancel", "name": "read",
                       "arguments": {"file_path": "slow.txt", "offset": 2990}, "afterMs": 5})
    assert got["aborted"], got
    assert read(client, file_path="hello.py")["isError"] is False


def test_cancelled_calls_are_never_answered(mcp_bin, root):
    """Four slow calls fill the workers; the fifth waits in the queue. Cancelling the fifth and
    one running call: neither is answered, the others are, and the server keeps serving."""
    slow = {"name": "read", "arguments": {"file_path": "slow.txt", "offset": 2990}}
    messages = [request(i, "tools/call", slow) for i in range(1, 6)]
    messages += [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": i, "reason": "test"}} for i in (5, 1)]
    messages.append(request(6, "ping"))
    out = raw_session(mcp_bin, root, messages)
    answered = [m["id"] for m in out]
    assert 5 not in answered
    assert sorted(answered) in ([2, 3, 4, 6], [1, 2, 3, 4, 6])  # 1 may finish before its cancel
    assert out[0]["id"] == 6, "the ping is answered while the slow reads run"


def test_end_of_input_mid_call_exits_cleanly(mcp_bin, root):
    proc = subprocess.Popen([str(mcp_bin), str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write((json.dumps(request(1, "tools/call", {
        "name": "read", "arguments": {"file_path": "slow.txt", "offset": 2990}})) + "\n").encode())
    proc.stdin.flush()
    time.sleep(0.05)
    proc.stdin.close()
    rc = proc.wait(timeout=60)
    out = proc.stdout.read().decode()
    assert rc == 0, proc.stderr.read()
    assert [json.loads(line)["id"] for line in out.splitlines()] == [1]
    # reaped, and it left no process behind
    assert not os.path.exists(f"/proc/{proc.pid}") or \
        "zombie" not in open(f"/proc/{proc.pid}/status").read()
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True)
    assert children.stdout == b""


# ---- roots from the client ----

def test_client_roots_replace_the_arguments(mcp_bin, root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "note.txt").write_text("from the client's root\n")
    bridge = Bridge()
    try:
        bridge.send({"op": "connect", "command": str(mcp_bin), "args": [str(root)],
                     "roots": [other.as_uri()]})
        listing = lambda: bridge.send({"op": "call", "name": "list_allowed_directories",  # noqa
                                       "arguments": {}})["result"]["content"][0]["text"]
        deadline = time.time() + 10
        while listing() != os.path.realpath(other) and time.time() < deadline:
            time.sleep(0.05)
        assert listing() == os.path.realpath(other)
        got = read(bridge, file_path="note.txt")
        assert got["content"][0]["text"] == "     1\tfrom the client's root\n"
        assert read(bridge, file_path=str(root / "hello.py"))["isError"] is True
        bridge.send({"op": "roots", "roots": [root.as_uri(), other.as_uri()]})
        deadline = time.time() + 10
        while "\n" not in listing() and time.time() < deadline:
            time.sleep(0.05)
        assert listing() == os.path.realpath(root) + "\n" + os.path.realpath(other)
        assert read(bridge, file_path="hello.py")["isError"] is False
    finally:
        bridge.close()


# ---- mcp_structured ----

def test_mcp_structured_gives_structured_content_and_an_output_schema(mcp_bin, root, toolfs_read):
    bridge = Bridge()
    try:
        bridge.send({"op": "connect", "command": str(mcp_bin),
                     "args": ["--mcp-structured", str(root)]})
        tools = {t["name"]: t for t in bridge.send({"op": "list"})["tools"]}
        schema = tools["read"]["outputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        for name in ("hello.py", "small.png", "long.txt"):
            got = read(bridge, file_path=name)  # the SDK validates it against outputSchema
            jsonschema.validate(got["structuredContent"], schema)
            want = toolfs_read(name, *SERVER_OPTIONS, "--mcp-structured", "--format", "mcp",
                               cwd=root).json
            assert got["structuredContent"] == want["structuredContent"]
    finally:
        bridge.close()


def test_help_and_version(mcp_bin):
    out = subprocess.run([str(mcp_bin), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("Usage: toolfs-mcp")
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("  --")}
    assert rows["--max_tokens"].endswith("(default: 20000)")  # the MCP server's own default
    assert rows["--max_output"].endswith("(default: 100K)")
    assert rows["--image_max_dim"].endswith("(default: 1568)")
    assert rows["--mcp_structured"].endswith("(default: off)")
    assert "--cache_size" not in rows  # a mount option
    out = subprocess.run([str(mcp_bin), "--version"], capture_output=True, text=True)
    assert re.fullmatch(r"toolfs-mcp \d+\.\d+\.\d+\n", out.stdout)
    out = subprocess.run([str(mcp_bin), "--no-such"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
