# SPDX-License-Identifier: MIT
"""The Office reader through toolfs-read (docs/SPEC.md §3 "Office documents"): .docx rendered as lines and
windowed exactly like text, .xlsx sheets as pipe tables checked against openpyxl (data_only=True),
.pptx slides, legacy and ODF files, and hostile archives (bombs, entities, depth, truncation)."""
import base64
import datetime
import json
import pathlib
import re

import docx
import openpyxl
import pytest

from fixtures import gen_office as gen
from fixtures import gen_office_cases as cases

LINE = re.compile(r"^ {0,5}(\d+)\t(.*)$")


@pytest.fixture(scope="module")
def odir(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("office")
    gen.generate(out)
    return out


def read(toolfs_read, path, *args):
    r = toolfs_read(path, *args)
    assert r.json is not None, r.err
    return r.json


def lines(content: str) -> list:
    """The text of each cat -n line, checking the numbering is consecutive."""
    out = []
    for raw in content.split("\n")[:-1]:
        m = LINE.match(raw)
        assert m, raw
        if out:
            assert int(m.group(1)) == out[-1][0] + 1
        out.append((int(m.group(1)), m.group(2)))
    return out


# --- .docx ---

def test_docx_paragraphs_against_python_docx(toolfs_read, odir):
    res = read(toolfs_read, odir / "basic.docx")
    assert res["success"] and res["contentType"] == "document"
    assert res["mimeType"] == ("application/vnd.openxmlformats-officedocument."
                               "wordprocessingml.document")
    assert res["range"]["unit"] == "line"
    text = [t for _, t in lines(res["content"])]
    assert res["range"] == {"unit": "line", "start": 1, "end": len(text), "total": len(text)}
    prefixes = {"Title": "# ", "Heading 1": "# ", "Heading 2": "## ", "Heading 3": "### ",
                "List Bullet": "- ", "List Bullet 2": "  - ", "Normal": ""}
    numbered = 0
    for p in docx.Document(odir / "basic.docx").paragraphs:
        if not p.text.strip() or p.style.name not in prefixes and p.style.name != "List Number":
            continue
        if p.style.name == "List Number":
            numbered += 1
            want = f"{numbered}. {p.text}"
        else:
            want = prefixes[p.style.name] + p.text
        if p.text.startswith("Read the "):
            continue  # python-docx does not see hyperlink runs; checked below
        assert want in text, want
    assert "Read the documentation (https://example.com/docs?q=1) first." in text


def test_docx_table_and_picture(toolfs_read, odir):
    res = read(toolfs_read, odir / "basic.docx")
    text = [t for _, t in lines(res["content"])]
    table = docx.Document(odir / "basic.docx").tables[0]
    rows = ["| " + " | ".join(c.text.replace("|", "\\|") for c in row.cells) + " |"
            for row in table.rows]
    start = text.index(rows[0])
    assert text[start + 1] == "| --- | --- | --- |"
    assert text[start + 2:start + 2 + len(rows) - 1] == rows[1:]
    assert "[image: image1.png]" in text
    assert len(res["images"]) == 1
    img = res["images"][0]
    assert (img["mediaType"], img["width"], img["height"]) == ("image/png", 64, 48)
    assert base64.b64decode(img["data"]) == gen.png_bytes()
    assert "slide" not in img


def test_docx_tracked_changes_and_notes(toolfs_read, odir):
    res = read(toolfs_read, odir / "tracked.docx")
    text = [t for _, t in lines(res["content"])]
    assert "Price is fifty euros.[^1]" in text
    assert "forty" not in res["content"]
    assert res["metadata"]["trackedChanges"] == {"insertions": 1, "deletions": 1}
    assert text[-4:] == ["---", "[^1]: Source: the finance team.", "[^2]: Unaudited.",
                         "[^c0]: Ana: Please double-check."]
    assert "trackedChanges" not in read(toolfs_read, odir / "basic.docx")["metadata"]


def test_docx_windows_equal_the_text_reader(toolfs_read, odir, tmp_path):
    """The rendering read as a .txt file gives the same content, range, next for any selector."""
    full = []
    sel = None
    while True:
        args = ["--select", sel] if sel else []
        res = read(toolfs_read, odir / "long.docx", *args)
        full += [t for _, t in lines(res["content"])]
        if "next" not in res:
            break
        sel = re.match(r"long\.docx:(.+)\.tool\.json$", res["next"]).group(1)
    paragraphs = [p.text for p in docx.Document(odir / "long.docx").paragraphs]
    assert [t for t in full if t] == [p for p in paragraphs if p]
    txt = tmp_path / "long.docx"
    txt.write_text("\n".join(full) + "\n")
    for args in ([], ["--select", "2001-"], ["--select", "17"], ["--select", "5.3-"],
                 ["--max_output", "3000"], ["--max_lines", "7", "--select", "8990-"]):
        a = read(toolfs_read, odir / "long.docx", *args)
        b = read(toolfs_read, txt, *args)
        for key in ("content", "range", "lineCount", "truncated", "next", "shortResult"):
            assert a.get(key) == b.get(key), (args, key)
    past = read(toolfs_read, odir / "long.docx", "--select", "99999")
    assert past["errorCode"] == "out_of_range" and past["contentType"] == "document"


# --- .xlsx ---

def cell_text(value, number_format="General") -> str:
    """What the reader shows for a value as openpyxl reads it (data_only=True), General format
    unless the test gives the number format."""
    if isinstance(value, datetime.datetime) and "h" not in number_format:
        return value.date().isoformat()
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S") if value.second else value.strftime(
            "%Y-%m-%d %H:%M")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M")
    if isinstance(value, float):
        return "%.15G" % value
    return str(value).replace("|", "\\|")


# Number formats of basic.xlsx's formatted cells, as they must show.
FORMATTED = {"C2": "1.50", "C3": "0.67", "C4": "-1,234.50", "B3": "1,234,567", "F2": "25%",
             "F3": "12.5%", "F4": "100.00%", "D3": "2024-03-01 13:45:07"}


def sheet_rows(content: str, index: int) -> tuple:
    """(header line, {row: [cells]}) of sheet index in content."""
    block = content.split(f"--- Sheet {index}: ", 1)[1].split("\n--- Sheet ", 1)[0]
    head, *rest = block.split("\n")
    rows = {}
    for line in rest:
        if line.startswith("| ") and not line.startswith(("| row |", "| --- |")):
            cells = re.split(r"(?<!\\) \| ", line[2:-2])
            rows[int(cells[0].split()[0])] = cells[1:]
    return head, rows


def test_xlsx_values_against_openpyxl(toolfs_read, odir):
    res = read(toolfs_read, odir / "basic.xlsx")
    assert res["success"] and res["contentType"] == "spreadsheet"
    wb = openpyxl.load_workbook(odir / "basic.xlsx", data_only=True)
    meta = res["metadata"]["sheets"]
    assert [s["name"] for s in meta] == wb.sheetnames
    assert [s["range"] for s in meta] == [ws.dimensions for ws in wb.worksheets]
    assert [s.get("hidden", False) for s in meta] == [ws.sheet_state != "visible"
                                                      for ws in wb.worksheets]
    for index, ws in enumerate(wb.worksheets, 1):
        if ws.sheet_state != "visible":
            assert f"--- Sheet {index}: " not in res["content"]
            continue
        head, rows = sheet_rows(res["content"], index)
        assert head.startswith(f"{ws.title} ({ws.dimensions}")
        for row in ws.iter_rows():
            formatted = FORMATTED if index == 1 else {}
            want = [formatted.get(c.coordinate, cell_text(c.value, c.number_format))
                    for c in row]
            while want and want[-1] == "":
                want.pop()
            if not want:
                continue
            assert rows[row[0].row] == want, row[0].row


def test_xlsx_details(toolfs_read, odir):
    res = read(toolfs_read, odir / "basic.xlsx")
    head, rows = sheet_rows(res["content"], 1)
    assert head == "Data (A1:G6, 1 hidden column) ---"
    assert rows[2][6] == "4.5" and rows[4][6] == "#DIV/0!" and rows[4][3] == "08:30"
    assert "Merged cells (value in the first cell): A6:C6" in res["content"]
    assert res["range"] == {"unit": "sheet", "start": 1, "end": 3, "total": 3}
    assert res["truncated"] and "next" not in res  # the hidden sheet is left out
    hidden = read(toolfs_read, odir / "basic.xlsx", "--select", "2")
    assert hidden["content"].startswith("--- Sheet 2: Secret (A1:A1, hidden sheet) ---\n")
    assert "| 1 | hidden value |" in hidden["content"]
    assert hidden["next"] == "basic.xlsx:3-.tool.json"
    cut = read(toolfs_read, odir / "basic.xlsx", "--max_line_chars", "5", "--select", "1")
    assert sheet_rows(cut["content"], 1)[1][3][0] == "pear  [... cell truncated: 5 of 8 chars shown]"
    past = read(toolfs_read, odir / "basic.xlsx", "--select", "4")
    assert past["errorCode"] == "out_of_range"
    assert past["error"] == "Sheet 4 is past the end of the workbook (3 sheets)"


def test_xlsx_handmade_parts(toolfs_read, odir):
    res = read(toolfs_read, odir / "handmade.xlsx")
    ws = openpyxl.load_workbook(odir / "handmade.xlsx", data_only=True).active
    assert res["metadata"]["sheets"] == [{"name": "Hand made", "range": "B2:D5"}]
    _, rows = sheet_rows(res["content"], 1)
    assert rows[2] == [ws["B2"].value, "rich text", "inline & <ok>"]
    assert "PHONETIC" not in res["content"]
    assert rows[3] == ["X", "TRUE", "#N/A"]
    assert rows[4] == ["2024-03-01 12:00", ws["C4"].value.date().isoformat(),
                       ws["D4"].value.date().isoformat()]
    assert rows[5] == ["0.1", "1E+20", "-0.5"]


def test_xlsx_caps_leave_next_and_pages_join(toolfs_read, odir):
    wb = openpyxl.load_workbook(odir / "big.xlsx", data_only=True)
    want = {row[0].row: [cell_text(c.value) for c in row] for row in wb.active.iter_rows()}
    for args in ([], ["--max_lines", "700"], ["--max_output", "20K"]):
        got, sel, pages = {}, None, 0
        while True:
            res = read(toolfs_read, odir / "big.xlsx", *args, *(["--select", sel] if sel else []))
            assert len(res["content"].encode()) <= (20 * 1024 if "20K" in args else 100 * 1024)
            _, rows = sheet_rows(res["content"], 1)
            if "700" in args:
                assert len(rows) <= 700
            assert not set(rows) & set(got)
            got.update(rows)
            pages += 1
            if "next" not in res:
                break
            sel = re.match(r"big\.xlsx:(1\.\d+-)\.tool\.json$", res["next"]).group(1)
        assert pages > 1
        assert {r: [c for c in v] for r, v in got.items()} == \
            {r: v[:len(got[r])] for r, v in want.items()}


def test_xlsx_sheet_from_row(toolfs_read, odir):
    res = read(toolfs_read, odir / "basic.xlsx", "--select", "3.25-")
    head, rows = sheet_rows(res["content"], 3)
    assert head == "Revenue (A1:C30, from row 25) ---"
    assert sorted(rows) == list(range(25, 31))
    assert rows[25] == ["25", "250", "row 25"]


# --- .pptx ---

def test_pptx_slides(toolfs_read, odir):
    res = read(toolfs_read, odir / "deck.pptx")
    assert res["success"] and res["contentType"] == "presentation"
    assert res["range"] == {"unit": "slide", "start": 1, "end": 3, "total": 3}
    assert res["metadata"]["slideCount"] == 3
    c = res["content"]
    title, items = gen.DECK_SLIDES[0]
    assert c.startswith(f"--- Slide 1: {title} ---\n" + "".join(
        "  " * lvl + "- " + t + "\n" for lvl, t in items))
    assert "--- Slide 2: Numbers ---\n| Item | Cost |\n| --- | --- |\n| Ads | 1,200 |\n" in c
    assert "[image 1: image/png 120x80]\nNotes:\nMention the budget first.\n" in c
    assert "--- Slide 3: Backup (hidden slide) ---" in c
    assert [(i["slide"], i["width"], i["height"]) for i in res["images"]] == [(2, 120, 80)]
    one = read(toolfs_read, odir / "deck.pptx", "--select", "3")
    assert one["content"].startswith("--- Slide 3:") and "images" not in one
    assert one["range"] == {"unit": "slide", "start": 3, "end": 3, "total": 3}
    first = read(toolfs_read, odir / "deck.pptx", "--select", "1")
    assert first["next"] == "deck.pptx:2-.tool.json" and first["truncated"]
    past = read(toolfs_read, odir / "deck.pptx", "--select", "9")
    assert past["errorCode"] == "out_of_range"


def test_pptx_txt_names_the_slide_of_each_picture(toolfs_read, odir):
    """.tool.txt: the content, then a footer for the picture with its slide; never base64."""
    res = read(toolfs_read, odir / "deck.pptx")
    txt = toolfs_read(odir / "deck.pptx", "--format", "txt").out.decode()
    img = res["images"][0]
    assert txt == (res["content"] + "\n[image 1: image/png 120x80, slide 2, in "
                   "deck.pptx.tool.json or the MCP read tool]\n")
    assert img["data"][:40] not in txt


# --- .odp ---

def test_odp_slides(toolfs_read, odir):
    """Each draw:page is a slide shown as .pptx slides are: exact lines, range, pictures."""
    res = read(toolfs_read, odir / "slides.odp")
    assert res["success"] and res["contentType"] == "presentation"
    assert res["mimeType"] == "application/vnd.oasis.opendocument.presentation"
    assert res["range"] == {"unit": "slide", "start": 1, "end": 3, "total": 3}
    assert res["metadata"]["slideCount"] == 3
    assert not res["truncated"] and "next" not in res
    (r1, c1), (r2, c2) = gen.ODP_TABLE
    assert res["content"] == (
        "--- Slide 1: Quarterly review ---\n"
        + "".join("  " * lvl + "- " + t + "\n" for lvl, t in gen.ODP_ITEMS)
        + "\n--- Slide 2: Numbers ---\n"
        f"| {r1} | {c1} |\n| --- | --- |\n| {r2.replace('|', chr(92) + '|')} | {c2} |\n"
        "[image 1: image/png 90x60]\nNotes:\nMention the budget first.\n"
        "\n--- Slide 3: Backup (hidden slide) ---\nOld  numbers\n")
    assert [(i["slide"], i["width"], i["height"], i["mediaType"]) for i in res["images"]] == [
        (2, *gen.ODP_PICTURE, "image/png")]
    assert base64.b64decode(res["images"][0]["data"])[:8] == b"\x89PNG\r\n\x1a\n"


def test_odp_selectors(toolfs_read, odir):
    one = read(toolfs_read, odir / "slides.odp", "--select", "3")
    assert one["content"] == "--- Slide 3: Backup (hidden slide) ---\nOld  numbers\n"
    assert "images" not in one and one["truncated"]
    assert one["range"] == {"unit": "slide", "start": 3, "end": 3, "total": 3}
    first = read(toolfs_read, odir / "slides.odp", "--select", "1")
    assert first["next"] == "slides.odp:2-.tool.json" and first["truncated"]
    assert first["content"].startswith("--- Slide 1: Quarterly review ---\n- Growth\n")
    assert "images" not in first
    mid = read(toolfs_read, odir / "slides.odp", "--select", "2-")
    assert mid["range"] == {"unit": "slide", "start": 2, "end": 3, "total": 3}
    assert [i["slide"] for i in mid["images"]] == [2]
    span = read(toolfs_read, odir / "slides.odp", "--select", "1-2")
    assert span["content"].endswith("Notes:\nMention the budget first.\n")
    assert span["next"] == "slides.odp:3-.tool.json"
    r = toolfs_read(odir / "slides.odp", "--select", "9")
    assert r.rc == 1 and r.json["errorCode"] == "out_of_range"
    assert r.json["error"] == "Slide 9 is past the end of the presentation (3 slides)"


def test_odp_max_output_leaves_out_whole_slides_with_their_pictures(toolfs_read, odir):
    full = read(toolfs_read, odir / "slides.odp")["content"]
    slide1 = full[:full.index("\n--- Slide 2:")]
    res = read(toolfs_read, odir / "slides.odp", "--max_output", str(len(slide1) + 10))
    assert res["content"] == slide1 and "images" not in res
    assert res["range"] == {"unit": "slide", "start": 1, "end": 1, "total": 3}
    assert res["truncated"] and res["next"] == "slides.odp:2-.tool.json"
    cut = read(toolfs_read, odir / "slides.odp", "--max_output", "20")
    assert cut["content"] == "--- Slide 1: Quarter\n[slide 1 cut at max_output]\n"
    assert cut["next"] == "slides.odp:2-.tool.json"

def test_odp_attaches_at_most_20_pictures(toolfs_read, odir):
    res = read(toolfs_read, odir / "many.odp")
    assert res["range"] == {"unit": "slide", "start": 1, "end": 23, "total": 23}
    assert [i["slide"] for i in res["images"]] == list(range(1, 21))
    c = res["content"]
    assert "--- Slide 20: p20 ---\n[image 20: image/png 30x20]\n" in c
    assert ("--- Slide 21: p21 ---\n[picture a.png: not attached, 20 pictures at most per "
            "result]\n") in c
    assert c.endswith("\n--- Slide 23 ---\n") and "outside" not in c

def test_odp_txt_names_the_slide_of_each_picture(toolfs_read, odir):
    res = read(toolfs_read, odir / "slides.odp")
    txt = toolfs_read(odir / "slides.odp", "--format", "txt").out.decode()
    assert txt == (res["content"] + "\n[image 1: image/png 90x60, slide 2, in "
                   "slides.odp.tool.json or the MCP read tool]\n")


def test_odp_without_pages(toolfs_read, odir):
    res = read(toolfs_read, odir / "empty.odp")
    assert res["success"] and res["contentType"] == "presentation"
    assert res["content"] == "" and res["shortResult"] == "Presentation has no slides"
    assert res["metadata"]["slideCount"] == 0


def test_provider_formats_carry_office_results(toolfs_read, odir):
    tool = read(toolfs_read, odir / "deck.pptx")
    for fmt in ("anthropic", "openai", "mcp"):
        r = toolfs_read(odir / "deck.pptx", "--format", fmt)
        assert r.rc == 0, r.out
        blob = json.dumps(r.json)
        assert tool["images"][0]["data"] in blob
        assert json.dumps(tool["content"])[1:-1] in blob
    r = toolfs_read(odir / "basic.xlsx", "--format", "anthropic")
    assert r.json["content"][0]["text"] == read(toolfs_read, odir / "basic.xlsx")["content"]


# --- ODF ---

def test_odt_against_odfpy(toolfs_read, odir):
    from odf import teletype, text as odf_text
    from odf.opendocument import load
    res = read(toolfs_read, odir / "basic.odt")
    assert res["success"] and res["contentType"] == "document"
    assert res["mimeType"] == "application/vnd.oasis.opendocument.text"
    text = [t for _, t in lines(res["content"])]
    doc = load(str(odir / "basic.odt"))
    for h in doc.getElementsByType(odf_text.H):
        level = int(h.getAttribute("outlinelevel"))
        assert "#" * level + " " + teletype.extractText(h) in text
    assert text[text.index("- Fruit"):text.index("- Fruit") + 4] == [
        "- Fruit", "  - Apples", "  - Pears", "- Vegetables"]
    assert ["1. Wash", "2. Cut", "3. Serve"] == [t for t in text if t[:1].isdigit()]
    assert "| Apple \\| red | 52 |" in text
    assert "See the site (https://example.org/food) today.[^1]" in text
    assert text[-3:] == ["---", "[^1]: Prices vary.", "[^c0]: Eva: Looks good."]
    assert "DELETED WORDS" not in res["content"]
    assert res["metadata"]["trackedChanges"] == {"insertions": 0, "deletions": 1}


def test_ods_against_odfpy(toolfs_read, odir):
    from odf import table as odf_table, teletype, text as odf_text
    from odf.opendocument import load
    res = read(toolfs_read, odir / "basic.ods")
    assert res["success"] and res["contentType"] == "spreadsheet"
    doc = load(str(odir / "basic.ods"))
    tables = doc.spreadsheet.getElementsByType(odf_table.Table)
    meta = res["metadata"]["sheets"]
    assert [m["name"] for m in meta] == [t.getAttribute("name") for t in tables]
    assert [m.get("hidden", False) for m in meta] == [False, False, True]
    assert [m["range"] for m in meta] == ["A1:E7", "A1:B5", "A1:A1"]
    for index, t in enumerate(tables[:2], 1):
        _, rows = sheet_rows(res["content"], index)
        number = 1
        for tr in t.getElementsByType(odf_table.TableRow):
            repeat = int(tr.getAttribute("numberrowsrepeated") or 1)
            cells = []
            for tc in tr.childNodes:
                n = int(tc.getAttribute("numbercolumnsrepeated") or 1)
                shown = "\n".join(teletype.extractText(p) for p in
                                   tc.getElementsByType(odf_text.P))
                cells += [shown.replace("|", "\\|")] * min(n, 16384)
            while cells and cells[-1] == "":
                cells.pop()
            if cells:
                assert rows[number] == cells, number
            else:
                assert number not in rows
            number += repeat
    assert "Merged cells (value in the first cell): A7:B7" in res["content"]
    assert "Secret" not in res["content"] and res["truncated"] and "next" not in res
    hidden = read(toolfs_read, odir / "basic.ods", "--select", "3")
    assert hidden["content"].startswith("--- Sheet 3: Secret (A1:A1, hidden sheet) ---\n")
    part = read(toolfs_read, odir / "basic.ods", "--select", "2.4-", "--max_lines", "1")
    assert sheet_rows(part["content"], 2)[1] == {4: ["4", "line 4"]}
    assert part["next"] == "basic.ods:2.5-.tool.json"


# --- legacy, hostile ---

@pytest.mark.parametrize("name,code,words", [
    ("legacy.doc", "unsupported", "Word 97-2003 document (.doc); save it as .docx"),
    ("legacy.xls", "unsupported", "Excel 97-2003 workbook (.xls); save it as .xlsx"),
    ("legacy.ppt", "unsupported", "PowerPoint 97-2003 presentation (.ppt); save it as .pptx"),
    ("encrypted.docx", "encrypted", "password-protected"),
    ("broken.odp", "corrupt", "the XML part content.xml is malformed"),
    ("bomb.docx", "too_large", "a zip bomb"),
    ("bomb42.xlsx", "corrupt", "without the parts of a Word, Excel or PowerPoint file"),
    ("laughs.docx", "corrupt", "DOCTYPE or ENTITY declaration"),
    ("xxe.docx", "corrupt", "DOCTYPE or ENTITY declaration"),
    ("deep.docx", "corrupt", "nests elements deeper than 128 levels"),
    ("truncated.docx", "corrupt", "the zip archive is unreadable"),
    ("many.xlsx", "too_large", "100000 entries"),
    ("notoffice.docx", "corrupt", "no [Content_Types].xml"),
    ("missing.docx", "corrupt", "the part word/document.xml is missing"),
    ("drawing.vsdx", "unsupported", "an Open Packaging (OOXML) file, but not a Word"),
])
def test_unreadable_files(toolfs_read, odir, name, code, words):
    r = toolfs_read(odir / name, timeout=60)
    assert r.rc == 1, r.out
    assert r.json["errorCode"] == code
    assert words in r.json["error"]
    assert r.json["content"] == r.json["error"]
    assert "images" not in r.json


def test_entities_never_expand(toolfs_read, odir):
    secret = pathlib.Path("/etc/passwd").read_text().split("\n")[0]
    for name in ("xxe.docx", "laughs.docx"):
        for fmt in ("tool", "anthropic", "mcp"):
            out = toolfs_read(odir / name, "--format", fmt).out.decode()
            assert secret not in out and "lollollol" not in out


def test_max_office_size(toolfs_read, odir):
    r = toolfs_read(odir / "basic.docx", "--max_office_size", "10K")
    assert r.json["errorCode"] == "too_large"
    size = (odir / "basic.docx").stat().st_size
    assert r.json["error"] == f"Office file exceeds 10KB limit (actual: {size / 1024:.2f}KB)"


def test_plain_zip_stays_binary(toolfs_read, odir, tmp_path):
    plain = tmp_path / "archive.zip"
    plain.write_bytes((odir / "notoffice.docx").read_bytes())
    assert toolfs_read(plain).json["errorCode"] == "binary"
    renamed = tmp_path / "report.bin"
    renamed.write_bytes((odir / "basic.docx").read_bytes())
    assert toolfs_read(renamed).json["contentType"] == "document"  # by content, not name


# --- real-world shapes and hostile inputs (issue 24; fixtures: gen_office_cases.py) ---

@pytest.fixture(scope="module")
def cdir(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("office_cases")
    cases.generate(out)
    return out


def against_openpyxl(res: dict, path) -> None:
    """Every cell openpyxl reads (data_only=True) appears at its row and column letter."""
    wb = openpyxl.load_workbook(path, data_only=True)
    for ws in wb.worksheets:
        index = wb.sheetnames.index(ws.title) + 1
        head, rows = sheet_rows(res["content"], index)
        letters = head_letters(res["content"], index)
        for row in ws.iter_rows():
            for c in row:
                if c.value is None:
                    continue
                assert rows[c.row][letters.index(c.column_letter)] == cell_text(c.value), \
                    c.coordinate


def head_letters(content: str, index: int) -> list:
    block = content.split(f"--- Sheet {index}: ", 1)[1]
    line = next(l for l in block.split("\n") if l.startswith("| row |"))
    return line[2:-2].split(" | ")[1:]


@pytest.mark.parametrize("name", ["zip_mtime.xlsx", "zip_trailing.xlsx", "zip_stub.xlsx"])
def test_zip_that_zip_t_and_zipfile_read(toolfs_read, cdir, name):
    """Local headers that differ from the central directory, bytes after the end record or
    before the archive: zip -T, Python's zipfile and openpyxl read these; so does toolfs."""
    res = read(toolfs_read, cdir / name)
    assert res["success"], res["content"]
    against_openpyxl(res, cdir / name)


def test_strings_decode_x_escapes(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "escapes.xlsx")
    _, rows = sheet_rows(res["content"], 1)
    shown = [want for _, want in cases.ESCAPES]
    assert rows[1] == shown and rows[2] == shown
    ws = openpyxl.load_workbook(cdir / "escapes.xlsx", data_only=True).active
    assert rows[1][0] == ws["A1"].value  # openpyxl decodes only _x005F_


def test_inline_string_with_a_v_shows_the_inline_string(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "inline_v.xlsx")
    assert sheet_rows(res["content"], 1)[1] == {1: ["inline text"]}
    against_openpyxl(res, cdir / "inline_v.xlsx")


def test_empty_v_is_no_shared_string(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "empty_v.xlsx")
    assert sheet_rows(res["content"], 1)[1] == {1: ["", "second"]}
    assert "FIRST STRING" not in res["content"]
    against_openpyxl(res, cdir / "empty_v.xlsx")


def test_number_format_escapes_before_multibyte_characters(toolfs_read, cdir):
    r = toolfs_read(cdir / "rouble.xlsx")
    r.out.decode("utf-8")  # strict: valid UTF-8
    _, rows = sheet_rows(r.json["content"], 1)
    assert rows[1] == [shown for _, _, shown in cases.ROUBLE]


def test_main_part_typed_by_default_extension(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "default_type.xlsx")
    assert res["success"], res["content"]
    assert res["contentType"] == "spreadsheet"
    against_openpyxl(res, cdir / "default_type.xlsx")


def test_chartsheet_has_its_header_and_selector(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "chartsheet.xlsx")
    c = res["content"]
    assert c.index("--- Sheet 1: First") < c.index("--- Sheet 2: Chart (chart sheet) ---") \
        < c.index("--- Sheet 3: Third")
    assert sheet_rows(c, 1)[1] == {1: ["one"]}
    assert sheet_rows(c, 3)[1] == {1: ["three"]}
    against_openpyxl(res, cdir / "chartsheet.xlsx")
    third = read(toolfs_read, cdir / "chartsheet.xlsx", "--select", "3")
    assert third["content"].startswith("--- Sheet 3: Third (A1:A1) ---\n")
    assert [s["name"] for s in res["metadata"]["sheets"]] == ["First", "Chart", "Third"]


def test_dimension_is_not_trusted_over_the_cells(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "dimension.xlsx")
    against_openpyxl(res, cdir / "dimension.xlsx")
    head, rows = sheet_rows(res["content"], 1)
    assert head == "Rows only (A1:B4) ---" and rows[4] == ["v4", "w4"]
    head, rows = sheet_rows(res["content"], 2)
    assert head == "Partial (A1:C5) ---"
    assert rows == {1: ["a1", "", "c1"], 2: ["", "b2"], 5: ["a5"]}
    assert [s["range"] for s in res["metadata"]["sheets"]] == ["A1:B4", "A1:C5"]


def test_columns_up_to_xfd(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "wide.xlsx", "--max_output", "1M")
    assert res["success"] and not res["truncated"]
    against_openpyxl(res, cdir / "wide.xlsx")
    _, rows = sheet_rows(res["content"], 1)
    assert rows[2][16383] == "col 16384" and rows[1][1024] == "col 1025"
    cut = read(toolfs_read, cdir / "wide.xlsx")  # the default 100 KiB cannot hold both rows
    assert cut["truncated"] and cut["next"] == "wide.xlsx:1.2-.tool.json"
    rest = read(toolfs_read, cdir / "wide.xlsx", "--select", "1.2-")
    assert sheet_rows(rest["content"], 1)[1][2][16383] == "col 16384"


def test_rows_up_to_1048576(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "far_row.xlsx")
    head, rows = sheet_rows(res["content"], 1)
    assert head == "Far (A1:A1048576) ---"
    assert rows == {1: ["top"], 1048576: ["last row"]}
    assert "past the end" not in res["content"]
    assert "(1 row past row 1048576 left out)" in res["content"]


def test_big_shared_string_is_read_and_cut(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "big_string.xlsx")
    assert res["success"], res["content"]
    _, rows = sheet_rows(res["content"], 1)
    total = cases.BIG_STRING_CHARS
    assert rows[1][0].endswith(f" [... cell truncated: 2000 of {total} chars shown]")
    assert rows[1][1] == "small"


def test_ods_selector_inside_repeated_rows(toolfs_read, cdir):
    for start in (2, 4, 6):
        res = read(toolfs_read, cdir / "repeated.ods", "--select", f"1.{start}-")
        _, rows = sheet_rows(res["content"], 1)
        assert rows == {**{r: ["same", "7"] for r in range(start, 7)}, 7: ["tail", "y"]}
    one = read(toolfs_read, cdir / "repeated.ods", "--select", "1.3-", "--max_lines", "1")
    assert sheet_rows(one["content"], 1)[1] == {3: ["same", "7"]}
    assert one["next"] == "repeated.ods:1.4-.tool.json"


def test_encrypted_odf_is_encrypted(toolfs_read, cdir):
    r = toolfs_read(cdir / "encrypted.odt")
    assert r.rc == 1 and r.json["errorCode"] == "encrypted", r.json["content"]
    assert "password-protected" in r.json["error"]


@pytest.mark.parametrize("name,marker", [("break_heading.docx", "# "),
                                         ("break_heading.odt", "## ")])
def test_heading_starting_with_a_line_break(toolfs_read, cdir, name, marker):
    text = [t for _, t in lines(read(toolfs_read, cdir / name)["content"])]
    assert text[0] == marker + "Broken heading"
    assert "Body text." in text


def test_odt_internal_links_are_not_urls(toolfs_read, cdir):
    text = [t for _, t in lines(read(toolfs_read, cdir / "bookmark.odt")["content"])]
    assert "See Introduction and the table and the site (https://example.org/)." in text


def test_docx_text_boxes_in_order(toolfs_read, cdir):
    text = [t for _, t in lines(read(toolfs_read, cdir / "textbox.docx")["content"])]
    assert [t for t in text if t] == ["Before the box.", "Box first line", "Box second line",
                                      "Anchor paragraph.", "| Cell text |", "| --- |",
                                      "After the box."]


def test_headers_alone_stop_at_max_output(toolfs_read, cdir):
    """300 sheets without values, each a 16,384-column header: cut at max_output with a next."""
    res = read(toolfs_read, cdir / "wide_sheets.xlsx")
    assert len(res["content"].encode()) < 100 * 1024 + 256 * 1024
    assert res["truncated"] and res["next"] == "wide_sheets.xlsx:2.1-.tool.json"
    assert res["range"] == {"unit": "sheet", "start": 1, "end": 1, "total": 300}


def test_ods_columns_up_to_xfd(toolfs_read, cdir):
    res = read(toolfs_read, cdir / "wide.ods", "--max_output", "1M")
    head, rows = sheet_rows(res["content"], 1)
    assert head == "Wide (A1:XFD1) ---"
    assert (rows[1][0], rows[1][1024], rows[1][16383]) == ("first", "col 1025", "col 16384")
