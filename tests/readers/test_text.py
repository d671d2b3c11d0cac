# SPDX-License-Identifier: MIT
"""The text and binary readers through toolfs-read, against independent oracles: cat -n, sed,
Python's codecs, file(1), hashlib."""
import hashlib
import json
import re
import subprocess

import pytest

import gen_text

MAX_OUTPUT = 100 * 1024
MARKER = re.compile(r" \[\.\.\. line truncated: (\d+) of (\d+) chars shown\]\n\Z")


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    out = tmp_path_factory.mktemp("text")
    gen_text.generate(out)
    return out


def cat_n(lines, first=1):
    """The cat -n rendering of lines (without terminators) numbered from first."""
    return "".join(f"{n:6d}\t{line}\n" for n, line in enumerate(lines, first))


def split_lines(text):
    """Universal newlines: "\\n", "\\r\\n" or "\\r" end a line; a last unterminated line counts."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def sel_of(next_name, name):
    """The selector of a next sibling name NAME:SEL.tool.json."""
    assert next_name.startswith(name + ":") and next_name.endswith(".tool.json"), next_name
    return next_name[len(name) + 1:-len(".tool.json")]


def expect_text_ok(r):
    assert r.rc == 0, r.out
    j = r.json
    assert j["success"] is True and j["contentType"] == "text"
    assert "error" not in j and "errorCode" not in j
    return j


# --- source files, byte for byte against cat -n -------------------------------------------


@pytest.mark.parametrize("name", ["src/stdio.h", "src/elf.h"])
def test_source_matches_cat_n(toolfs_read, fx, name):
    path = fx / name
    oracle = subprocess.run(f"cat -n '{path}' | head -2000", shell=True, check=True,
                            capture_output=True).stdout.replace(b"\r", b"")
    j = expect_text_ok(toolfs_read(path))
    assert j["content"].encode() == oracle
    total = int(subprocess.run(["wc", "-l", str(path)], capture_output=True,
                               text=True).stdout.split()[0])
    assert j["range"] == {"unit": "line", "start": 1, "end": min(total, 2000), "total": total}
    assert j["lineCount"] == min(total, 2000)
    assert j["mimeType"] == "text/x-c"
    assert j["metadata"]["encoding"] == "utf-8"
    assert j["metadata"]["lineEnding"] == "lf"
    assert j["metadata"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert j["metadata"]["size"] == path.stat().st_size
    assert "description" not in j["metadata"]
    if total <= 2000:
        assert j["truncated"] is False and "next" not in j
        assert j["shortResult"] == f"Read {total} lines (1-{total} of {total})"
    else:
        assert j["truncated"] is True
        assert j["next"] == "elf.h:2001-4000.tool.json"
        assert j["shortResult"] == f"Read 2000 lines (1-2000 of {total})"


def test_following_next_reproduces_file(toolfs_read, fx):
    for name in ["src/elf.h", "lines4500.txt"]:
        path = fx / name
        base = path.name
        lines = path.read_text().split("\n")[:-1]
        got, sel, reads = [], None, 0
        while True:
            r = toolfs_read(path, "--select", sel) if sel else toolfs_read(path)
            j = expect_text_ok(r)
            reads += 1
            start, end = j["range"]["start"], j["range"]["end"]
            assert start == len(got) + 1
            assert j["content"] == cat_n(lines[start - 1:end], start)
            assert j["lineCount"] == end - start + 1
            assert j["range"]["total"] == len(lines)
            assert j["truncated"] is True or (start == 1 and end == len(lines))
            got.extend(lines[start - 1:end])
            if "next" not in j:
                break
            sel = sel_of(j["next"], base)
            last = min(end + 2000, len(lines))  # the next window ends at the last line
            assert sel == (f"{end + 1}-{last}" if last > end + 1 else f"{end + 1}")
        assert got == lines
        assert reads == -(-len(lines) // 2000)


def test_multi_chunk_crlf_file(toolfs_read, fx):
    path = fx / "crlf5m.log"
    data = path.read_bytes()
    lines = data.decode().split("\r\n")[:-1]
    assert len(data) > 4 * 1024 * 1024
    j = expect_text_ok(toolfs_read(path, "--select", "89990-"))
    assert j["content"] == cat_n(lines[89989:], 89990)
    assert j["range"] == {"unit": "line", "start": 89990, "end": 90000, "total": 90000}
    assert j["metadata"]["lineEnding"] == "crlf"
    assert j["metadata"]["sha256"] == hashlib.sha256(data).hexdigest()
    # Lines around every 256 KiB boundary of the file.
    for boundary in range(256 * 1024, len(data), 256 * 1024):
        n = data[:boundary].count(b"\n") + 1
        j = expect_text_ok(toolfs_read(path, "--select", f"{n - 1}-{n + 1}"))
        assert j["content"] == cat_n(lines[n - 2:n + 1], n - 1)


# --- encodings ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(gen_text.ENCODED))
def test_encodings(toolfs_read, fx, name):
    _, _, text, encoding = gen_text.ENCODED[name]
    j = expect_text_ok(toolfs_read(fx / name))
    lines = split_lines(text)
    assert j["content"] == cat_n(lines)
    assert j["metadata"]["encoding"] == encoding
    assert j["metadata"]["lineEnding"] == "lf"
    assert j["range"]["total"] == len(lines)
    assert j["metadata"]["sha256"] == hashlib.sha256((fx / name).read_bytes()).hexdigest()


def test_invalid_utf8_becomes_replacement(toolfs_read, fx):
    data = gen_text.INVALID_UTF8
    assert len(data.split(b"bad")[0]) > 64 * 1024
    lines = split_lines(data.decode("utf-8", "replace"))
    assert len(lines) == 3004
    j = expect_text_ok(toolfs_read(fx / "invalid.txt", "--select", "2999-"))
    assert j["metadata"]["encoding"] == "utf-8"
    assert j["content"] == cat_n(lines[2998:], 2999)
    assert j["content"].count("\ufffd") == 9  # one per maximal invalid subpart
    assert j["range"]["total"] == 3004


# --- line endings and small files ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(gen_text.ENDINGS))
def test_line_endings(toolfs_read, fx, name):
    data, ending = gen_text.ENDINGS[name]
    j = expect_text_ok(toolfs_read(fx / name))
    lines = split_lines(data.decode())
    assert j["metadata"]["lineEnding"] == ending
    assert j["range"]["total"] == len(lines)
    assert "\r" not in j["content"]
    if not data:
        assert j["content"] == ""
        assert j["shortResult"] == "File is empty"
        assert j["range"] == {"unit": "line", "start": 0, "end": 0, "total": 0}
        assert j["lineCount"] == 0
        assert j["truncated"] is False
    else:
        assert j["content"] == cat_n(lines)
        assert j["shortResult"] == f"Read {len(lines)} {'line' if len(lines) == 1 else 'lines'}" \
                                   f" (1-{len(lines)} of {len(lines)})"
        assert j["lineCount"] == len(lines)
        assert j["truncated"] is False and "next" not in j


# (image.svg is an SVG image now: tests/readers/test_svg.py)
@pytest.mark.parametrize("name,mime", [("data.json", "application/json"),
                                       ("ansi.log", "text/plain")])
def test_text_kinds(toolfs_read, fx, name, mime):
    j = expect_text_ok(toolfs_read(fx / name))
    expected_mime = subprocess.run(["file", "-b", "--mime-type", str(fx / name)],
                                   capture_output=True, text=True).stdout.strip()
    assert j["mimeType"] == expected_mime == mime
    assert j["content"] == cat_n(split_lines((fx / name).read_text()))


# --- long lines and the byte cap ----------------------------------------------------------


def test_long_line_marker_and_chain(toolfs_read, fx):
    line = gen_text.long_line()
    path = fx / "longline.txt"
    pieces, sel, column = [], None, 1
    while True:
        r = toolfs_read(path, "--select", sel) if sel else toolfs_read(path)
        j = expect_text_ok(r)
        assert j["content"].startswith("     1\t")
        body = j["content"][len("     1\t"):]
        m = MARKER.search(body)
        remaining = len(line) - (column - 1)
        if remaining > 2000:
            assert m, body[-100:]
            assert (int(m.group(1)), int(m.group(2))) == (2000, remaining)
            piece = body[:m.start()]
            assert len(piece) == 2000
            assert j["next"] == f"longline.txt:1.{column + 2000}-.tool.json"
            assert j["truncated"] is True
        else:
            assert not m
            piece = body[:-1]
            assert "next" not in j
        assert piece == line[column - 1:column - 1 + 2000]
        assert j["range"] == {"unit": "line", "start": 1, "end": 1, "total": 1}
        assert j["shortResult"] == "Read 1 line (1-1 of 1)"
        pieces.append(piece)
        if "next" not in j:
            break
        sel = sel_of(j["next"], "longline.txt")
        column = int(sel[2:-1])
    assert "".join(pieces) == line
    assert len(pieces) == 25


def test_byte_cap_at_line_boundary(toolfs_read, fx):
    path = fx / "short200k.txt"
    lines = path.read_text().split("\n")[:-1]
    j = expect_text_ok(toolfs_read(path))
    content = j["content"].encode()
    assert len(content) <= MAX_OUTPUT
    shown = j["lineCount"]
    assert shown < 2000
    assert j["content"] == cat_n(lines[:shown])
    # The next line would not have fitted.
    assert len(content) + len(cat_n([lines[shown]], shown + 1).encode()) > MAX_OUTPUT
    assert j["truncated"] is True
    assert j["next"] == f"short200k.txt:{shown + 1}-{min(shown + 2000, len(lines))}.tool.json"
    assert j["range"] == {"unit": "line", "start": 1, "end": shown, "total": len(lines)}


def test_options_change_limits(toolfs_read, fx):
    path = fx / "lines4500.txt"
    lines = path.read_text().split("\n")[:-1]
    j = expect_text_ok(toolfs_read(path, "--max-lines", "10", "--select", "7-"))
    assert j["content"] == cat_n(lines[6:16], 7)
    assert j["next"] == "lines4500.txt:17-26.tool.json"
    j = expect_text_ok(toolfs_read(path, "--max-line-chars", "5", "--select", "30"))
    assert j["content"] == f"    30\t{lines[29][:5]} [... line truncated: 5 of {len(lines[29])} " \
                           "chars shown]\n"
    assert j["next"] == "lines4500.txt:31-2030.tool.json"


# --- selectors ----------------------------------------------------------------------------


def test_selectors(toolfs_read, fx):
    path = fx / "lines4500.txt"
    lines = path.read_text().split("\n")[:-1]
    sed = lambda a, b: subprocess.run(["sed", "-n", f"{a},{b}p", str(path)], capture_output=True,
                                      text=True).stdout.split("\n")[:-1]

    j = expect_text_ok(toolfs_read(path, "--select", "42"))
    assert j["content"] == cat_n(sed(42, 42), 42)
    assert j["range"] == {"unit": "line", "start": 42, "end": 42, "total": 4500}
    assert j["shortResult"] == "Read 1 line (42-42 of 4500)"
    assert j["truncated"] is True and j["next"] == "lines4500.txt:43-2042.tool.json"

    j = expect_text_ok(toolfs_read(path, "--select", "100-120"))
    assert j["content"] == cat_n(sed(100, 120), 100)
    assert j["lineCount"] == 21
    assert j["shortResult"] == "Read 21 lines (100-120 of 4500)"

    j = expect_text_ok(toolfs_read(path, "--select", "4000-"))
    assert j["content"] == cat_n(sed(4000, 4500), 4000)
    assert j["truncated"] is True and "next" not in j

    # A-B never shows more than max_lines lines.
    j = expect_text_ok(toolfs_read(path, "--select", "1-4500"))
    assert j["range"]["end"] == 2000
    assert j["next"] == "lines4500.txt:2001-4000.tool.json"

    j = expect_text_ok(toolfs_read(path, "--select", "4500"))
    assert j["content"] == cat_n(lines[4499:], 4500)
    assert "next" not in j

    j = expect_text_ok(toolfs_read(path, "--select", "10.6-"))
    assert j["content"] == cat_n([lines[9][5:]] + lines[10:2009], 10)
    assert j["shortResult"] == "Read 2000 lines (10-2009 of 4500)"
    assert j["next"] == "lines4500.txt:2010-4009.tool.json"


def test_column_selector_on_multibyte(toolfs_read, fx):
    j = expect_text_ok(toolfs_read(fx / "utf16le.txt", "--select", "1.8-"))
    first = split_lines(gen_text.MULTI)[0]
    assert j["content"].split("\n")[0] == f"     1\t{first[7:]}"


def test_out_of_range(toolfs_read, fx):
    r = toolfs_read(fx / "lines4500.txt", "--select", "5000")
    assert r.rc == 1
    j = r.json
    assert j["success"] is False and j["contentType"] == "text"
    assert j["errorCode"] == "out_of_range"
    assert j["error"] == "Line 5000 is past the end of the file (4500 lines)"
    assert j["content"] == j["error"]
    assert j["range"]["total"] == 4500
    assert j["metadata"]["lineEnding"] == "lf" and j["metadata"]["encoding"] == "utf-8"

    r = toolfs_read(fx / "lines4500.txt", "--select", "3.90-")
    j = r.json
    assert r.rc == 1 and j["errorCode"] == "out_of_range"
    line3 = (fx / "lines4500.txt").read_text().split("\n")[2]
    assert j["error"] == f"Column 90 is past the end of line 3 ({len(line3)} chars)"

    r = toolfs_read(fx / "empty.txt", "--select", "1")
    assert r.rc == 1 and r.json["errorCode"] == "out_of_range"
    assert r.json["range"]["total"] == 0


# --- binary -------------------------------------------------------------------------------


def file_b(path):
    return subprocess.run(["file", "-b", str(path)], capture_output=True, text=True,
                          check=True).stdout.rstrip("\n")


def size_text(n):
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


@pytest.mark.parametrize("name,mime", [("ls", "application/x-pie-executable"),
                                       ("data.gz", "application/gzip"),
                                       ("control.bin", None)])
def test_binary(toolfs_read, fx, name, mime):
    path = fx / name
    r = toolfs_read(path)
    assert r.rc == 1
    j = r.json
    assert j["success"] is False
    assert j["contentType"] == "binary" and j["errorCode"] == "binary"
    desc = file_b(path)
    assert j["metadata"]["description"] == desc
    short = ",".join(desc.split(",")[:2])
    assert j["error"] == f"Cannot display binary file: {path} ({short}, " \
                         f"{size_text(path.stat().st_size)})"
    assert j["content"] == j["error"]
    expected_mime = subprocess.run(["file", "-b", "--mime-type", str(path)], capture_output=True,
                                   text=True).stdout.strip()
    assert j["mimeType"] == expected_mime
    if mime:
        assert expected_mime == mime
    assert j["metadata"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "range" not in j and "lineCount" not in j


def test_control_bytes_sniff(fx):
    data = (fx / "control.bin").read_bytes()[:8192]
    control = sum(1 for b in data if (b < 0x20 and b not in b"\t\n\r\f\v\x1b") or b == 0x7F)
    assert b"\0" not in data and control * 10 > len(data) * 3


# --- memory: streaming a 2 GB file --------------------------------------------------------

BLOCK_LINES = 1000


def block_line(i):
    return f"{i:04d} quick fox {'#' * (i % 20)}"


@pytest.mark.slow
def test_two_gigabytes_stay_small(build_dir, tmp_path):
    block = ("\n".join(block_line(i) for i in range(BLOCK_LINES)) + "\n").encode()
    big = tmp_path / "big.log"
    repeats = (2 * 1000 ** 3) // len(block) + 1
    chunk = block * 64
    with open(big, "wb") as f:
        for _ in range(repeats // 64):
            f.write(chunk)
        for _ in range(repeats % 64):
            f.write(block)
    total = repeats * BLOCK_LINES
    assert big.stat().st_size >= 2 * 1000 ** 3
    binary = str(build_dir / "cli" / "toolfs-read")
    try:
        for sel, first in ((None, 1), (f"{total - 1500}-", total - 1500)):
            args = [binary] + (["--select", sel] if sel else []) + ["--", str(big)]
            proc = subprocess.run(["/usr/bin/time", "-v"] + args, capture_output=True,
                                  timeout=600)
            assert proc.returncode == 0, proc.stderr[-2000:]
            rss_kb = int(re.search(rb"Maximum resident set size \(kbytes\): (\d+)",
                                   proc.stderr).group(1))
            assert rss_kb < 64 * 1024, f"peak RSS {rss_kb} KB"
            j = json.loads(proc.stdout)
            last = min(first + 1999, total)
            assert j["range"] == {"unit": "line", "start": first, "end": last, "total": total}
            expected = cat_n([block_line((n - 1) % BLOCK_LINES) for n in range(first, last + 1)],
                             first)
            assert j["content"] == expected
            assert "sha256" not in j["metadata"]  # over 256 MiB
    finally:
        big.unlink()
