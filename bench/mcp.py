#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/mcp.py - toolfs-mcp against the reference MCP filesystem server
(@modelcontextprotocol/server-filesystem, pinned in bench/mcp/package.json), both driven by the
official TypeScript SDK client (tests/sdk/mcp_bridge.mjs) in this one run:

  1. per-call latency of 200 sequential reads of small source files: toolfs `read` against the
     reference's `read_text_file`, alternating the two servers in blocks of 20; prints the
     medians, the means and the ratio toolfs/reference;
  2. a 19 MB photo-like JPEG: toolfs `read` (a fitted image) against the reference's
     `read_media_file` (the whole file as base64), and what the SDK client does with each;
  3. toolfs-mcp's RSS (VmRSS, VmHWM) after 1,000 mixed calls (text, selectors, images, a PDF,
     a notebook, errors).

Usage: bench/mcp.py [--build DIR]   (npm ci in tests/sdk and bench/mcp when missing)
"""
import argparse
import io
import json
import os
import pathlib
import random
import select
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
SDK = REPO / "tests" / "sdk"
REF = REPO / "bench" / "mcp"
sys.path.insert(0, str(REPO / "tests" / "fixtures"))


class Bridge:
    def __init__(self):
        self.proc = subprocess.Popen(["node", str(SDK / "mcp_bridge.mjs")], cwd=SDK,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, cmd, timeout=600):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise RuntimeError(f"no answer to {cmd['op']}")
        answer = json.loads(self.proc.stdout.readline())
        if not answer["ok"]:
            raise RuntimeError(answer["error"])
        return answer["value"]

    def close(self):
        try:
            self.send({"op": "close"}, timeout=30)
        except Exception:  # noqa: BLE001 - the connection may already be gone
            pass
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def npm_ci(folder: pathlib.Path):
    if not (folder / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder, check=True)


def photo(path: pathlib.Path, target: int = 19 * 1000 * 1000):
    """A photo-like JPEG of about target bytes (19 MB, under the 20 MiB max_image_size):
    smooth gradients under strong noise."""
    from PIL import Image, ImageFilter
    rng = random.Random(7)
    side = 4000
    for _ in range(6):
        noise = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
        base = Image.linear_gradient("L").resize((side, side)).convert("RGB")
        img = Image.blend(base, noise.filter(ImageFilter.GaussianBlur(0.6)), 0.7)
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=98)
        if abs(buf.tell() - target) < target * 0.03:
            break
        side = int(side * (target / buf.tell()) ** 0.5)
    path.write_bytes(buf.getvalue())
    return img.size


def rss(pid: int) -> dict:
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    return {k: int(line.split()[1]) // 1024 for line in status.splitlines()
            for k in ("VmRSS", "VmHWM") if line.startswith(k + ":")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", REPO / "build"))
    args = ap.parse_args()
    server = pathlib.Path(args.build).resolve() / "mcp" / "toolfs-mcp"
    if not server.exists():
        sys.exit(f"{server} is not built (meson setup build && ninja -C build)")
    npm_ci(SDK)
    npm_ci(REF)
    ref_js = REF / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / \
        "index.js"

    work = pathlib.Path(tempfile.mkdtemp(prefix="toolfs-bench-mcp-"))
    src = work / "src"
    src.mkdir()
    sources = sorted(p for p in REPO.glob("readers/**/*") if p.suffix in (".c", ".h"))
    for i, p in enumerate(sources):
        (src / f"{i:03d}_{p.name}").write_bytes(p.read_bytes())
    files = sorted(str(p) for p in src.iterdir())
    reads = [files[i % len(files)] for i in range(200)]
    size = photo(work / "photo.jpg")
    import gen_formats
    gen_formats.generate(work / "mixed")

    toolfs, ref = Bridge(), Bridge()
    try:
        info = toolfs.send({"op": "connect", "command": str(server), "args": [str(work)]})
        ref.send({"op": "connect", "command": "node", "args": [str(ref_js), str(work)]})
        # warm-up: both servers have read every file once
        toolfs.send({"op": "time", "name": "read",
                     "calls": [{"arguments": {"file_path": f}} for f in files]})
        ref.send({"op": "time", "name": "read_text_file",
                  "calls": [{"arguments": {"path": f}} for f in files]})
        t_ms, r_ms = [], []
        for block in range(0, len(reads), 20):
            chunk = reads[block:block + 20]
            t_ms += toolfs.send({"op": "time", "name": "read", "calls": [
                {"arguments": {"file_path": f}} for f in chunk]})["ms"]
            r_ms += ref.send({"op": "time", "name": "read_text_file", "calls": [
                {"arguments": {"path": f}} for f in chunk]})["ms"]
        print(f"200 sequential reads of small source files ({len(files)} files, "
              f"{sum(os.path.getsize(f) for f in files) // len(files)} bytes on average)")
        for label, ms in (("toolfs read", t_ms), ("reference read_text_file", r_ms)):
            q = statistics.quantiles(ms, n=10)
            print(f"  {label + ':':27s} median {statistics.median(ms):.3f} ms, "
                  f"mean {statistics.mean(ms):.3f} ms, p90 {q[-1]:.3f} ms, max {max(ms):.3f} ms")
        print(f"  ratio toolfs/reference: median {statistics.median(t_ms) / statistics.median(r_ms):.2f}x,"
              f" mean {statistics.mean(t_ms) / statistics.mean(r_ms):.2f}x")

        photo_path = str(work / "photo.jpg")
        print(f"\n19 MB photo ({os.path.getsize(photo_path) / 1e6:.1f} MB JPEG, {size[0]}x{size[1]})")
        got = toolfs.send({"op": "call", "name": "read", "arguments": {"file_path": photo_path}})
        if got["ok"] and got["result"]["isError"]:
            print(f"  toolfs read: error {got['result']['content'][0]['text']}")
        elif got["ok"]:
            line = len(json.dumps(got["result"]))
            img = [b for b in got["result"]["content"] if b["type"] == "image"]
            meta = got["result"]["_meta"]["toolfs/result"]["metadata"]
            print(f"  toolfs read: {len(img)} image block, {meta.get('resized', {}).get('to')}"
                  f", {len(img[0]['data']) / 2**20:.2f} MiB base64, result {line / 2**20:.2f} MiB,"
                  f" schema ok: {got['schemaOk']}")
        else:
            print(f"  toolfs read failed: {got['message']}")
        got = ref.send({"op": "call", "name": "read_media_file", "arguments": {"path": photo_path}})
        if got["ok"]:
            blocks = got["result"]["content"]
            print(f"  reference read_media_file: {[b['type'] for b in blocks]}, "
                  f"{sum(len(b.get('data', '')) for b in blocks) / 2**20:.2f} MiB base64 "
                  f"(the whole file)")
        else:
            print(f"  reference read_media_file: the SDK client gave up: {got['code']} "
                  f"{got['message'][:200]}")
        try:
            ref.send({"op": "ping"}, timeout=30)
            print("  the reference server still answers a ping afterwards")
        except Exception as err:  # noqa: BLE001
            print(f"  the reference connection is unusable afterwards: {str(err)[:200]}")

        mixed = work / "mixed"
        kinds = [{"file_path": str(mixed / "hello.py")},
                 {"file_path": str(mixed / "long.txt"), "offset": 100, "limit": 50},
                 {"file_path": str(mixed / "small.png")}, {"file_path": str(mixed / "wide.png")},
                 {"file_path": str(mixed / "two pages.pdf")},
                 {"file_path": str(mixed / "two pages.pdf"), "pages": "2"},
                 {"file_path": str(mixed / "figures.ipynb")},
                 {"file_path": str(mixed / "corrupt.png")}, {"file_path": str(mixed / "tool.bin")},
                 {"file_path": str(work / "missing.txt")}, {"file_path": files[0]},
                 {"file_path": "/etc/passwd"}]
        before = rss(info["pid"])
        toolfs.send({"op": "time", "name": "read", "errorsOk": True, "calls": [
            {"arguments": kinds[i % len(kinds)]} for i in range(1000)]})
        after = rss(info["pid"])
        print(f"\ntoolfs-mcp RSS: {before['VmRSS']} MiB after the reads above, "
              f"{after['VmRSS']} MiB after 1,000 mixed calls (peak {after['VmHWM']} MiB, "
              "the 19 MB photo's decode included)")
    finally:
        toolfs.close()
        ref.close()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
