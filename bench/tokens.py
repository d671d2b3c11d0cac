#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/tokens.py - what the token estimate (metadata.tokens, max_tokens; include/tr_tokens.h)
costs a text read.

For each file (tests/token_corpus.py's corpus and a 2,000-line source): the median time of a
whole read through toolfs-mcp, one process kept warm so that start-up is not in it
(--max-tokens 1000000000 --max-output 1G --max-lines 1000000: the content is the whole file,
weighed line by line, metadata.tokens taken from that sum), and the median time of one
estimator pass over that content alone (bench/tokens_speed.c, built here with cc against
readers/core/tokens.c, which needs nothing but libm). Prints both and their ratio: every read
makes exactly one pass (a read with max_tokens weighs its lines and metadata.tokens reuses the
sum; one without weighs the content once when it renders).

Usage: bench/tokens.py [--build DIR] [--reads N]"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import token_corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    ap.add_argument("--reads", type=int, default=51)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    binary = next((b for b in (build / "mcp" / "toolfs-mcp", build / "readers" / "mcp" / "toolfs-mcp")
                   if b.exists()), None)
    if not binary:
        sys.exit(f"bench/tokens.py: toolfs-mcp is not built in {build}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = tmp / "root"
        root.mkdir()
        for name, text in token_corpus.corpus():
            (root / name).write_text(text, encoding="utf-8")
        (root / "long.c").write_text((REPO / "readers" / "mcp" / "mcp_server.c").read_text() * 3)
        speed = tmp / "tokens_speed"
        subprocess.run(["cc", "-O2", f"-I{REPO / 'include'}", "-o", str(speed),
                        str(REPO / "bench" / "tokens_speed.c"),
                        str(REPO / "readers" / "core" / "tokens.c"), "-lm"], check=True)
        server = subprocess.Popen([str(binary), "--max-tokens", "1000000000", "--max-output", "1G",
                                   "--max-lines", "1000000", str(root)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        rows, ratios = [], []
        for i, path in enumerate(sorted(root.iterdir())):
            times, content = [], None
            for r in range(args.reads + 1):
                msg = {"jsonrpc": "2.0", "id": i * 1000 + r, "method": "tools/call",
                       "params": {"name": "read", "arguments": {"file_path": path.name}}}
                t0 = time.perf_counter()
                server.stdin.write(json.dumps(msg).encode() + b"\n")
                server.stdin.flush()
                line = server.stdout.readline()
                if r:  # the first is a warm-up
                    times.append(time.perf_counter() - t0)
                content = json.loads(line)["result"]["content"][0]["text"]
            (tmp / "content").write_text(content, encoding="utf-8")
            pass_us = float(subprocess.run([str(speed), str(tmp / "content")], check=True,
                                           capture_output=True, text=True).stdout)
            read_us = statistics.median(times) * 1e6
            ratios.append(pass_us / read_us)
            rows.append(f"| {path.name} | {len(content.encode()) // 1024} | {read_us:.0f} | "
                        f"{pass_us:.1f} | {pass_us / read_us:.1%} |")
        server.stdin.close()
        server.wait()
    print("| file | content KB | read (us) | estimate (us) | estimate / read |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"| median | | | | {statistics.median(ratios):.1%} |")


if __name__ == "__main__":
    main()
