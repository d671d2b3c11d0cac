# SPDX-License-Identifier: MIT
"""The PDF reader through toolfs-read, against poppler-utils (pdfinfo, pdftotext, pdftocairo),
Pillow and the fixture files' own bytes."""
import base64
import hashlib
import importlib.util
import io
import pathlib
import re
import subprocess

import pytest
from PIL import Image, ImageChops, ImageStat

TESTS = pathlib.Path(__file__).resolve().parents[1]
LONG_EDGE = 1568
MIB = 1024 * 1024
BIDI = "\u202a\u202b\u202c\u202d\u202e"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_pdfs", TESTS / "fixtures" / "gen_pdfs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_pdfs = _load_generator()


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdfs")
    gen_pdfs.generate(out)
    return out


@pytest.fixture(scope="module")
def read(toolfs_read, pdfs):
    """read(name, *args) runs toolfs-read on a fixture from inside the fixture folder, so that
    "path" is the bare name."""
    def run(name, *args):
        return toolfs_read(name, *args, cwd=pdfs)
    return run


# ---- oracles ----

def pdfinfo_pages(path) -> int:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    return int(re.search(r"^Pages:\s+(\d+)$", out.stdout, re.M).group(1))


def pdftotext_page(path, page: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"],
                          capture_output=True, check=True).stdout.decode("utf-8")


def words(text: str) -> list:
    """Whitespace-normalised words; bidi embedding marks count as spaces."""
    return re.sub(f"[{BIDI}]", " ", text).split()


def format_size(n: int) -> str:
    """The core's tr_format_size."""
    if n < 1024:
        return f"{n} bytes"
    if n < MIB:
        return f"{n / 1024:.1f} KB"
    return f"{n / MIB:.1f} MB"


def split_pages(content: str) -> dict:
    """{page: text} from "--- Page N ---" sections (a blank line separates sections)."""
    parts = re.split(r"(?:^|\n\n)--- Page (\d+) ---\n", content)
    assert parts[0] == "", f"content starts with a page header: {content[:80]!r}"
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def decode_image(entry) -> Image.Image:
    img = Image.open(io.BytesIO(base64.b64decode(entry["data"], validate=True)))
    img.load()
    assert {"image/png": "PNG", "image/jpeg": "JPEG"}[entry["mediaType"]] == img.format
    assert img.size == (entry["width"], entry["height"])
    assert max(img.size) == LONG_EDGE
    return img


def pdftocairo_render(path, page: int, outdir: pathlib.Path) -> Image.Image:
    base = outdir / f"{path.stem}-ref-{page}"
    subprocess.run(["pdftocairo", "-png", "-singlefile", "-scale-to", str(LONG_EDGE), "-f",
                    str(page), "-l", str(page), str(path), str(base)], check=True,
                   capture_output=True)
    return Image.open(f"{base}.png").convert("RGB")


def assert_pages_match_pdftotext(path, result, pages, exact=True):
    sections = split_pages(result["content"])
    assert list(sections) == list(pages)
    for page in pages:
        ours, oracle = words(sections[page]), words(pdftotext_page(path, page))
        if exact:
            assert ours == oracle, f"page {page}"
        else:
            assert sorted(ours) == sorted(oracle), f"page {page}"


# ---- default view ----

@pytest.mark.parametrize("name", ["one.pdf", "four.pdf", "eleven.pdf", "p150.pdf", "scan.pdf",
                                  "photo.pdf", "intl.pdf", "rotated.pdf", "owner-only.pdf",
                                  "junk-prefix.pdf", "truncated-xref.pdf", "four-no-ext"])
def test_page_count_matches_pdfinfo(read, pdfs, name):
    r = read(name)
    assert r.rc == 0, r.json
    assert r.json["contentType"] == "pdf"
    assert r.json["mimeType"] == "application/pdf"
    assert r.json["metadata"]["pageCount"] == pdfinfo_pages(pdfs / name)
    assert r.err == ""


def test_default_view_of_short_document(read, pdfs):
    path = pdfs / "four.pdf"
    r = read("four.pdf")
    j = r.json
    assert j["success"] and j["path"] == "four.pdf"
    assert j["truncated"] is False and "next" not in j
    assert j["range"] == {"unit": "page", "start": 1, "end": 4, "total": 4}
    assert j["shortResult"] == f"Read PDF: 4 of 4 pages (1-4), {format_size(path.stat().st_size)}"
    assert_pages_match_pdftotext(path, j, [1, 2, 3, 4])
    for n in range(1, 5):
        assert gen_pdfs.page_token(n) in split_pages(j["content"])[n]
    # The whole file is attached, byte for byte, and hashed.
    raw = path.read_bytes()
    assert [d["mediaType"] for d in j["documents"]] == ["application/pdf"]
    assert base64.b64decode(j["documents"][0]["data"], validate=True) == raw
    assert j["metadata"]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert j["metadata"]["size"] == len(raw)
    assert "images" not in j


def test_default_view_exact_layout(read):
    j = read("one.pdf").json
    assert j["content"] == ("--- Page 1 ---\n" + "\n".join(gen_pdfs.page_lines("one.pdf", 1, 1))
                            + "\n")


def test_default_view_of_eleven_pages(read, pdfs):
    j = read("eleven.pdf").json
    assert j["success"] and j["truncated"] is True
    assert j["range"] == {"unit": "page", "start": 1, "end": 10, "total": 11}
    assert j["next"] == "eleven.pdf:11.tool.json"
    assert j["shortResult"].startswith("Read PDF: 10 of 11 pages (1-10), ")
    assert_pages_match_pdftotext(pdfs / "eleven.pdf", j, range(1, 11))
    assert gen_pdfs.page_token(11) not in j["content"]
    # Within 100 pages: attached.
    assert base64.b64decode(j["documents"][0]["data"]) == (pdfs / "eleven.pdf").read_bytes()


def test_default_view_of_150_pages(read, pdfs):
    path = pdfs / "p150.pdf"
    j = read("p150.pdf").json
    assert j["range"] == {"unit": "page", "start": 1, "end": 10, "total": 150}
    assert j["next"] == "p150.pdf:11-20.tool.json"
    size = format_size(path.stat().st_size)
    assert j["shortResult"] == f"Read PDF: 10 of 150 pages (1-10), {size}"
    assert "documents" not in j, "over 100 pages: not attached"
    assert j["metadata"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert_pages_match_pdftotext(path, j, range(1, 11))


def test_following_next_covers_the_document(read, pdfs):
    first = read("eleven.pdf").json
    second = read("eleven.pdf", "--select", first["next"].split(":")[1].split(".tool")[0]).json
    assert second["range"] == {"unit": "page", "start": 11, "end": 11, "total": 11}
    assert second["truncated"] is True and "next" not in second
    pages = {**split_pages(first["content"]), **split_pages(second["content"])}
    assert sorted(pages) == list(range(1, 12))


def test_scanned_page_is_rendered_in_default_view(read, pdfs, tmp_path):
    path = pdfs / "scan.pdf"
    # ocr=off: the page as a reader without OCR shows it (test_ocr.py reads it with OCR)
    j = read("scan.pdf", "--ocr", "off").json
    sections = split_pages(j["content"])
    assert sections[2] == "[page 2: no text layer; see the page image]"
    assert words(pdftotext_page(path, 2)) == []
    assert_pages_match_pdftotext(path, {"content": j["content"].replace(
        "[page 2: no text layer; see the page image]", "")}, [1, 2, 3])
    # Only the page without text is rendered.
    assert [i["page"] for i in j["images"]] == [2]
    img = decode_image(j["images"][0]).convert("RGB")
    ref = pdftocairo_render(path, 2, tmp_path)
    assert img.size == ref.size
    assert max(ImageStat.Stat(ImageChops.difference(img, ref)).mean) < 2
    assert j["shortResult"].endswith(", 1 page image")


def test_arabic_and_cjk_text(read, pdfs):
    path = pdfs / "intl.pdf"
    j = read("intl.pdf").json
    assert j["success"] and j["metadata"]["pageCount"] == 2
    sections = split_pages(j["content"])
    assert gen_pdfs.CJK in sections[1]
    # poppler-glib gives right-to-left words in visual order inside left-to-right lines, where
    # pdftotext gives logical order: the same words, possibly reordered.
    assert_pages_match_pdftotext(path, j, [1, 2], exact=False)
    # Every line of the right-to-left page is there (poppler_page_get_text would lose some).
    page2 = words(sections[2])
    for line in gen_pdfs.ARABIC_LINES:
        for word in line.split():
            assert word in page2


# ---- page selectors ----

def test_single_page_selector(read, pdfs, tmp_path):
    path = pdfs / "four.pdf"
    j = read("four.pdf", "--select", "3").json
    assert j["success"] and j["truncated"] is True
    assert j["range"] == {"unit": "page", "start": 3, "end": 3, "total": 4}
    assert j["next"] == "four.pdf:4.tool.json"
    assert_pages_match_pdftotext(path, j, [3])
    assert [i["page"] for i in j["images"]] == [3]
    img = decode_image(j["images"][0])
    assert j["images"][0]["mediaType"] == "image/png"
    assert img.size == pdftocairo_render(path, 3, tmp_path).size == (1212, 1568)
    assert "documents" not in j
    assert j["metadata"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    size = format_size(path.stat().st_size)
    assert j["shortResult"] == f"Read PDF: 1 of 4 pages (3-3), {size}, 1 page image"


def test_range_selector(read, pdfs):
    j = read("eleven.pdf", "--select", "3-7").json
    assert j["range"] == {"unit": "page", "start": 3, "end": 7, "total": 11}
    assert j["next"] == "eleven.pdf:8-11.tool.json"
    assert_pages_match_pdftotext(pdfs / "eleven.pdf", j, range(3, 8))
    assert [i["page"] for i in j["images"]] == [3, 4, 5, 6, 7]
    for entry in j["images"]:
        decode_image(entry)


@pytest.mark.parametrize("sel,start,end,nxt", [
    ("12-", 12, 31, "p150.pdf:32-51.tool.json"),     # A- is A..A+max_pdf_pages-1
    ("1-50", 1, 20, "p150.pdf:21-40.tool.json"),     # at most 20 pages per result
    ("140-", 140, 150, None),
    ("150", 150, 150, None),
    ("145-400", 145, 150, None),
])
def test_selector_windows_on_150_pages(read, sel, start, end, nxt):
    j = read("p150.pdf", "--select", sel).json
    assert j["success"]
    assert j["range"] == {"unit": "page", "start": start, "end": end, "total": 150}
    assert j.get("next") == nxt
    assert j["truncated"] is True
    assert [i["page"] for i in j["images"]] == list(range(start, end + 1))
    assert list(split_pages(j["content"])) == list(range(start, end + 1))
    for n in range(start, end + 1):
        assert gen_pdfs.page_token(n) in j["content"]


def test_max_pdf_pages_option(read):
    j = read("eleven.pdf", "--max-pdf-pages", "3", "--select", "2-").json
    assert j["range"] == {"unit": "page", "start": 2, "end": 4, "total": 11}
    assert j["next"] == "eleven.pdf:5-7.tool.json"
    assert len(j["images"]) == 3


def test_selector_past_the_end(read):
    r = read("eleven.pdf", "--select", "40")
    assert r.rc == 1
    assert r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == "Page 40 is past the end of the document (11 pages)"
    assert r.json["contentType"] == "pdf"
    assert r.json["metadata"]["pageCount"] == 11


def test_column_selector_is_for_text_only(read):
    r = read("eleven.pdf", "--select", "3.5-")
    assert r.rc == 1 and r.json["errorCode"] == "out_of_range"
    assert "apply to text files only" in r.json["error"]


def test_rotated_pages_render_with_their_rotation(read, pdfs, tmp_path):
    path = pdfs / "rotated.pdf"
    info = subprocess.run(["pdfinfo", "-f", "1", "-l", "4", str(path)], capture_output=True,
                          text=True, check=True).stdout
    rotations = [int(r) for r in re.findall(r"^Page\s+\d+ rot:\s+(\d+)$", info, re.M)]
    assert rotations == [0, 90, 270, 0]
    j = read("rotated.pdf", "--select", "1-4").json
    assert_pages_match_pdftotext(path, j, [1, 2, 3, 4])
    sizes = []
    for entry in j["images"]:
        img = decode_image(entry).convert("RGB")
        ref = pdftocairo_render(path, entry["page"], tmp_path)
        assert img.size == ref.size
        # Same pixels as pdftocairo (poppler + cairo): a wrong rotation would differ hugely.
        assert max(ImageStat.Stat(ImageChops.difference(img, ref)).mean) < 2, entry["page"]
        sizes.append(img.size)
    assert sizes == [(1212, 1568), (1568, 1212), (1568, 1212), (1568, 1212)]


def test_photo_page_is_jpeg_within_the_base64_limit(read, pdfs):
    # OCR off: the photo's OCR may take 80% of max_render_ms, and the render's encoding is
    # what this test is about, not whether a loaded machine leaves it time.
    j = read("photo.pdf", "--select", "1", "--ocr", "off").json
    entry = j["images"][0]
    img = decode_image(entry)
    # As PNG this page would break the 5 MiB base64 limit ...
    png = io.BytesIO()
    img.convert("RGB").save(png, "PNG")
    assert len(png.getvalue()) * 4 / 3 > 5 * MIB
    # ... so it is sent as JPEG, within the limit.
    assert entry["mediaType"] == "image/jpeg"
    assert len(entry["data"]) <= 5 * MIB


def test_max_output_cuts_at_a_page_boundary(read, pdfs):
    j = read("eleven.pdf", "--max-output", "700").json
    assert len(j["content"].encode()) <= 700
    end = j["range"]["end"]
    assert 1 <= end < 10
    assert j["next"] == f"eleven.pdf:{end + 1}-{min(end + 10, 11)}.tool.json"
    assert_pages_match_pdftotext(pdfs / "eleven.pdf", j, range(1, end + 1))


def test_max_output_smaller_than_one_page(read):
    j = read("eleven.pdf", "--max-output", "100").json
    assert j["range"]["end"] == 1 and j["truncated"] is True
    assert j["next"] == "eleven.pdf:2-11.tool.json"
    assert re.search(r"\[\.\.\. page 1 text truncated: \d+ of \d+ bytes shown\]\n$", j["content"])


# ---- failures ----

def test_encrypted(read):
    for args in ([], ["--select", "1"]):
        r = read("encrypted.pdf", *args)
        assert r.rc == 1
        assert r.json["errorCode"] == "encrypted"
        assert r.json["error"] == "PDF is password-protected: encrypted.pdf"
        assert r.json["contentType"] == "pdf"
    assert r.err == ""


def test_owner_password_only_opens(read, pdfs):
    j = read("owner-only.pdf").json
    assert j["success"]
    assert_pages_match_pdftotext(pdfs / "owner-only.pdf", j, [1, 2, 3, 4])


@pytest.mark.parametrize("name", ["garbage.pdf", "text-named.pdf", "header-only.pdf",
                                  "truncated-half.pdf", "truncated-head.pdf", "empty.pdf"])
def test_corrupt(read, pdfs, name):
    oracle = subprocess.run(["pdfinfo", str(pdfs / name)], capture_output=True)
    assert oracle.returncode != 0, "pdfinfo cannot read it either"
    for args in ([], ["--select", "1"]):
        r = read(name, *args)
        assert r.rc == 1
        assert r.json["errorCode"] == "corrupt"
        assert r.json["contentType"] == "pdf"
        assert r.json["error"].startswith("Failed to parse PDF: ")
        assert r.err == "", "the core never prints (poppler's warnings are silenced)"
    if name == "empty.pdf":
        assert r.json["error"] == "Failed to parse PDF: the file is empty"
    if name in ("garbage.pdf", "text-named.pdf"):
        assert r.json["error"].endswith("(no %PDF- header in the first 1024 bytes)")
        assert r.json["mimeType"] != "application/pdf"


def test_repairable_truncation_reads(read, pdfs):
    path = pdfs / "truncated-xref.pdf"
    r = read("truncated-xref.pdf")
    assert r.rc == 0 and r.err == ""
    assert_pages_match_pdftotext(path, r.json, [1, 2, 3, 4])


def test_over_max_pdf_size_reads_pages_without_attaching(read, pdfs):
    path = pdfs / "photo.pdf"
    assert path.stat().st_size > MIB
    j = read("photo.pdf", "--max-pdf-size", "1M", "--ocr", "off").json
    assert j["success"] and j["metadata"]["pageCount"] == 1
    assert "documents" not in j
    # The page without a text layer is rendered as in any default view.
    assert [i["page"] for i in j["images"]] == [1]
    assert j["range"] == {"unit": "page", "start": 1, "end": 1, "total": 1}


def test_over_max_pdf_size_default_view_is_pages_1_to_10(read, pdfs):
    path = pdfs / "p150.pdf"
    j = read("p150.pdf", "--max-pdf-size", "64K").json
    assert j["success"] and j["metadata"]["pageCount"] == 150
    assert j["range"] == {"unit": "page", "start": 1, "end": 10, "total": 150}
    assert j["next"] == "p150.pdf:11-20.tool.json"
    assert "documents" not in j
    assert_pages_match_pdftotext(path, j, range(1, 11))


def test_script_quoting_the_header_is_not_a_pdf(read, pdfs):
    (pdfs / "make_pdf.py").write_text('#!/usr/bin/env python3\nHEADER = b"%PDF-1.4\\n"\n')
    j = read("make_pdf.py").json
    assert j["contentType"] == "text"
