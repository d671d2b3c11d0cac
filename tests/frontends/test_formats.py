# SPDX-License-Identifier: MIT
"""The provider formats of docs/SPEC.md §6 (`toolfs-read --format anthropic|openai|mcp|txt`), checked
against the providers' own SDKs, pinned in tests/sdk/package.json: the Anthropic result plus
type/tool_use_id must satisfy `ToolResultBlockParam` of @anthropic-ai/sdk, the OpenAI result plus
type/call_id `ResponseInputItem.FunctionCallOutput` of openai (tsc --noEmit --strict on generated
`satisfies` expressions), and the MCP result must pass `CallToolResultSchema` of
@modelcontextprotocol/sdk (node). The blocks themselves are compared with the canonical
ToolResult of the same file: first text = content (or error), images and documents carried
unchanged, is_error/isError = not success; mcp carries the ToolResult without base64 and content
in _meta, or as structuredContent with --mcp-structured, and PDFs as resource blocks only with
--mcp-documents. txt is the content (or error) and footer lines, no base64.

The SDKs are installed by tests/run (`npm ci` in tests/sdk)."""
import base64
import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import urllib.parse

import pytest

import gen_formats

SDK = pathlib.Path(__file__).resolve().parents[1] / "sdk"
TSC = SDK / "node_modules" / ".bin" / "tsc"
FORMATS = ("anthropic", "openai", "mcp", "txt")
# variants of the mcp format: key in results -> extra arguments
MCP_VARIANTS = {"mcp_structured": ["--mcp-structured"], "mcp_documents": ["--mcp-documents"]}
URI_SAFE = "/-._~!$&'()*+,;=:@"

# case -> (file, extra arguments)
CASES = {
    "text": ("hello.py", []),
    "text_truncated": ("long.txt", []),
    "text_empty": ("empty.txt", []),
    "image": ("small.png", []),
    "image_resized": ("wide.png", []),
    "image_converted": ("icon.bmp", []),
    "notebook": ("figures.ipynb", []),
    "pdf_document": ("two pages.pdf", []),
    "pdf_page_render": ("two pages.pdf", ["--select", "2"]),
    "error_corrupt": ("corrupt.png", []),
    "error_binary": ("tool.bin", []),
    "error_not_found": ("missing.txt", []),
    "error_out_of_range": ("hello.py", ["--select", "99"]),
}


def sdk_installed() -> None:
    if not TSC.exists() or not (SDK / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("the provider SDKs are not installed: run (cd tests/sdk && npm ci), "
                    "as tests/run does")


@pytest.fixture(scope="module")
def results(tmp_path_factory, toolfs_read):
    """case -> {"tool": ToolResult, "anthropic": ..., "openai": ..., "mcp": ..., "path": str}"""
    out = tmp_path_factory.mktemp("formats")
    gen_formats.generate(out)
    found = {}
    for case, (name, args) in CASES.items():
        path = out / name
        entry = {"path": str(path)}
        tool = toolfs_read(path, *args)
        assert tool.rc in (0, 1), tool.err
        entry["tool"] = tool.json
        for fmt in FORMATS:
            r = toolfs_read(path, *args, "--format", fmt)
            assert r.rc == tool.rc, (case, fmt, r.err)
            entry[fmt] = r.text if fmt == "txt" else r.json
        for key, extra in MCP_VARIANTS.items():
            r = toolfs_read(path, *args, *extra, "--format", "mcp")
            assert r.rc == tool.rc, (case, key, r.err)
            entry[key] = r.json
        found[case] = entry
    # The fixtures cover what they claim to.
    assert found["text_truncated"]["tool"]["truncated"]
    assert found["image_resized"]["tool"]["metadata"]["resized"]
    assert found["image_converted"]["tool"]["images"][0]["mediaType"] == "image/png"
    assert found["notebook"]["tool"]["images"][0]["cell"] == 2
    assert found["pdf_document"]["tool"]["documents"]
    assert found["pdf_page_render"]["tool"]["images"][0]["page"] == 2
    for case in CASES:
        assert found[case]["tool"]["success"] == (not case.startswith("error_")), case
    return found


def first_text(tool: dict) -> str:
    """docs/SPEC.md §6: the content, or the error; an empty content (empty file) is replaced by the short
    result because providers reject empty text blocks."""
    if not tool["success"]:
        return tool["error"]
    return tool["content"] or tool["shortResult"]


def without_payloads(tool: dict) -> dict:
    stripped = copy.deepcopy(tool)
    for key in ("images", "documents"):
        for item in stripped.get(key, []):
            del item["data"]
    return stripped


def split_hint(tool: dict, blocks: list, text_type: str, fmt: str) -> list:
    """Checks the continuation block a truncated result ends with (the sibling to read next, in
    the same format); returns the other blocks."""
    if tool["truncated"] and "next" in tool:
        assert tool["next"].endswith(".tool.json")
        sibling = tool["next"][:-len(".tool.json")] + f".tool.{fmt}.json"
        assert blocks[-1] == {"type": text_type,
                              "text": f"[{tool['shortResult']}. More: read {sibling}]"}
        return blocks[:-1]
    return blocks


@pytest.mark.parametrize("case", sorted(CASES))
def test_anthropic_blocks_carry_the_tool_result(results, case):
    tool, got = results[case]["tool"], results[case]["anthropic"]
    assert list(got) == ["content", "is_error"]
    assert got["is_error"] is (not tool["success"])
    blocks = split_hint(tool, got["content"], "text", "anthropic")
    expected = [{"type": "text", "text": first_text(tool)}]
    expected += [{"type": "image", "source": {"type": "base64", "media_type": im["mediaType"],
                                              "data": im["data"]}}
                 for im in tool.get("images", [])]
    expected += [{"type": "document", "source": {"type": "base64", "media_type": doc["mediaType"],
                                                 "data": doc["data"]}}
                 for doc in tool.get("documents", [])]
    assert blocks == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_openai_items_carry_the_tool_result(results, case):
    tool, got = results[case]["tool"], results[case]["openai"]
    assert list(got) == ["output"]
    items = split_hint(tool, got["output"], "input_text", "openai")
    name = os.path.basename(results[case]["path"])
    expected = [{"type": "input_text", "text": first_text(tool)}]
    expected += [{"type": "input_image",
                  "image_url": f"data:{im['mediaType']};base64,{im['data']}"}
                 for im in tool.get("images", [])]
    expected += [{"type": "input_file", "filename": name,
                  "file_data": f"data:{doc['mediaType']};base64,{doc['data']}"}
                 for doc in tool.get("documents", [])]
    assert items == expected


def mcp_blocks(tool: dict, path: str, documents: bool) -> list:
    uri = "file://" + urllib.parse.quote(os.path.realpath(path), safe=URI_SAFE)
    expected = [{"type": "text", "text": first_text(tool)}]
    expected += [{"type": "image", "data": im["data"], "mimeType": im["mediaType"]}
                 for im in tool.get("images", [])]
    if documents:
        expected += [{"type": "resource", "resource": {"uri": uri, "mimeType": doc["mediaType"],
                                                       "blob": doc["data"]}}
                     for doc in tool.get("documents", [])]
    return expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_mcp_result_carries_the_tool_result(results, case):
    """By default: no structuredContent (Claude Code and Codex would show the model only its
    JSON), no PDF resource blocks (Codex shows them as raw JSON); the ToolResult's fields but
    content (the first text block) in _meta."""
    tool, got = results[case]["tool"], results[case]["mcp"]
    assert list(got) == ["content", "isError", "_meta"]
    assert got["isError"] is (not tool["success"])
    meta = without_payloads(tool)
    del meta["content"]
    assert got["_meta"] == {"toolfs/result": meta}
    blocks = split_hint(tool, got["content"], "text", "mcp")
    assert blocks == mcp_blocks(tool, results[case]["path"], documents=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mcp_structured_brings_back_structured_content(results, case):
    tool, got = results[case]["tool"], results[case]["mcp_structured"]
    assert list(got) == ["content", "isError", "structuredContent"]
    assert got["isError"] is (not tool["success"])
    assert got["structuredContent"] == without_payloads(tool)
    blocks = split_hint(tool, got["content"], "text", "mcp")
    assert blocks == mcp_blocks(tool, results[case]["path"], documents=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mcp_documents_embeds_pdfs(results, case):
    tool, got = results[case]["tool"], results[case]["mcp_documents"]
    assert list(got) == ["content", "isError", "_meta"]
    blocks = split_hint(tool, got["content"], "text", "mcp")
    assert blocks == mcp_blocks(tool, results[case]["path"], documents=True)
    if case == "pdf_document":
        assert blocks[-1]["type"] == "resource"


def expected_txt(tool: dict, stem: str) -> str:
    """docs/SPEC.md §6 txt, built from the ToolResult: the content (or error), a newline if it lacks one,
    then a blank line and footers when there is anything to add."""
    text = tool["content"] if tool["success"] else tool["error"]
    if text and not text.endswith("\n"):
        text += "\n"
    footers = []
    if tool["success"] and tool["truncated"] and "next" in tool:
        footers.append(f"[truncated: read {tool['next'][:-len('.json')]}.txt next]")
    for i, im in enumerate(tool.get("images", []), 1):
        where = f", page {im['page']}" if "page" in im else (
            f", cell {im['cell']}" if "cell" in im else "")
        footers.append(f"[image {i}: {im['mediaType']} {im['width']}x{im['height']}{where}, "
                       f"in {stem}.tool.json or the MCP read tool]")
    for i, doc in enumerate(tool.get("documents", []), 1):
        size = len(base64.b64decode(doc["data"]))
        footers.append(f"[document {i}: {doc['mediaType']} {human_size(size)}, "
                       f"in {stem}.tool.json]")
    return text + ("\n" + "".join(f + "\n" for f in footers) if footers else "")


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


@pytest.mark.parametrize("case", sorted(CASES))
def test_txt_is_the_text_with_footers(results, case):
    tool, got = results[case]["tool"], results[case]["txt"]
    args = CASES[case][1]
    stem = os.path.basename(results[case]["path"])
    if "--select" in args:
        stem += ":" + args[args.index("--select") + 1]
    assert got == expected_txt(tool, stem)
    for item in tool.get("images", []) + tool.get("documents", []):
        assert item["data"][:64] not in got


def test_txt_footers_fixture_coverage(results):
    """The cases above reach every kind of footer."""
    assert "[truncated: read long.txt:" in results["text_truncated"]["txt"]
    assert "[image 1: image/png" in results["image"]["txt"]
    assert ", page 2, in two pages.pdf:2.tool.json" in results["pdf_page_render"]["txt"]
    assert ", cell 2, in figures.ipynb.tool.json" in results["notebook"]["txt"]
    assert "[document 1: application/pdf" in results["pdf_document"]["txt"]
    assert results["text_empty"]["txt"] == ""


# ---- the SDKs' own verdicts ----

TS_HEADER = (
    "import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';\n"
    "import type { ResponseInputItem } from 'openai/resources/responses/responses';\n"
)


def anthropic_block(result: dict) -> dict:
    return {**result, "type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9"}


def openai_item(result: dict) -> dict:
    return {**result, "type": "function_call_output", "call_id": "call_12345xyz"}


def ts_line(const: str, value: dict, type_name: str) -> str:
    return f"export const {const} = {json.dumps(value)} satisfies {type_name};\n"


def run_tsc(lines: list) -> subprocess.CompletedProcess:
    """Type-checks TS_HEADER + lines in a file inside tests/sdk (so that node_modules resolves).
    Returns tsc's completed process; its output names errors as `check.ts(LINE,COL): error`."""
    sdk_installed()
    work = pathlib.Path(tempfile.mkdtemp(prefix="tmp-check-", dir=SDK))
    try:
        (work / "check.ts").write_text(TS_HEADER + "".join(lines))
        return subprocess.run(
            [str(TSC), "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext",
             "--moduleResolution", "nodenext", "--skipLibCheck", "check.ts"],
            cwd=work, capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree(work)


def error_lines(proc: subprocess.CompletedProcess) -> set:
    return {int(m) for m in re.findall(r"check\.ts\((\d+),\d+\): error", proc.stdout)}


def test_anthropic_and_openai_results_satisfy_the_sdk_types(results):
    lines = []
    for case in sorted(CASES):
        lines.append(ts_line(f"anthropic_{case}", anthropic_block(results[case]["anthropic"]),
                             "ToolResultBlockParam"))
        lines.append(ts_line(f"openai_{case}", openai_item(results[case]["openai"]),
                             "ResponseInputItem.FunctionCallOutput"))
    proc = run_tsc(lines)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def test_tsc_rejects_blocks_the_sdks_do_not_accept(results):
    """The check above can fail: each of these wrong blocks is an error on its own line."""
    image = results["image"]
    wrong = []
    bmp = copy.deepcopy(anthropic_block(image["anthropic"]))
    bmp["content"][1]["source"]["media_type"] = "image/bmp"
    wrong.append(("ToolResultBlockParam", bmp))
    no_id = copy.deepcopy(anthropic_block(image["anthropic"]))
    del no_id["tool_use_id"]
    wrong.append(("ToolResultBlockParam", no_id))
    flag = copy.deepcopy(anthropic_block(image["anthropic"]))
    flag["is_error"] = "false"
    wrong.append(("ToolResultBlockParam", flag))
    unknown = copy.deepcopy(openai_item(image["openai"]))
    unknown["output"][1]["type"] = "input_picture"
    wrong.append(("ResponseInputItem.FunctionCallOutput", unknown))
    extra = copy.deepcopy(openai_item(image["openai"]))
    extra["output"][0]["is_error"] = True
    wrong.append(("ResponseInputItem.FunctionCallOutput", extra))
    good = openai_item(results["text"]["openai"])
    lines = [ts_line(f"wrong_{i}", value, t) for i, (t, value) in enumerate(wrong)]
    lines.append(ts_line("right", good, "ResponseInputItem.FunctionCallOutput"))
    proc = run_tsc(lines)
    assert proc.returncode != 0
    first = TS_HEADER.count("\n") + 1
    assert error_lines(proc) == set(range(first, first + len(wrong))), proc.stdout


def run_mcp_schema(values: list) -> list:
    sdk_installed()
    work = pathlib.Path(tempfile.mkdtemp(prefix="tmp-check-", dir=SDK))
    try:
        (work / "results.json").write_text(json.dumps(values))
        proc = subprocess.run(["node", str(SDK / "check_mcp.mjs"), str(work / "results.json")],
                              cwd=SDK, capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree(work)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_mcp_results_pass_call_tool_result_schema(results):
    cases = sorted(CASES)
    keys = ["mcp", *MCP_VARIANTS]
    values = [results[case][key] for case in cases for key in keys]
    verdicts = run_mcp_schema(values)
    for value, verdict in zip(values, verdicts):
        assert verdict["ok"], verdict.get("error")
        # Nothing was dropped as unknown or changed on the way.
        assert verdict["parsed"] == value


def test_mcp_schema_rejects_wrong_results(results):
    image = results["image"]["mcp"]
    no_mime = copy.deepcopy(image)
    del no_mime["content"][1]["mimeType"]
    bad_type = copy.deepcopy(image)
    bad_type["content"][0]["type"] = "txt"
    not_base64 = copy.deepcopy(image)
    not_base64["content"][1]["data"] = "not base64!"
    pdf = results["pdf_document"]["mcp_documents"]
    no_uri = copy.deepcopy(pdf)
    del no_uri["content"][1]["resource"]["uri"]
    verdicts = run_mcp_schema([no_mime, bad_type, not_base64, no_uri, image])
    assert [v["ok"] for v in verdicts] == [False, False, False, False, True]
