# SPDX-License-Identifier: MIT
"""Issue 28, the video pictures (readers/media/media_video.h) through tests/unit's
media_video_driver, on videos made by tests/fixtures/gen_video.py with the ffmpeg CLI:
- a frame by time is the first frame at or after T (ffprobe's frame list the oracle for which
  one), its pixels those the ffmpeg CLI extracts (`-ss T` on the output side, which decodes from
  the start: input-side seeking lands late in MPEG-TS) scaled the same way, in every container;
  the display matrix and the sample aspect applied;
- a contact sheet's grid, cell times and cells; its labels drawn in pure black and white;
- subtitle text and times exact against the SRT muxed in (mov_text, SubRip, ASS, WebVTT);
- hostile files and arguments give a clear error under a 1 GiB address-space limit;
- through toolfs-read and the sandboxed worker: the default view's sheet, a frame, a span, the
  content's times and subtitles, a refused picture keeping the metadata."""
import base64
import functools
import io
import json
import pathlib
import re
import resource
import subprocess

import pytest
from PIL import Image, ImageChops, ImageStat

import gen_video

CONTAINERS = sorted(gen_video.CONTAINERS)
TIMES = [0, 1.0, 3.5, 4.02, 7.3, 9.9]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    out = tmp_path_factory.mktemp("video")
    gen_video.generate(out)
    return out


@pytest.fixture(scope="module")
def driver(build_dir):
    path = build_dir / "tests" / "unit" / "media_video_driver"
    if not path.exists():
        pytest.skip("built without FFmpeg (-Dmedia=disabled)")
    return path


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@functools.lru_cache(maxsize=None)
def sanitized(driver) -> bool:
    """True for an AddressSanitizer build, whose shadow memory alone is terabytes of address
    space: no address-space limit can hold it (ASan reports what the limit would catch)."""
    return b"__asan_init" in pathlib.Path(driver).read_bytes()


def run(driver, *args):
    """(exit code, stdout bytes, stderr text) of one driver run under a 1 GiB limit."""
    p = subprocess.run([str(driver), *map(str, args)], capture_output=True, timeout=120,
                       preexec_fn=None if sanitized(str(driver)) else limit_memory)
    return p.returncode, p.stdout, p.stderr.decode()


def frame(driver, path, t, max_w=0, max_h=0):
    rc, out, err = run(driver, "frame", path, t, max_w, max_h)
    assert rc == 0, err
    return Image.open(io.BytesIO(out)), float(re.search(r"pts=([0-9.]+)", err).group(1))


def ffmpeg_frame(path, t, size=None, autorotate=True):
    """The frame the ffmpeg CLI gives for time t, scaled (bicubic) to size when given."""
    vf = ["-vf", f"scale={size[0]}:{size[1]}:flags=bicubic"] if size else []
    rot = [] if autorotate else ["-noautorotate"]
    p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", *rot, "-i", str(path), "-ss", str(t),
                        "-frames:v", "1", *vf, "-f", "image2pipe", "-c:v", "ppm", "-"],
                       capture_output=True, check=True)
    return Image.open(io.BytesIO(p.stdout)).convert("RGB")


def mean_diff(a, b) -> float:
    assert a.size == b.size
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def probe(path) -> dict:
    return json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_frames",
         "-select_streams", "v:0", "-of", "json", str(path)],
        capture_output=True, check=True).stdout)


def frame_times(info: dict) -> list:
    """Every frame's time from the file's start, per ffprobe."""
    start = float(info["format"].get("start_time", 0))
    return sorted(float(f["best_effort_timestamp_time"]) - start for f in info["frames"])


def fit(w, h, max_w, max_h):
    s = min(1.0, max_w / w if max_w else 1.0)
    s = min(s, max_h / h) if max_h and h * s > max_h else s
    return max(1, round(w * s)), max(1, round(h * s))


@pytest.mark.parametrize("name", CONTAINERS)
def test_frames_match_ffmpeg(videos, driver, name):
    path = videos / name
    info = probe(path)
    times = frame_times(info)
    for t in TIMES:
        want_pts = min(x for x in times if x >= t - 1e-6)
        for max_w, max_h in ((0, 0), (200, 200)):
            im, pts = frame(driver, path, t, max_w, max_h)
            assert abs(pts - want_pts) < 1e-3, (name, t, pts, want_pts)
            assert im.size == fit(320, 240, max_w, max_h)
            oracle = ffmpeg_frame(path, t, im.size if max_w else None)
            assert mean_diff(im, oracle) <= 1.0, (name, t, max_w)


def test_rotated(videos, driver):
    """The display matrix: ffprobe's rotation (av_display_rotation_get: degrees
    counter-clockwise) of 90 shows the picture turned a quarter counter-clockwise, as ffmpeg's
    autorotate does; unscaled it is exactly Pillow's turn of the coded frame."""
    path = videos / "rotated.mp4"
    assert probe(path)["streams"][0]["side_data_list"][0]["rotation"] == 90
    im, _ = frame(driver, path, 3.5)
    assert im.size == (240, 320)
    coded = ffmpeg_frame(path, 3.5, autorotate=False)
    assert mean_diff(im, coded.transpose(Image.Transpose.ROTATE_90)) <= 1.0
    assert mean_diff(im, ffmpeg_frame(path, 3.5)) <= 1.0
    im, _ = frame(driver, path, 3.5, 200, 200)
    assert im.size == (150, 200)
    # scaled before the turn (ffmpeg turns first): chroma siting differs a little
    assert mean_diff(im, ffmpeg_frame(path, 3.5, im.size)) <= 6.0


def test_sample_aspect(videos, driver):
    """2:1 pixels: shown twice as wide, as ffmpeg's scale=iw*sar:ih."""
    path = videos / "anamorphic.mkv"
    assert probe(path)["streams"][0]["sample_aspect_ratio"] == "2:1"
    im, _ = frame(driver, path, 4.02)
    assert im.size == (640, 240)
    assert mean_diff(im, ffmpeg_frame(path, 4.02, im.size)) <= 1.0
    im, _ = frame(driver, path, 4.02, 200, 200)
    assert im.size == (200, 75)


def sheet(driver, path, t0, t1, cols, rows, max_w, max_h):
    rc, out, err = run(driver, "sheet", path, t0, t1, cols, rows, max_w, max_h)
    assert rc == 0, err
    m = re.search(r"n=(\d+) times=([0-9.,]+)", err)
    return Image.open(io.BytesIO(out)), int(m.group(1)), [float(x) for x in m.group(2).split(",")]


def label_box(cell_h: int, text: str):
    """The label's size in the cell's bottom-right corner: 3x5 glyphs a column apart, a margin
    of one font pixel, font pixels of max(1, cell_h // 100)."""
    scale = max(1, cell_h // 100)
    return (4 * len(text) + 1) * scale, 7 * scale


@pytest.mark.parametrize("span,grid,labels", [
    ((0, 10), (3, 3), ["00:00.0", "00:01.1", "00:02.2", "00:03.3", "00:04.4", "00:05.5",
                       "00:06.6", "00:07.7", "00:08.8"]),
    ((2, 5), (2, 2), ["00:02.0", "00:02.7", "00:03.5", "00:04.2"]),
])
def test_sheet(videos, driver, span, grid, labels):
    path = videos / "clip.mp4"
    cols, rows = grid
    im, n, times = sheet(driver, path, *span, cols, rows, 600, 600)
    cw, ch = fit(320, 240, 600 // cols, 600 // rows)
    assert im.size == (cw * cols, ch * rows)
    assert n == cols * rows
    step = (span[1] - span[0]) / (cols * rows)
    assert times == pytest.approx([span[0] + i * step for i in range(cols * rows)], abs=1e-6)
    for i, t in enumerate(times):
        x0, y0 = i % cols * cw, i // cols * ch
        cell = im.crop((x0, y0, x0 + cw, y0 + ch))
        bw, bh = label_box(ch, labels[i])
        box = cell.crop((cw - bw, ch - bh, cw, ch))
        colours = {c for _, c in box.getcolors(bw * bh)}
        assert colours == {(0, 0, 0), (255, 255, 255)}, (i, colours)
        # the picture outside the label is ffmpeg's frame at that time
        oracle = ffmpeg_frame(path, t, (cw, ch))
        mask_black = Image.new("RGB", (bw, bh))
        cell.paste(mask_black, (cw - bw, ch - bh))
        oracle.paste(mask_black, (cw - bw, ch - bh))
        assert mean_diff(cell, oracle) <= 1.0, (i, t)
    # one pixel left of the box is picture, not label
    bw, bh = label_box(ch, labels[0])
    assert im.getpixel((cw - bw - 1, ch - 1)) != (0, 0, 0) or \
        im.getpixel((cw - bw - 2, ch - 2)) != (0, 0, 0)


def test_sheet_past_the_end(videos, driver):
    """A span reaching past the end: the cells past it stay black, n counts the others."""
    im, n, times = sheet(driver, videos / "clip.mp4", 5, 20, 3, 3, 300, 300)
    assert n == 3  # 5, 6.67, 8.33; 10 is the end
    cw, ch = fit(320, 240, 100, 100)
    assert im.crop((0, ch, 3 * cw, 3 * ch)).getextrema() == ((0, 0), (0, 0), (0, 0))


def expected_subtitles(codec: str) -> str:
    def ts(ms):
        return f"{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"

    lines = [f"Subtitle track 1 (eng, {codec}):"]
    for start, end, text in gen_video.CUES:
        plain = " / ".join(re.sub(r"<[^>]+>", "", t) for t in text)
        lines.append(f"[{ts(start)} --> {ts(end)}] {plain}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["subs.mp4", "subs.mkv", "subs_ass.mkv", "subs.webm"])
def test_subtitles(videos, driver, name):
    info = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "s", "-show_streams", "-of", "json",
         str(videos / name)], capture_output=True, check=True).stdout)
    codec = info["streams"][0]["codec_name"]
    assert codec == {"subs.mp4": "mov_text", "subs.mkv": "subrip", "subs_ass.mkv": "ass",
                     "subs.webm": "webvtt"}[name]
    rc, out, err = run(driver, "subs", videos / name)
    assert rc == 0, err
    assert out.decode() == expected_subtitles(codec)
    # a window: the cues overlapping [3, 7)
    rc, out, err = run(driver, "subs", videos / name, 3, 7)
    lines = expected_subtitles(codec).splitlines()
    assert out.decode() == "\n".join([lines[0], lines[2], lines[3]]) + "\n"


def test_no_subtitles(videos, driver):
    rc, out, err = run(driver, "subs", videos / "clip.mp4")
    assert (rc, out) == (0, b"")


@pytest.mark.parametrize("args,error", [
    (("frame", "clip.mp4", 10.0), "ERANGE"),       # the end
    (("frame", "clip.mp4", 1e300), "ERANGE"),
    (("frame", "clip.mp4", -1), "EINVAL"),
    (("frame", "one_frame.mkv", 0.5), "ERANGE"),   # past its only frame
    (("frame", "huge.avi", 0.5), "ENODATA"),      # 100000x100000: avformat leaves no size
    (("frame", "big.avi", 0.5), "EFBIG"),         # 16000x16000: over the cap
    (("sheet", "big.avi", 0, 2, 3, 3, 600, 600), "EFBIG"),
    (("sheet", "clip.mp4", 0, 10, 100, 100, 600, 600), "EINVAL"),
    (("sheet", "clip.mp4", 5, 5, 3, 3, 600, 600), "EINVAL"),  # no span
    (("sheet", "clip.mp4", 10, 20, 3, 3, 600, 600), "ERANGE"),
    (("frame", "truncated.mp4", 8), "ERANGE"),    # its frames end at 3.96 s
    (("--deadline-ms", 0, "frame", "clip.mp4", 5), "ETIMEDOUT"),
    (("--deadline-ms", 0, "sheet", "clip.mp4", 0, 10, 3, 3, 600, 600), "ETIMEDOUT"),
    (("--deadline-ms", 0, "subs", "subs.mkv"), "ETIMEDOUT"),
])
def test_hostile(videos, driver, args, error):
    args = [videos / a if isinstance(a, str) and (videos / a).exists() else a for a in args]
    rc, out, err = run(driver, *args)
    assert (rc, err.strip()) == (2, f"error: {error}")


def test_truncated_and_single_frame(videos, driver):
    """What is there is shown: the frames before a cut, the only frame of a one-frame file."""
    im, pts = frame(driver, videos / "truncated.mp4", 2)
    assert pts == pytest.approx(2.0)
    assert mean_diff(im, ffmpeg_frame(videos / "clip.mp4", 2)) <= 1.0
    _, n, _ = sheet(driver, videos / "truncated.mkv", 0, 4, 2, 2, 400, 400)
    assert n == 4
    im, pts = frame(driver, videos / "one_frame.mkv", 0)
    assert (pts, im.size) == (0.0, (320, 240))
    _, n, _ = sheet(driver, videos / "one_frame.mkv", 0, 0.04, 1, 1, 400, 400)
    assert n == 1


# Through the reader, whose read runs in the sandboxed reader worker (media_video_reply.c makes
# the pictures): PNGs in images[], their times and the subtitles in content.

def png_of(result) -> Image.Image:
    images = result.json["images"]
    assert len(images) == 1 and images[0]["mediaType"] == "image/png"
    im = Image.open(io.BytesIO(base64.b64decode(images[0]["data"]))).convert("RGB")
    assert im.size == (images[0]["width"], images[0]["height"])
    return im


def test_read_default_view_is_a_sheet_with_subtitles(videos, toolfs_read):
    r = toolfs_read(videos / "subs.mkv")
    assert r.rc == 0 and r.json["contentType"] == "video"
    im = png_of(r)
    cw, ch = 320, 240  # within image_max_dim / 3: cells are never enlarged
    assert im.size == (3 * cw, 3 * ch)
    times = [i * 10 / 9 for i in range(9)]
    stamps = ", ".join(f"00:{int(t):02d}.{round(t * 1000) % 1000:03d}" for t in times)
    content = r.json["content"]
    assert f"Frames shown (a 3x3 contact sheet, row by row, each time drawn in its " \
           f"bottom-right corner): {stamps}\n" in content
    assert content.endswith(expected_subtitles("subrip"))
    # the middle cell is ffmpeg's frame at its time, outside the label
    cell = im.crop((cw, ch, 2 * cw, 2 * ch))
    oracle = ffmpeg_frame(videos / "subs.mkv", times[4])
    bw, bh = label_box(ch, "00:04.4")
    black = Image.new("RGB", (bw, bh))
    cell.paste(black, (cw - bw, ch - bh))
    oracle.paste(black, (cw - bw, ch - bh))
    assert mean_diff(cell, oracle) <= 1.0


def test_read_frame_and_span(videos, toolfs_read):
    r = toolfs_read(videos / "clip.ts", "--select", "3.5")
    assert r.rc == 0
    assert "Frame shown: 00:03.520\n" in r.json["content"]
    assert mean_diff(png_of(r), ffmpeg_frame(videos / "clip.ts", 3.5)) <= 1.0
    r = toolfs_read(videos / "clip.mp4", "--select", "2-5")
    assert r.rc == 0
    assert ("contact sheet, row by row, each time drawn in its bottom-right corner): "
            "00:02.000, 00:02.333, 00:02.667, 00:03.000, 00:03.333, 00:03.667, 00:04.000, "
            "00:04.333, 00:04.667\n") in r.json["content"]
    r = toolfs_read(videos / "rotated.mp4", "--select", "1")
    assert png_of(r).size == (240, 320)


def test_read_picture_refused_keeps_metadata(videos, toolfs_read):
    r = toolfs_read(videos / "big.avi")
    assert r.rc == 0 and not r.json.get("images")
    assert r.json["content"].endswith(
        "[pictures: its pictures are larger than 8192x4320 pixels]\n")


def test_ass_tags_and_drawings_removed(videos, driver):
    """An ASS track as written: override blocks and a {\\p1} drawing are not text, \\N breaks a
    line and \\h is a space; times to the centisecond ASS has."""
    rc, out, err = run(driver, "subs", videos / "styled_ass.mkv")
    assert rc == 0, err
    assert out.decode() == "Subtitle track 1 (und, ass):\n" + "\n".join(gen_video.ASS_LINES) + "\n"


def test_subtitles_bounded(videos, driver):
    """A cue of 10,000 characters is cut at 4096 bytes; of 20 text tracks the first 16 are read."""
    rc, out, err = run(driver, "subs", videos / "long_cue.mkv")
    assert rc == 0, err
    head, line = out.decode().splitlines()
    assert head == "Subtitle track 1 (und, subrip):"
    assert line.startswith("[00:01.000 --> 00:02.000] ")
    # FFmpeg's SubRip decoder breaks the line every 4095 bytes (" / " here); the cut keeps 4096
    text = line[len("[00:01.000 --> 00:02.000] "):]
    assert text == "a" * 4095
    rc, out, err = run(driver, "subs", videos / "many_tracks.mkv")
    assert rc == 0, err
    headers = re.findall(r"^Subtitle track (\d+) ", out.decode(), re.M)
    assert headers == [str(i) for i in range(1, 17)]


def test_mount_gives_the_frame_and_the_sheet(build_dir, videos, tmp_path, toolfs_read):
    """Through the FUSE mount: clip.mp4:00:03.5.tool.json is the frame at 3.5 s and
    clip.mp4.tool.json the sheet, the same bytes as toolfs-read's."""
    from mount_util import mounted
    with mounted(build_dir / "fs" / "toolfs", videos, tmp_path / "mnt") as m:
        frame_doc = (m.path / "clip.mp4:00:03.5.tool.json").read_bytes()
        sheet_doc = (m.path / "subs.mp4.tool.json").read_bytes()
    assert frame_doc == toolfs_read("clip.mp4", "--select", "3.5", cwd=videos).out
    assert "Frame shown: 00:03.520\n" in json.loads(frame_doc)["content"]
    assert sheet_doc == toolfs_read("subs.mp4", cwd=videos).out
    assert json.loads(sheet_doc)["images"][0]["width"] == 960
