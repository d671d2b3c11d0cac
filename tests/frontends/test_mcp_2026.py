# SPDX-License-Identifier: MIT
"""toolfs-mcp under MCP revision 2026-07-28 (docs/SPEC.md §7), beside the handshake revisions:
the official TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in tests/sdk, driven
by tests/sdk/mcp_bridge_v2.mjs) pinned to 2026-07-28, in its default auto mode and in legacy
mode; raw JSON-RPC for what the SDK would not send; and long files read with the default token
budget against the byte cap it replaced, counted by js-tiktoken.

Oracles: the SDK's own validation of every answer, `toolfs-read --format mcp` with the server's
options (equal but for resultType and the continuation phrase), a fresh 2025 session's bytes,
cat -n built in Python, js-tiktoken's o200k_base count."""
import json
import os
import pathlib
import subprocess

import pytest

from test_mcp import (CALL_HINT, Bridge, cli_mcp, mcp_bin, raw_session, root,  # noqa: F401
                      split_hint)
from test_tokens import exact_tokens

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
CLAUDE_CODE_CAP = 25000


class BridgeV2(Bridge):
    """One node process running mcp_bridge_v2.mjs: send(op dict) -> the op's value."""

    def __init__(self):
        super().__init__("mcp_bridge_v2.mjs", "client")

    def call(self, **arguments) -> dict:
        got = self.send({"op": "call", "name": "read", "arguments": arguments})
        assert got["ok"], got
        return got["result"]


def connect(mcp_bin, root, mode, *args) -> BridgeV2:
    bridge = BridgeV2()
    bridge.info = bridge.send({"op": "connect", "command": str(mcp_bin),
                               "args": [*args, str(root)], "mode": mode})
    return bridge


@pytest.fixture(scope="module", params=["pinned", "auto"])
def modern(request, mcp_bin, root):
    bridge = connect(mcp_bin, root, {"pin": MODERN} if request.param == "pinned" else "auto")
    yield bridge
    bridge.close()


def sent_methods(bridge) -> list:
    return [m["sent"].get("method") for m in bridge.send({"op": "wire"}) if "sent" in m]


def wire_result(bridge, method) -> dict:
    """The raw result of the last request of method, as the server sent it."""
    wire = bridge.send({"op": "wire"})
    ids = [m["sent"]["id"] for m in wire if "sent" in m and m["sent"].get("method") == method]
    got = [m["got"] for m in wire if "got" in m and m["got"].get("id") == ids[-1]]
    return got[-1]["result"]


def test_discovery_without_a_handshake(modern):
    info = modern.info
    assert info["era"] == "modern" and info["version"] == MODERN
    assert info["serverVersion"]["name"] == "toolfs-mcp"
    assert info["capabilities"] == {"tools": {"listChanged": False}}
    assert "read" in info["instructions"]
    assert info["discover"]["supportedVersions"][0] == MODERN
    assert "2025-11-25" in info["discover"]["supportedVersions"]
    methods = sent_methods(modern)
    assert methods[0] == "server/discover"
    assert "initialize" not in methods and "notifications/initialized" not in methods


def test_tools_list_has_cache_hints_and_tells_the_costs(modern):
    tools = {t["name"]: t for t in modern.send({"op": "list"})["tools"]}
    raw = wire_result(modern, "tools/list")
    assert raw["resultType"] == "complete"
    assert raw["ttlMs"] == 86400000 and raw["cacheScope"] == "private"
    assert raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "toolfs-mcp"
    read = tools["read"]
    assert "max_tokens" in read["inputSchema"]["properties"]
    text = read["description"]
    for kind in ("text", "image", "pdf", "notebook", "document", "spreadsheet", "presentation",
                 "binary", "unknown"):
        assert kind in text
    assert "at most 20000 tokens" in text and "max_tokens" in text
    assert "3279 tokens (Claude: width x height / 750) or 765 (OpenAI tiles)" in text


CASES = {
    "text": ("hello.py", {}, []),
    "truncated": ("long.txt", {"offset": 10, "limit": 5}, ["--select", "10-14"]),
    "image": ("wide.png", {}, []),
    "pdf_range": ("two pages.pdf", {"pages": "1-2"}, ["--select", "1-2"]),
    "error": ("lnog.txt", {}, []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_read_equals_cli_but_for_result_type_and_hint(modern, toolfs_read, root, case):
    rel, arguments, cli_args = CASES[case]
    got = modern.call(file_path=rel, **arguments)
    raw = wire_result(modern, "tools/call")
    assert raw["resultType"] == "complete"
    want = cli_mcp(toolfs_read, root, rel, *cli_args)
    assert {k: v for k, v in raw.items() if k != "resultType"} == \
        {k: v for k, v in got.items() if k != "resultType"}
    got_blocks, got_more = split_hint(got)
    want_blocks, want_more = split_hint(want)
    assert got_blocks == want_blocks
    assert {k: v for k, v in got.items() if k not in ("content", "resultType")} == \
        {k: v for k, v in want.items() if k != "content"}
    assert (got_more is None) == (want_more is None)
    assert got["isError"] == (case == "error")


def test_legacy_mode_is_the_2025_session(mcp_bin, root, toolfs_read):
    bridge = connect(mcp_bin, root, "legacy")
    try:
        assert bridge.info["era"] == "legacy"
        assert sent_methods(bridge)[0] == "initialize"
        got = bridge.call(file_path="hello.py")
        raw = wire_result(bridge, "tools/call")
        assert "resultType" not in raw
        assert raw == cli_mcp(toolfs_read, root, "hello.py")
        assert {k: v for k, v in got.items() if k != "resultType"} == raw
    finally:
        bridge.close()


# ---- raw JSON-RPC ----

def modern_request(id_, method, params=None, meta=META):
    return {"jsonrpc": "2.0", "id": id_, "method": method,
            "params": {**(params or {}), "_meta": meta}}


def test_raw_envelope_errors(mcp_bin, root):
    out = raw_session(mcp_bin, root, [
        # the client's capabilities but no version
        modern_request(1, "tools/list", meta={"io.modelcontextprotocol/clientCapabilities": {}}),
        # a version but no capabilities
        modern_request(2, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": MODERN}),
        modern_request(3, "tools/list", meta={**META,
                                              "io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
        modern_request(4, "ping"),
        modern_request(5, "initialize", {"protocolVersion": MODERN, "capabilities": {}}),
        modern_request(6, "tools/call", {"name": "nope", "arguments": {}}),
    ])
    assert [(m["id"], m["error"]["code"]) for m in out] == [
        (1, -32602), (2, -32602), (3, -32022), (4, -32601), (5, -32601), (6, -32602)]
    assert out[2]["error"]["data"] == {
        "supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                      "2024-10-07"], "requested": "2099-01-01"}
    assert out[2]["error"]["message"] == "Unsupported protocol version: 2099-01-01"


def test_long_names_echoed_in_errors_are_cut_between_characters(mcp_bin, root):
    """A method, tool or version name is echoed in the error message up to 200 bytes: an "é"
    (2 bytes) at byte 200 is left out whole, so that the line stays UTF-8 (RFC 8259 §8.1; before
    the fix the message ended with its first byte and the line did not decode)."""
    cut, name = "x" * 199, "x" * 199 + "\u00e9" + "y"
    version = {**META, "io.modelcontextprotocol/protocolVersion": name}
    lines = "".join(json.dumps(m) + "\n" for m in [
        {"jsonrpc": "2.0", "id": 1, "method": name},
        modern_request(2, name),
        modern_request(3, "tools/list", meta=version),
        modern_request(4, "tools/call", {"name": name, "arguments": {}}),
    ])
    proc = subprocess.run([str(mcp_bin), str(root)], input=lines.encode(), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = {m["id"]: m["error"] for m in map(json.loads, proc.stdout.decode("utf-8").splitlines())}
    assert out[1]["message"] == f"Method not found: {cut}"
    assert out[2]["message"] == f"Method not found: {cut} (revision {MODERN})"
    assert out[3]["message"] == f"Unsupported protocol version: {cut}"
    assert out[3]["data"]["requested"] == json.loads(f'"{name}"')
    assert out[4]["message"] == (f"Unknown tool: {cut} (the tools are read and "
                                 "list_allowed_directories)")


def test_a_root_named_in_bytes_that_are_not_utf8_is_listed_in_utf8(mcp_bin, tmp_path):
    """list_allowed_directories shows a root whose name is not UTF-8 (a client's file:///%FF
    root, or a folder on the command line) with U+FFFD for each invalid sequence, as Python's
    errors="replace" does: before, the bytes went out raw and the line did not decode."""
    folder = os.fsencode(tmp_path) + b"/r\xff\xc3(\xe2\x82"
    os.mkdir(folder)
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "list_allowed_directories"}}) + "\n"
    proc = subprocess.run([str(mcp_bin), folder], input=line.encode(), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.decode("utf-8"))
    assert out["result"]["content"][0]["text"] == folder.decode("utf-8", "replace")
    assert out["result"]["content"][0]["text"].endswith("/r\ufffd\ufffd(\ufffd")


def raw_lines(mcp_bin, root, messages) -> list:
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.run([str(mcp_bin), str(root)], input=lines.encode(), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().splitlines()


INITIALIZE = {"jsonrpc": "2.0", "id": 7, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "read", "arguments": {"file_path": "hello.py"}}}


def by_id(lines) -> dict:
    """{id: line}: calls are answered by workers, in any order."""
    return {json.loads(line)["id"]: line for line in lines}


def test_a_2025_initialize_after_modern_requests_gets_todays_bytes(mcp_bin, root):
    today = by_id(raw_lines(mcp_bin, root, [INITIALIZE, TOOLS_LIST, CALL]))
    after = by_id(raw_lines(mcp_bin, root, [
        modern_request(1, "server/discover"), modern_request(2, "tools/list"),
        modern_request(3, "tools/call", {"name": "read", "arguments": {"file_path": "hello.py"}}),
        INITIALIZE, TOOLS_LIST, CALL]))
    assert {i: after[i] for i in (7, 8, 9)} == today
    # the modern answers are the same bytes with resultType before the last brace
    assert after[3].replace('"id":3,', '"id":9,', 1) == today[9][:-2] + ',"resultType":"complete"}}'
    assert json.loads(after[2])["result"]["tools"] == json.loads(today[8])["result"]["tools"]


def test_discover_without_meta_and_a_handshake_version_in_meta(mcp_bin, root):
    legacy_meta = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    out = raw_lines(mcp_bin, root, [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover"},
        modern_request(2, "tools/list", meta=legacy_meta), TOOLS_LIST])
    assert json.loads(out[0])["result"]["resultType"] == "complete"
    # a handshake version in _meta is served as the 2025 revisions are
    assert out[1].replace('"id":2,', '"id":8,', 1) == out[2]


# ---- long files: calls and tokens per call ----

def long_source(path: pathlib.Path, width: int) -> pathlib.Path:
    """2,000 lines of C-like source, each about width bytes."""
    words = ("count value buffer length index result status error name path options config "
             "request response handler context window offset limit size total").split()
    lines = []
    for n in range(2000):
        line = "\t" * (n % 3) + f"{words[n % len(words)]}_{n} = {words[(n * 7) % len(words)]}"
        while len(line) < width:
            line += f" + {words[(n + len(line)) % len(words)]}[{len(line) % 97}]"
        lines.append(line[:width] + ";")
    path.write_text("\n".join(lines) + "\n")
    return path


def read_through(bridge, rel) -> list:
    """The text of every call an agent makes to read rel whole, following the hints."""
    arguments, texts = {"file_path": rel}, []
    for _ in range(100):
        got = bridge.call(**arguments)
        blocks, more = split_hint(got)
        texts.append(blocks[0]["text"])
        if more is None:
            return texts
        m = CALL_HINT.match(more)
        arguments = {"file_path": rel, "offset": int(m.group(1))}
        if m.group(2):
            arguments["limit"] = int(m.group(2))
    raise AssertionError("no end")


def test_long_files_in_fewer_calls_than_the_byte_cap(mcp_bin, tmp_path, capsys):
    root = tmp_path / "src"
    root.mkdir()
    sizes = {"short_lines.c": 14, "long_lines.c": 38}
    for name, width in sizes.items():
        long_source(root / name, width)
    report, counts = [], {}
    for label, args in [("tokens", []), ("bytes", ["--max-tokens", "off", "--max-output", "40K"])]:
        bridge = connect(mcp_bin, root, {"pin": MODERN}, *args)
        try:
            for name in sizes:
                texts = read_through(bridge, name)
                want = "".join(f"{n:6d}\t{line}\n" for n, line in
                               enumerate((root / name).read_text().splitlines(), 1))
                assert "".join(texts) == want
                exact = exact_tokens(dict(enumerate(texts)), tmp_path)
                counts[label, name] = len(texts)
                assert max(exact.values()) < CLAUDE_CODE_CAP
                report.append(f"{label}: {name} ({(root / name).stat().st_size // 1024} KB, "
                              f"{sum(exact.values())} tokens numbered): {len(texts)} calls of "
                              f"{[exact[i] for i in range(len(texts))]} tokens")
        finally:
            bridge.close()
    with capsys.disabled():
        print("\n" + "\n".join(report))
    for name in sizes:
        assert counts["tokens", name] < counts["bytes", name]
    assert counts["tokens", "short_lines.c"] == 1
    assert counts["tokens", "long_lines.c"] == 2


def test_a_nul_inside_the_method_version_or_jsonrpc_is_refused_not_cut(mcp_bin, root):
    """cJSON ends a string at \\u0000: "2026-07-28\\u0000x" must not pass as 2026-07-28."""
    nul_version = {**META, "io.modelcontextprotocol/protocolVersion": MODERN + "\u0000x"}
    out = by_id(raw_lines(mcp_bin, root, [
        modern_request(1, "tools/list", meta=nul_version),
        modern_request(2, "tools/list\u0000x"),
        {**TOOLS_LIST, "id": 3, "jsonrpc": "2.0\u0000x"},
        {**TOOLS_LIST, "id": 4, "method": "tools/list\u0000"},
        modern_request(5, "tools/list")]))
    errors = {i: json.loads(out[i])["error"] for i in (1, 2, 3, 4)}
    assert errors[1] == {"code": -32602, "message": 'Invalid params: _meta["io.modelcontextprotocol/'
                         'protocolVersion"] holds a NUL character'}
    for i in (2, 3, 4):
        assert errors[i] == {"code": -32600, "message": "Invalid Request: the jsonrpc or method "
                             "string holds a NUL character"}
    assert "tools" in json.loads(out[5])["result"]
