#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""media.py - issue 28's benchmark rows, toolfs and its peer run alternately in one invocation,
medians and ratios:

  metadata   a generated 1-hour MP3 and a 10-minute 1080p H.264 MP4: toolfs-read (a process per
             read, its worker spawned too) and toolfs-mcp (a warm worker, as in the mount)
             against `ffprobe -show_format -show_streams`; the MP3 both as the default view (the
             first 600 s: loudness outline and a 16 kHz WAV) and as `:0-1` (the metadata and
             one second)
  sandbox    a 0.3 s WAV read through toolfs-mcp (a warm worker: request, descriptor over the
             socket, answer) and through toolfs-read (a worker spawned per read), against the
             same work in process (bench/media_probe.c, built here with cc): the isolation's
             cost per read, absolute and relative

    bench/media.py [--build BUILD] [--rounds N] [--cache DIR]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)], check=True)


def corpus(cache: pathlib.Path) -> dict:
    cache.mkdir(parents=True, exist_ok=True)
    files = {"hour.mp3": cache / "hour.mp3", "ten.mp4": cache / "ten.mp4",
             "small.wav": cache / "small.wav"}
    if not files["hour.mp3"].exists():
        ffmpeg("-f", "lavfi", "-i", "sine=frequency=220:duration=3600:sample_rate=44100",
               "-c:a", "libmp3lame", "-b:a", "64k", files["hour.mp3"])
    if not files["ten.mp4"].exists():
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=600",
               "-f", "lavfi", "-i", "sine=duration=600", "-c:v", "libx264", "-preset",
               "ultrafast", "-crf", "38", "-c:a", "aac", "-shortest", files["ten.mp4"])
    if not files["small.wav"].exists():
        ffmpeg("-f", "lavfi", "-i", "sine=duration=0.3:sample_rate=16000", "-c:a", "pcm_s16le",
               files["small.wav"])
    return files


def timed(cmd) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def alternate(rounds: int, a, b):
    """Runs a() and b() alternately rounds times; returns their medians (seconds)."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(a())
        tb.append(b())
    return statistics.median(ta), statistics.median(tb)


class Mcp:
    def __init__(self, binary, root):
        self.proc = subprocess.Popen([str(binary), str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.n = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})

    def call(self, method, params):
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def read(self, name, **extra) -> float:
        t0 = time.perf_counter()
        self.call("tools/call", {"name": "read", "arguments": {"file_path": str(name), **extra}})
        return time.perf_counter() - t0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cache", default=str(pathlib.Path(tempfile.gettempdir()) / "toolfs-bench-media"))
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    read = str(build / "cli" / "toolfs-read")
    files = corpus(pathlib.Path(args.cache))
    rows = []

    def ffprobe(path):
        return lambda: timed(["ffprobe", "-v", "error", "-show_format", "-show_streams", path])

    for label, path, extra in (("1-hour MP3, :0-1", files["hour.mp3"], ["--select", "0-1"]),
                               ("1-hour MP3, default view", files["hour.mp3"], []),
                               ("10-min 1080p MP4", files["ten.mp4"], [])):
        ours, peer = alternate(args.rounds, lambda: timed([read, *extra, path]), ffprobe(path))
        rows.append((f"metadata: {label}", ours, peer, "ffprobe -show_format -show_streams"))
    # the same through toolfs-mcp, whose worker stays (as the mount's does)
    server = Mcp(build / "mcp" / "toolfs-mcp", pathlib.Path(args.cache))
    for label, path, extra in (("1-hour MP3, time 0-1, toolfs-mcp", files["hour.mp3"],
                                {"time": "0-1"}),
                               ("10-min 1080p MP4, toolfs-mcp", files["ten.mp4"], {})):
        server.read(path.name, **extra)
        ours, peer = alternate(args.rounds, lambda: server.read(path.name, **extra),
                               ffprobe(path))
        rows.append((f"metadata: {label}", ours, peer, "ffprobe -show_format -show_streams"))
    server.close()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        probe = tmp / "media_probe"
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libavformat", "libavcodec",
                                "libavutil", "libswresample"], check=True, capture_output=True,
                               text=True).stdout.split()
        media = REPO / "readers" / "media"
        subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", f"-I{media}", f"-I{REPO / 'include'}",
                        "-o", str(probe), str(REPO / "bench" / "media_probe.c"),
                        str(media / "media_input.c"), str(media / "media_describe.c"),
                        str(media / "media_audio.c"), *flags, "-lm"], check=True)
        root = tmp / "root"
        root.mkdir()
        (root / "small.wav").write_bytes(files["small.wav"].read_bytes())
        (root / "small.txt").write_text("x\n")
        n = max(args.rounds, 50)
        in_process = float(subprocess.run([str(probe), str(root / "small.wav"), "600", str(n)],
                                          check=True, capture_output=True,
                                          text=True).stdout) / 1e6
        server = Mcp(build / "mcp" / "toolfs-mcp", root)
        server.read("small.wav")  # the worker is spawned once
        warm, text = alternate(n, lambda: server.read("small.wav"),
                               lambda: server.read("small.txt"))
        server.close()
        cold, cli_text = alternate(args.rounds, lambda: timed([read, root / "small.wav"]),
                                   lambda: timed([read, root / "small.txt"]))
    rows.append(("sandbox: toolfs-mcp read of a 0.3 s WAV (warm worker)", warm, in_process,
                 "the same probe in process"))
    rows.append(("sandbox: toolfs-read of it (worker spawned per read)", cold, in_process,
                 "the same probe in process"))
    print(f"{'row':62} {'toolfs':>10} {'peer':>10} {'ratio':>7}  peer")
    for label, ours, peer, what in rows:
        print(f"{label:62} {ours * 1000:9.1f}ms {peer * 1000:9.1f}ms {ours / peer:7.2f}  {what}")
    print(f"sandbox overhead per read, warm: {(warm - in_process - text) * 1000:.2f} ms over the "
          f"probe and a text read's {text * 1000:.2f} ms; cold (spawn): "
          f"{(cold - cli_text - in_process) * 1000:.2f} ms over the probe and "
          f"toolfs-read of a text file ({cli_text * 1000:.1f} ms)")


if __name__ == "__main__":
    sys.exit(main())
