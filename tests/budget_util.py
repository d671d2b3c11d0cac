# SPDX-License-Identifier: MIT
"""Helpers for the tests of the time budget (docs/SPEC.md §3 "Render time"): a PDF result's
pages, and calls to toolfs-mcp over its stdio without waiting past a bound."""
import json
import select


def pages(content: str) -> dict:
    """{page number: its text} of a PDF result's content."""
    out, page = {}, None
    for line in content.splitlines():
        if line.startswith("--- Page "):
            page = int(line.split()[2])
            out[page] = ""
        elif page is not None:
            out[page] += line + "\n"
    return out


def rpc(proc, msg: dict) -> None:
    """Sends msg to toolfs-mcp (proc, stdin and stdout pipes), one JSON line."""
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def answer(proc, timeout: float) -> dict:
    """toolfs-mcp's next message; fails the test when none comes within timeout seconds."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no answer within {timeout} s"
    return json.loads(proc.stdout.readline())
