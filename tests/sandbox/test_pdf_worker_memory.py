# SPDX-License-Identifier: MIT
"""Memory of PDF reads in toolfs-mcp (docs/SPEC.md §8 "Confinement", issue 35 item 6): a 1 MB
PDF whose page is one 20000x20000 RGB image (1.2 GB of pixels once decoded) read by four calls
at once. Each worker is bounded by max_worker_memory (RLIMIT_AS), so each read answers its page
or too_large, nothing crashes, and toolfs-mcp's own memory does not grow with the pixels.

Oracles: the page's word the generator writes, the error codes the spec allows, and
/proc/PID/status VmRSS of toolfs-mcp before and after."""
import pathlib
import subprocess

import pytest

from budget_util import answer, rpc
from fixtures import gen_pdfs
from worker_util import modules_linked_in

CALLS = 4
# What toolfs-mcp may grow by for four results of one page image each (its allocator's arenas
# and the results' JSON, freed; never the decoded pixels).
RSS_GROWTH_KIB = 4 * 1024


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    src = tmp_path_factory.mktemp("bigimage")
    gen_pdfs.big_image_pdf(src / "big.pdf")
    return src


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def read_all(proc, first_id: int, n: int) -> list:
    for i in range(n):
        rpc(proc, {"jsonrpc": "2.0", "id": first_id + i, "method": "tools/call",
                   "params": {"name": "read",
                              "arguments": {"file_path": "big.pdf", "pages": "1"}}})
    return [answer(proc, 120) for _ in range(n)]


def test_four_reads_of_a_huge_image_stay_in_their_workers(build_dir, tree):
    if modules_linked_in(build_dir):
        pytest.skip("a sanitizer build has no RLIMIT_AS and its own memory figures")
    proc = subprocess.Popen([str(build_dir / "mcp" / "toolfs-mcp"), str(tree)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        read_all(proc, 1, 1)  # the fork server started, the first results' memory in place
        before = rss_kib(proc.pid)
        replies = read_all(proc, 10, CALLS)
        after = rss_kib(proc.pid)
        assert sorted(r["id"] for r in replies) == list(range(10, 10 + CALLS))
        for reply in replies:
            result = reply["result"]
            meta = result["_meta"]["toolfs/result"]
            if result.get("isError"):
                assert meta["errorCode"] == "too_large", meta
            else:
                kinds = [c["type"] for c in result["content"]]
                assert "image" in kinds and "TOKEN-BIG" in result["content"][0]["text"], kinds
        assert after - before < RSS_GROWTH_KIB, f"{before} KiB -> {after} KiB"
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
