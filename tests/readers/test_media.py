# SPDX-License-Identifier: MIT
"""Audio and video (docs/SPEC.md §3 "Audio and video", §6 "The media sandbox") through
toolfs-read and toolfs-mcp, against ffprobe -of json (every metadata field), Python's wave
module (the attached WAV), the fixture files' own bytes, and the providers' SDKs. Hostile
files, the seccomp filter, the deadline and a worker killed with SIGSEGV mid-read: a clear
error, the server keeps answering, no worker is left behind. Fixtures: tests/fixtures/gen_media.py
(Debian's ffmpeg CLI)."""
import base64
import io
import json
import os
import re
import pathlib
import signal
import subprocess
import time
import wave

import pytest

import gen_media
from worker_util import modules_linked_in
import test_formats

AUDIO = sorted(gen_media.AUDIO) + ["chapters.m4a", "long.mp3"]
VIDEO = sorted(gen_media.VIDEO) + ["rotated.mp4"]
HOSTILE = ["truncated.mp4", "truncated.mp3", "lying_moov.mp4", "huge.mp4", "huge.avi",
           "header_only.wav", "zero.wav", "streams.mkv", "many_streams.mkv"]
WORKER = "toolfs-reader-worker"


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    out = tmp_path_factory.mktemp("media")
    gen_media.generate(out)
    return out


@pytest.fixture(scope="module")
def read(toolfs_read, media):
    def run(name, *args, env=None):
        if env:
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
        try:
            return toolfs_read(name, *args, cwd=media)
        finally:
            if env:
                for k, v in old.items():
                    if v is None:
                        del os.environ[k]
                    else:
                        os.environ[k] = v
    return run


def media_processes(build_dir) -> list:
    """PIDs of toolfs-reader-worker processes of this build, the fork server and the workers it
    forked, zombies included (a zombie has no exe: it counts when its parent is one of this
    build's programs)."""
    exe = str(build_dir / "readers" / WORKER)
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "exe") == exe:
                found.append(int(entry.name))
                continue
        except OSError:
            pass
        try:
            stat = (entry / "stat").read_text()
            comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
            state, ppid = rest.split()[0], rest.split()[1]
            if comm == WORKER[:15] and state == "Z" and \
                    os.readlink(f"/proc/{ppid}/exe").startswith(str(build_dir) + "/"):
                found.append(int(entry.name))
        except (OSError, ValueError):
            pass
    return found


def workers(build_dir) -> list:
    """PIDs of the workers (the fork server's children) among media_processes."""
    found = media_processes(build_dir)

    def parent(pid):
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
            return int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            return None
    return [pid for pid in found if parent(pid) in found]


def no_workers(build_dir, wait: float = 3.0) -> bool:
    """True when no worker or fork server of this build is left, allowing a process that just
    exited (the daemon after unmount, whose background renders may still hold one) the moment
    its fork server takes to see its socket end, PR_SET_PDEATHSIG's SIGKILL to reach the
    workers, and init to reap."""
    deadline = time.monotonic() + wait
    while media_processes(build_dir):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def ffprobe(path) -> dict:
    out = subprocess.run(["ffprobe", "-v", "error", "-of", "json", "-show_format",
                          "-show_streams", "-show_chapters", str(path)],
                         capture_output=True, check=True)
    return json.loads(out.stdout)


def clock(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def rate(text: str) -> str:
    num, den = (int(x) for x in text.split("/"))
    return f"{num / den:.3f}".rstrip("0").rstrip(".")


def expected_lines(probe: dict) -> list:
    """The description docs/SPEC.md §3 gives, from ffprobe's answer."""
    fmt = probe["format"]
    lines = [f"Container: {fmt['format_name']} ({fmt['format_long_name']})"]
    if "duration" in fmt:
        d = float(fmt["duration"])
        lines.append(f"Duration: {clock(d)} ({d:.3f} s)")
    else:
        lines.append("Duration: unknown")
    if "bit_rate" in fmt:
        lines.append(f"Bit rate: {fmt['bit_rate']} b/s")
    audio = [s for s in probe["streams"] if s["codec_type"] == "audio"]
    for key, label in (("title", "Title"), ("artist", "Artist"), ("album", "Album"),
                       ("comment", "Comment"), ("creation_time", "Creation time")):
        tags = {k.lower(): v for k, v in fmt.get("tags", {}).items()}
        if key not in tags and audio:
            tags = {k.lower(): v for k, v in audio[0].get("tags", {}).items()}
        if tags.get(key):
            lines.append(f"{label}: {tags[key]}")
    for s in probe["streams"]:
        line = f"Stream {s['index']}: {s['codec_type']} {s['codec_name']}"
        if s["codec_type"] == "video":
            line += f", {s['width']}x{s['height']}"
            if s.get("avg_frame_rate", "0/0").split("/")[0] != "0" and \
                    s["avg_frame_rate"].split("/")[1] != "0":
                line += f", {rate(s['avg_frame_rate'])} fps"
            rot = [sd.get("rotation") for sd in s.get("side_data_list", []) if "rotation" in sd]
            if rot and rot[0]:
                line += f", rotation {rot[0]}"
        elif s["codec_type"] == "audio":
            ch = s["channels"]
            line += f", {s['sample_rate']} Hz, {ch} channel{'' if ch == 1 else 's'}"
            if s.get("channel_layout"):
                line += f" ({s['channel_layout']})"
        if "bit_rate" in s:
            line += f", {s['bit_rate']} b/s"
        lang = s.get("tags", {}).get("language")
        if lang and lang != "und":
            line += f", language {lang}"
        lines.append(line)
    for i, c in enumerate(probe.get("chapters", [])):
        line = f"Chapter {i + 1}: {clock(float(c['start_time']))} - {clock(float(c['end_time']))}"
        if c.get("tags", {}).get("title"):
            line += " " + c["tags"]["title"]
        lines.append(line)
    return lines


@pytest.mark.parametrize("name", AUDIO + VIDEO)
def test_metadata_is_ffprobes(read, media, name):
    r = read(name)
    assert r.json["success"], r.json
    probe = ffprobe(media / name)
    has_video = any(s["codec_type"] == "video" for s in probe["streams"])
    assert r.json["contentType"] == ("video" if has_video else "audio")
    magic = subprocess.run(["file", "--mime-type", "-b", str(media / name)], check=True,
                           capture_output=True, text=True).stdout.strip()
    assert r.json["mimeType"] == (magic if magic != "application/octet-stream" else "video/MP2T")
    want = expected_lines(probe)
    got = r.json["content"].splitlines()[:len(want)]
    if probe["format"]["format_name"] == "mpegts":
        # a stream's bit rate in MPEG-TS is the decoder's estimate over the frames probed,
        # which the probe's read sizes move: within 1%
        for i, (g, w) in enumerate(zip(got, want)):
            gb, wb = g.rsplit(", ", 1), w.rsplit(", ", 1)
            if g.startswith("Stream ") and gb[1].endswith(" b/s") and wb[1].endswith(" b/s"):
                assert abs(int(gb[1][:-4]) - int(wb[1][:-4])) <= int(wb[1][:-4]) // 100
                got[i], want[i] = gb[0], wb[0]
    assert got == want
    assert r.json["range"]["unit"] == "second"
    assert r.json["range"]["total"] == -(-float(probe["format"]["duration"]) // 1)
    if has_video:
        v = next(s for s in probe["streams"] if s["codec_type"] == "video")
        turned = any(abs(sd.get("rotation", 0)) == 90 for sd in v.get("side_data_list", []))
        dims = (v["height"], v["width"]) if turned else (v["width"], v["height"])
        assert r.json["metadata"]["dimensions"] == {"width": dims[0], "height": dims[1]}


def test_rotation_creation_time_and_chapters_are_there(read):
    assert ", rotation " in read("rotated.mp4").json["content"]
    assert "Creation time: 2024-01-02T03:04:05.000000Z" in read("rotated.mp4").json["content"]
    content = read("chapters.m4a").json["content"]
    assert "Chapter 1: 00:00:00.000 - 00:00:01.500 Opening" in content
    assert "Chapter 2: 00:00:01.500 - 00:00:04.000 Closing" in content


def test_detected_by_content_not_name(read, media):
    (media / "renamed.txt").write_bytes((media / "tone.flac").read_bytes())
    (media / "fake.mp3").write_text("not audio at all\n")
    assert read("renamed.txt").json["contentType"] == "audio"
    assert read("fake.mp3").json["contentType"] == "text"


def wav_of(entry: dict) -> wave.Wave_read:
    return wave.open(io.BytesIO(base64.b64decode(entry["data"])))


@pytest.mark.parametrize("name,kept", [("tone.mp3", "audio/mp3"), ("tone.wav", "audio/wav"),
                                       ("tone.flac", "audio/flac"), ("tone.ogg", "audio/ogg"),
                                       ("tone.aiff", "audio/aiff"), ("tone.m4a", None),
                                       ("tone.opus", "audio/ogg")])
def test_audio_is_attached(read, media, name, kept):
    """WAV and MP3 as they are; FLAC, Ogg, AIFF as they are and as WAV; M4A as WAV."""
    r = read(name).json
    audio = r["audio"]
    if kept:
        assert audio[0]["mediaType"] == kept
        assert base64.b64decode(audio[0]["data"]) == (media / name).read_bytes()
    if kept in ("audio/mp3", "audio/wav"):
        assert len(audio) == 1
        return
    wav = wav_of(audio[-1])
    assert audio[-1]["mediaType"] == "audio/wav"
    assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
    duration = float(ffprobe(media / name)["format"]["duration"])
    assert abs(wav.getnframes() / 16000 - duration) < 0.1
    assert "Speech is not transcribed" in r["content"]


def test_loudness_outline_finds_the_silent_half(read):
    content = read("tone.wav").json["content"]
    assert "  00:02.000-00:04.000 silent" in content


@pytest.mark.parametrize("sel,start,end", [("0-10", 0, 10), ("0:05-0:07", 5, 7),
                                           ("00:00:05-00:00:07", 5, 7), ("1.5-3.5", 1.5, 3.5)])
def test_time_window(read, media, sel, start, end):
    r = read("long.mp3", "--select", sel).json
    total = float(ffprobe(media / "long.mp3")["format"]["duration"])
    assert r["range"] == {"unit": "second", "start": int(start), "end": -(-end // 1),
                          "total": -(-total // 1)}
    assert r["truncated"] and r["next"].startswith("long.mp3:")
    wav = wav_of(r["audio"][0])
    assert (r["audio"][0]["start"], r["audio"][0]["end"]) == (start, end)
    assert abs(wav.getnframes() / 16000 - (end - start)) < 0.05


def test_long_file_is_attached_by_range_with_next(read):
    r = read("long.mp3", "--max-audio-seconds", "10").json
    assert r["truncated"] and r["next"] == "long.mp3:10-20.tool.json"
    last = read("long.mp3", "--select", "20-").json
    assert not last["truncated"] and "next" not in last
    past = read("long.mp3", "--select", "45-50").json
    assert past["errorCode"] == "out_of_range"


def test_time_selector_on_text_is_out_of_range(read, media):
    (media / "notes.txt").write_text("hello\n")
    r = read("notes.txt", "--select", "0:05")
    assert r.json["errorCode"] == "out_of_range"


def test_provider_formats_carry_audio(read):
    mcp = read("tone.flac", "--format", "mcp").json
    assert [b["type"] for b in mcp["content"]] == ["text", "audio"]
    assert mcp["content"][1]["mimeType"] == "audio/flac"
    openai = read("tone.flac", "--format", "openai").json
    assert openai["input_audio"][0]["input_audio"]["format"] == "wav"
    anthropic = read("tone.flac", "--format", "anthropic").json
    assert "Audio is not accepted by Anthropic" in anthropic["content"][-1]["text"]
    txt = read("tone.flac", "--format", "txt").text
    assert "[audio 2: audio/wav 0.000-4.000 s" in txt


def test_provider_formats_satisfy_the_sdks(read, tmp_path):
    test_formats.sdk_installed()
    lines = ["import type { ChatCompletionContentPartInputAudio } from "
             "'openai/resources/chat/completions';\n"]
    mcp_results = []
    for name in ("tone.mp3", "tone.flac", "tone.m4a", "clip.mp4"):
        anthropic = read(name, "--format", "anthropic").json
        openai = read(name, "--format", "openai").json
        mcp_results.append(read(name, "--format", "mcp").json)
        key = name.replace(".", "_")
        lines.append(test_formats.ts_line(f"a_{key}", test_formats.anthropic_block(anthropic),
                                          "ToolResultBlockParam"))
        parts = openai.pop("input_audio", [])
        lines.append(test_formats.ts_line(f"o_{key}", test_formats.openai_item(openai),
                                          "ResponseInputItem.FunctionCallOutput"))
        for i, part in enumerate(parts):
            lines.append(test_formats.ts_line(f"p_{key}_{i}", part,
                                              "ChatCompletionContentPartInputAudio"))
    proc = test_formats.run_tsc(lines)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    (tmp_path / "results.json").write_text(json.dumps(mcp_results))
    out = subprocess.run(["node", str(test_formats.SDK / "check_mcp.mjs"),
                          str(tmp_path / "results.json")], capture_output=True, check=True)
    verdicts = json.loads(out.stdout)
    assert all(v["ok"] for v in verdicts), verdicts
    assert any(b["type"] == "audio" for v in verdicts for b in v["parsed"]["content"])


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_files_give_a_clear_answer(read, build_dir, name):
    started = time.monotonic()
    r = read(f"hostile/{name}", "--max-render-ms", "20000").json
    assert time.monotonic() - started < 30
    if not r["success"]:
        assert r["errorCode"] in ("corrupt", "unsupported", "timeout")
        assert r["error"].startswith(("Failed to read", "The media reader ran past")), r
        assert r["error"].endswith((name, "its sandboxed worker was stopped"))
    assert no_workers(build_dir), media_processes(build_dir)


def test_thousands_of_streams_is_corrupt(read):
    r = read("hostile/streams.mkv").json
    assert r["errorCode"] == "corrupt"


def test_seccomp_stops_a_worker_that_opens_a_socket(read, build_dir):
    """TOOLFS_WORKER_TEST=syscall: the worker calls socket(2), which its filter forbids; the
    result names the call (docs/SPEC.md §8; the media reader's worker is the reader worker's)."""
    r = read("tone.wav", env={"TOOLFS_WORKER_TEST": "syscall"}).json
    assert r["errorCode"] == "corrupt"
    assert r["error"] == ("The media reader's sandboxed worker was stopped by its sandbox at "
                          "syscall socket on tone.wav")
    assert no_workers(build_dir), media_processes(build_dir)


def test_a_worker_that_lies_about_its_answer_cannot_overflow_the_reader(read, build_dir):
    """The reader checks the worker's answer before touching its bytes: a reply whose image
    claims 2^40 bytes (TOOLFS_WORKER_TEST=lie) is an invalid answer, nothing allocated."""
    r = read("clip.mp4", env={"TOOLFS_WORKER_TEST": "lie"})
    assert r.rc != 0 or not r.json["success"]
    assert r.json["errorCode"] == "corrupt"
    assert r.json["error"] == ("The media reader's sandboxed worker gave an invalid answer on "
                               "clip.mp4")
    assert no_workers(build_dir), media_processes(build_dir)


def test_a_decoder_loop_is_stopped_by_the_deadline(read, build_dir):
    started = time.monotonic()
    r = read("tone.wav", "--max-render-ms", "300", env={"TOOLFS_WORKER_TEST": "loop"}).json
    assert time.monotonic() - started < 10
    assert r["errorCode"] == "timeout"
    assert r["error"] == ("The media reader ran past max_render_ms (300 ms) on tone.wav: its "
                          "sandboxed worker was stopped")
    assert no_workers(build_dir), media_processes(build_dir)


class Server:
    """toolfs-mcp over stdio, newline-delimited JSON-RPC."""

    def __init__(self, build_dir, root, env):
        self.proc = subprocess.Popen([str(build_dir / "mcp" / "toolfs-mcp"), str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, **env})
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return json.loads(self.proc.stdout.readline())["result"]

    def read(self, **args):
        return self.call("tools/call", {"name": "read", "arguments": args})

    def read_in_worker(self, build_dir, name, request_id) -> int:
        """Sends a read of name without waiting for it; returns the worker's pid once one
        runs."""
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "read", "arguments": {"file_path": name}}})
        deadline = time.monotonic() + 20
        while not workers(build_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        found = workers(build_dir)
        assert len(found) == 1
        return found[0]

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


def test_mcp_server_survives_a_worker_killed_with_sigsegv(build_dir, media):
    """A worker spinning on a file is sent SIGSEGV mid-read: the read says corrupt, the server
    answers the next calls, a fresh worker takes the next media read, and none is left."""
    server = Server(build_dir, media, {"TOOLFS_WORKER_TEST": "loop"})
    try:
        first = server.read_in_worker(build_dir, "tone.wav", 100)
        time.sleep(0.2)
        os.kill(first, signal.SIGSEGV)
        answer = json.loads(server.proc.stdout.readline())["result"]
        assert answer["isError"]
        text = answer["content"][0]["text"]
        if modules_linked_in(build_dir):
            # ASan's SEGV handler makes system calls (ioctl, openat) that the sandbox stops
            text = re.sub(r"by its sandbox at syscall \w+", "by SIGSEGV", text)
        assert text == "The media reader's sandboxed worker was stopped by SIGSEGV on tone.wav"
        (media / "hello.txt").write_text("hello\n")
        assert server.read(file_path="hello.txt")["content"][0]["text"] == "     1\thello\n"
        second = server.read_in_worker(build_dir, "tone.wav", 101)
        assert second != first
        os.kill(second, signal.SIGSEGV)
        assert json.loads(server.proc.stdout.readline())["result"]["isError"]
    finally:
        server.close()
    assert no_workers(build_dir), media_processes(build_dir)


def test_a_worker_reads_one_file_only(build_dir, media):
    """A worker is given the descriptor of one file and reads it once (docs/SPEC.md §8): a
    decoder that a crafted file took over cannot read the files read after it, another user's
    among them. Each read has a worker of its own, gone with its answer."""
    server = Server(build_dir, media, {})
    try:
        for name in ("tone.wav", "tone.mp3", "tone.wav"):
            got = server.read(file_path=name)
            assert not got.get("isError"), got
            deadline = time.monotonic() + 3
            while workers(build_dir) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert workers(build_dir) == []  # the fork server alone is left
    finally:
        server.close()
    assert no_workers(build_dir), media_processes(build_dir)


@pytest.mark.skipif(os.geteuid() != 0, reason="a worker drops to nobody only when root starts it")
def test_a_worker_started_by_root_runs_as_nobody(build_dir, media):
    """A worker started by root (the daemon's case) runs as nobody (65534) in every id, no
    supplementary group, no new privileges, and its filter in force (Seccomp: 2); so does its
    fork server, but for the filter."""
    server = Server(build_dir, media, {"TOOLFS_WORKER_TEST": "loop"})
    try:
        pid = server.read_in_worker(build_dir, "tone.wav", 100)
        deadline = time.monotonic() + 10
        status = {}
        while time.monotonic() < deadline:  # the drop happens right after the exec
            status = dict(line.split(":", 1) for line in
                          pathlib.Path(f"/proc/{pid}/status").read_text().splitlines())
            if status["Seccomp"].strip() == "2":
                break
            time.sleep(0.02)
        assert status["Uid"].split() == ["65534"] * 4
        assert status["Gid"].split() == ["65534"] * 4
        assert status["Groups"].strip() == ""
        assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"
        # its fork server (which reads no file, and forks) likewise, without the filter
        server_pid = int(status["PPid"])
        assert server_pid in media_processes(build_dir)
        server_status = dict(line.split(":", 1) for line in
                             pathlib.Path(f"/proc/{server_pid}/status").read_text().splitlines())
        assert server_status["Uid"].split() == ["65534"] * 4
        assert server_status["Groups"].strip() == ""
        assert server_status["NoNewPrivs"].strip() == "1"
        os.kill(pid, signal.SIGKILL)
        assert json.loads(server.proc.stdout.readline())["result"]["isError"]
    finally:
        server.close()
    assert no_workers(build_dir), media_processes(build_dir)


def test_mcp_time_argument_and_audio_block(build_dir, media):
    server = Server(build_dir, media, {})
    try:
        got = server.read(file_path="long.mp3", time="0:05-0:08")
        assert [b["type"] for b in got["content"]][:2] == ["text", "audio"]
        assert got["content"][-1]["text"].endswith('More: call read with time "8-11"]')
        bad = server.read(file_path="long.mp3", time="soon")
        assert bad["isError"]
    finally:
        server.close()
    assert no_workers(build_dir), media_processes(build_dir)


def test_mount_reads_media_and_keeps_answering(build_dir, media, tmp_path, toolfs_read):
    """The mount gives the CLI's bytes, parses a time with colons in a name, answers every
    hostile file and a text file after them, and leaves no worker behind at unmount."""
    from mount_util import mounted
    (media / "hello.txt").write_text("hello\n")
    with mounted(build_dir / "fs" / "toolfs", media, tmp_path / "mnt") as m:
        assert (m.path / "tone.flac.tool.json").read_bytes() == \
            toolfs_read("tone.flac", cwd=media).out
        window = json.loads((m.path / "long.mp3:0:05-0:07.tool.json").read_bytes())
        assert (window["range"]["start"], window["range"]["end"]) == (5, 7)
        for name in HOSTILE:
            doc = json.loads((m.path / "hostile" / f"{name}.tool.json").read_bytes())
            assert doc["success"] or doc["errorCode"] in ("corrupt", "unsupported", "timeout")
        assert json.loads((m.path / "hello.txt.tool.json").read_bytes())["content"] == \
            "     1\thello\n"
    assert no_workers(build_dir), media_processes(build_dir)


def test_mount_survives_a_decoder_loop(build_dir, media, tmp_path):
    from mount_util import mounted
    (media / "hello.txt").write_text("hello\n")
    os.environ["TOOLFS_WORKER_TEST"] = "loop"
    try:
        with mounted(build_dir / "fs" / "toolfs", media, tmp_path / "mnt",
                     "-o", "max_render_ms=500") as m:
            started = time.monotonic()
            doc = json.loads((m.path / "tone.wav.tool.json").read_bytes())
            assert doc["errorCode"] == "timeout" and time.monotonic() - started < 10
            assert json.loads((m.path / "hello.txt.tool.json").read_bytes())["success"]
            doc = json.loads((m.path / "tone.mp3.tool.json").read_bytes())
            assert doc["errorCode"] == "timeout"
    finally:
        del os.environ["TOOLFS_WORKER_TEST"]
    assert no_workers(build_dir), media_processes(build_dir)


def test_silent_spans_agree_with_silencedetect(read, media):
    """The outline's silent spans against ffmpeg's silencedetect filter at the same threshold
    (-50 dB) and minimum (0.5 s), within the outline's 0.5 s windows; a loud span is marked."""
    gen_media.ffmpeg("-f", "lavfi", "-i", "sine=frequency=500:duration=1:sample_rate=16000",
                     "-af", "apad=pad_dur=1.5,volume=7", "-t", 2.5, "-c:a", "pcm_s16le",
                     media / "gap.wav")
    gen_media.ffmpeg("-i", media / "gap.wav", "-i", media / "tone.wav", "-filter_complex",
                     "[0:a]aresample=44100[a];[a][1:a]concat=n=2:v=0:a=1", media / "gaps.wav")
    log = subprocess.run(["ffmpeg", "-nostdin", "-i", str(media / "gaps.wav"), "-af",
                          "silencedetect=n=-50dB:d=0.5", "-f", "null", "-"],
                         capture_output=True, text=True).stderr
    starts = [float(x) for x in re.findall(r"silence_start: ([0-9.]+)", log)]
    ends = [float(x) for x in re.findall(r"silence_end: ([0-9.]+)", log)]
    content = read("gaps.wav").json["content"]
    spans = [(int(a) * 60 + float(b), int(c) * 60 + float(d), kind) for a, b, c, d, kind in
             re.findall(r"^  (\d\d):(\d\d\.\d{3})-(\d\d):(\d\d\.\d{3}) (silent|loud)$", content,
                        re.M)]
    silent = [(a, b) for a, b, kind in spans if kind == "silent"]
    assert len(silent) == len(starts) == 2
    for (a, b), s, e in zip(silent, starts, ends):
        assert abs(a - s) <= 0.5 and abs(b - e) <= 0.5, (silent, starts, ends)
    assert any(kind == "loud" and a < 1 for a, b, kind in spans)


def test_video_time_window(read):
    r = read("clip.mp4", "--select", "1-2").json
    assert r["success"] and r["range"] == {"unit": "second", "start": 1, "end": 2, "total": 3}
    r = read("clip.mp4", "--select", "0:01.5").json
    assert r["success"] and r["range"]["start"] == 1
