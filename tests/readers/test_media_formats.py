# SPDX-License-Identifier: MIT
"""Issue 37 item 3: every common audio container is audio, typed by content, on files made by
tests/fixtures/gen_audio_formats.py (Debian's ffmpeg CLI where it has the encoder, by hand where
not), ffprobe the oracle: WMA/ASF, WavPack, TTA, ADTS AAC, AC-3, E-AC-3, RF64 WAV, CAF, Sun AU,
Sony Wave64, Creative VOC, an MP3 behind junk, a ProTracker MOD, a DSF; and the containers FFmpeg
decodes but cannot write (Monkey's Audio, Musepack, TAK, Shorten, DSDIFF, S3M, XM, IT) typed
audio from their headers alone."""

import pytest

import gen_audio_formats
from test_media import expected_lines, ffprobe


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    out = tmp_path_factory.mktemp("audio_formats")
    gen_audio_formats.generate(out)
    return out


@pytest.mark.parametrize("name", sorted(gen_audio_formats.ENCODED) + gen_audio_formats.MADE)
def test_read_as_audio_as_ffprobe_reads_it(formats, toolfs_read, name):
    r = toolfs_read(name, cwd=formats)
    assert r.json.get("contentType") == "audio", r.json.get("error")
    assert r.json["success"], r.json.get("error")
    assert r.json["range"]["unit"] == "second"
    lines = r.json["content"].splitlines()
    expected = expected_lines(ffprobe(formats / name))
    assert lines[:len(expected)] == expected


@pytest.mark.parametrize("name", sorted(gen_audio_formats.HEADERS))
def test_headers_alone_are_audio(formats, toolfs_read, name):
    """No encoder makes these: their headers are audio; FFmpeg's answer on a header alone."""
    r = toolfs_read(name, cwd=formats)
    assert r.json.get("contentType") == "audio" or \
        r.json.get("error", "").startswith("Failed to read audio file: "), r.json


@pytest.mark.parametrize("text", [
    "MAC address table\n", "IMPM notes\n", "TTA1 report\n", "tBaK\n", "MPCK is a name\n",
    "MP+7 plus\n", "wvpk\n", "ajkg\n", "#!AMR shell\n", "Extended Module: a chapter of notes\n",
    "RF64 WAVE notes\n", "FRM8 and DSD notes\n",
])
def test_text_that_starts_like_a_signature_stays_text(tmp_path, toolfs_read, text):
    (tmp_path / "notes.txt").write_text(text * 3)
    assert toolfs_read("notes.txt", cwd=tmp_path).json["contentType"] == "text"
