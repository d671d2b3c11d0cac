# SPDX-License-Identifier: MIT
"""The render budget through the mount (docs/SPEC.md §3 "Render time", issue 24 item 3): `cat`
of the sibling of a PDF page of 200,000 drawing operations returns at max_render_ms with the
page listed as a timeout, and while it renders the daemon answers reads in other directories at
once (once the way to them is known). A lookup in the same directory waits for the render (the kernel holds the directory's lock
across a lookup, and a sibling's lookup renders it; libfuse 3.14 never asks the kernel for
parallel directory operations), so the budget is also what bounds that wait."""
import threading
import time

import pytest

from fixtures import gen_slow_pdf
from mount_util import mounted

BUDGET_S = 4.0
MARGIN_S = 8.0  # as in test_render_budget.py: the rest of the content stream, on a loaded machine


@pytest.fixture(scope="module")
def mnt(build_dir, tmp_path_factory):
    src = tmp_path_factory.mktemp("budget-tree")
    (src / "slow.pdf").write_bytes(gen_slow_pdf.build(gen_slow_pdf.OPS))
    (src / "small.txt").write_text("one line\n")
    (src / "sub").mkdir()
    (src / "sub" / "small.txt").write_text("one line\n")
    with mounted(build_dir / "fs" / "toolfs", src, tmp_path_factory.mktemp("mnt"),
                 "-o", f"max_render_ms={int(BUDGET_S * 1000)}") as m:
        yield m.path


def test_other_reads_are_answered_while_a_page_renders(mnt):
    slow = {}

    def read_slow():
        start = time.monotonic()
        slow["data"] = (mnt / "slow.pdf:2.tool.json").read_text()
        slow["elapsed"] = time.monotonic() - start

    # "sub" looked up before: finding it again needs no lookup in the busy directory
    assert (mnt / "sub").is_dir()
    worker = threading.Thread(target=read_slow)
    worker.start()
    try:
        time.sleep(0.5)
        start = time.monotonic()
        assert (mnt / "sub" / "small.txt.tool.json").read_text().startswith('{"success":true')
        assert (mnt / "sub" / "small.txt").read_text() == "one line\n"
        assert time.monotonic() - start < 3.0
        assert worker.is_alive(), "the slow page was expected to be still rendering"
        # the same directory: answered by the time the render stops
        assert (mnt / "small.txt.tool.json").read_text().startswith('{"success":true')
        assert time.monotonic() - start < BUDGET_S + MARGIN_S
    finally:
        worker.join(timeout=BUDGET_S + MARGIN_S + 30)
    assert slow["elapsed"] < BUDGET_S + MARGIN_S, slow["elapsed"]
    assert "[page 2: timeout: not rendered within max_render_ms (4000 ms), drawing stopped]" \
        in slow["data"]
    assert "TOKEN-SLOW-2" in slow["data"]
