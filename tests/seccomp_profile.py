# SPDX-License-Identifier: MIT
"""Measures the system calls toolfs-media-worker makes under its seccomp filter (issue 35,
docs/SPEC.md §6 "The media sandbox"), so that its lists are measured rather than guessed:

    seccomp_profile.py [--build DIR] [--quick] [--keep DIR]

It generates the media fixtures of the tests (gen_media, gen_video, gen_cues) and, without
--quick, a corpus of real-sized files (a 20-minute film with 2,000 cues in MP4 and Matroska,
1,000 ID3 chapters, 4K H.264 and HEVC, VP9, AV1, AC-3, Opus ...) and every audio container of
gen_audio_formats, then reads each one through
one toolfs-mcp under `strace -f` with TOOLFS_MEDIA_TEST=profile, which makes the worker's
filter log instead of stopping (every call runs): the default view, a frame or the audio from
1 s, and a span. It prints each system call the workers made after their filter was on, with
the count of workers that made it and whether media_sandbox.c allows it, refuses it (EPERM)
or would stop the worker; the exit status is 1 when a call would stop it."""
import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "fixtures"))
import gen_audio_formats  # noqa: E402
import gen_cues  # noqa: E402
import gen_media  # noqa: E402
import gen_video  # noqa: E402

SANDBOX = HERE.parent / "readers" / "media" / "media_sandbox.c"
MEDIA_SUFFIXES = (".mp3", ".wav", ".flac", ".ogg", ".opus", ".m4a", ".aiff", ".mp4", ".mkv",
                  ".webm", ".avi", ".ts", ".mov", ".ac3", ".wma", ".mka", ".wv", ".tta", ".aac",
                  ".eac3", ".caf", ".au", ".w64", ".voc", ".mod", ".dsf", ".ape", ".mpc", ".tak",
                  ".shn", ".dff", ".s3m", ".xm", ".it")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def big_corpus(out: pathlib.Path) -> None:
    """Real-sized files: long, many entries, big frames, the codecs a library meets."""
    out.mkdir(parents=True, exist_ok=True)
    minutes = 20
    step = minutes * 60 * 1000 // 2000
    (out / "film.srt").write_text("".join(
        f"{i + 1}\n{gen_cues.srt_time(i * step)} --> {gen_cues.srt_time(i * step + step // 2)}\n"
        f"Line {i + 1} of the film\n\n" for i in range(2000)), encoding="utf-8")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=5", "-f", "lavfi", "-i",
           "sine=frequency=300:sample_rate=48000", "-i", str(out / "film.srt"), "-t",
           str(minutes * 60), "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264",
           "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac",
           "-c:s", "mov_text", str(out / "film.mp4"))
    ffmpeg("-i", str(out / "film.mp4"), "-map", "0", "-c", "copy", "-c:s", "srt",
           str(out / "film.mkv"))
    meta = [";FFMETADATA1"]
    for i in range(1000):
        meta += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={i * 600}", f"END={(i + 1) * 600}",
                 f"title=Part {i + 1}"]
    (out / "chapters1000.txt").write_text("\n".join(meta) + "\n", encoding="utf-8")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=600", "-i",
           str(out / "chapters1000.txt"), "-map", "0", "-map_chapters", "1", "-c:a",
           "libmp3lame", "-b:a", "32k", str(out / "book.mp3"))
    big = "testsrc2=size=3840x2160:rate=25"
    ffmpeg("-f", "lavfi", "-i", big, "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
           "-pix_fmt", "yuv420p", str(out / "uhd.mp4"))
    ffmpeg("-f", "lavfi", "-i", big, "-t", "1", "-c:v", "libx265", "-preset", "ultrafast",
           "-x265-params", "log-level=none", str(out / "uhd_hevc.mkv"))
    small = "testsrc2=size=640x360:rate=25"
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "libvpx-vp9", "-deadline",
           "realtime", "-cpu-used", "8", str(out / "vp9.webm"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "1", "-c:v", "libaom-av1", "-cpu-used", "8",
           "-row-mt", "0", str(out / "av1.mkv"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "mpeg2video", "-f", "mpegts",
           str(out / "mpeg2.ts"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "prores_ks", str(out / "prores.mov"))
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=30:sample_rate=48000", "-ac", "2"]
    for name, codec in (("tone.ac3", ["-c:a", "ac3"]), ("tone.wma", ["-c:a", "wmav2"]),
                        ("opus.mka", ["-c:a", "libopus"]), ("alac.m4a", ["-c:a", "alac"])):
        ffmpeg(*tone, *codec, str(out / name))


def corpus(root: pathlib.Path, quick: bool) -> list:
    """The files to read, each part generated unless root holds it (--keep of an earlier run)."""
    parts = {"cues": gen_cues.generate}
    if not quick:
        parts.update({"media": gen_media.generate, "video": gen_video.generate,
                      "formats": gen_audio_formats.generate, "big": big_corpus})
    for name, generate in parts.items():
        if not (root / name).is_dir():
            generate(root / name)
    return sorted(p for name in parts for p in (root / name).rglob("*")
                  if p.suffix in MEDIA_SUFFIXES and p.is_file())


def sandbox_lists() -> tuple:
    """(allowed, refused) system call names of media_sandbox.c's filter."""
    text = SANDBOX.read_text()

    def names(array):
        body = re.search(r"static const int " + array + r"\[\] = \{(.*?)\};", text, re.S)[1]
        return set(re.findall(r"SCMP_SYS\((\w+)\)", body))
    allowed = names("allowed") | {"tgkill"}  # to itself only: a rule of its own
    refused = names("refused") | {"prlimit64"}  # read-only: a rule of its own
    return allowed, refused


def run_reads(build: pathlib.Path, root: pathlib.Path, files: list, trace: pathlib.Path) -> list:
    """Reads files through one toolfs-mcp under strace; returns the answers' texts."""
    env = {**os.environ, "TOOLFS_MEDIA_TEST": "profile"}
    cmd = ["strace", "-f", "-ff", "-qq", "-o", str(trace / "t"), str(build / "mcp" / "toolfs-mcp"),
           "--max_render_ms", "300000", str(root)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    next_id = 0

    def call(method, params):
        nonlocal next_id
        next_id += 1
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                     "params": params}).encode() + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())["result"]

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "seccomp_profile", "version": "1"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    answers = []
    for path in files:
        for time in (None, "1", "0.5-2.5"):
            args = {"file_path": str(path.relative_to(root))}
            if time:
                args["time"] = time
            got = call("tools/call", {"name": "read", "arguments": args})
            answers.append((args, got["content"][0].get("text", "")[:300]))
    proc.stdin.close()
    proc.wait(timeout=600)
    return answers


def worker_calls(trace: pathlib.Path) -> collections.Counter:
    """Per system call, how many workers made it after their filter was put on."""
    seen = collections.Counter()
    for path in trace.iterdir():
        calls, on = set(), False
        for line in path.read_text(errors="replace").splitlines():
            m = re.match(r"(\w+)\(", line)
            if not m:
                continue
            if m[1] == "seccomp" and "SECCOMP_SET_MODE_FILTER" in line and \
                    re.search(r"\) += 0$", line):  # libseccomp's probes before fail
                on = True
            elif on:
                calls.add(m[1])
        seen.update(calls)
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", "build"))
    ap.add_argument("--quick", action="store_true", help="the cue and chapter files alone")
    ap.add_argument("--keep", help="generate the corpus here and keep it (reused when there)")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(args.keep or tmp) / "corpus"
        trace = pathlib.Path(tmp) / "trace"
        trace.mkdir()
        files = corpus(root, args.quick)
        answers = run_reads(build, root, files, trace)
        seen = worker_calls(trace)
    allowed, refused = sandbox_lists()
    stopped = 0
    failed = [(args, text) for args, text in answers if not text.startswith("Container:")]
    print(f"{len(files)} files, {len(answers)} reads, {len(failed)} failed")
    for name, workers in sorted(seen.items()):
        verdict = "allowed" if name in allowed else "EPERM" if name in refused else "STOPPED"
        stopped += verdict == "STOPPED"
        print(f"{name:24} {workers:5} workers  {verdict}")
    for args, text in failed:
        print(f"failed: {json.dumps(args)}: {text}", file=sys.stderr)
    return 1 if stopped or not seen else 0


if __name__ == "__main__":
    sys.exit(main())
