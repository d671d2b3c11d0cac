# SPDX-License-Identifier: MIT
"""Legacy and BOM-less encodings through toolfs-read (docs/SPEC.md §3 "Text", issue 37 item 4):
text made at test time with Python's codecs, a few KB of prose and code each, read back and
compared exactly with the codec's own decoding (the oracle), and metadata.encoding checked."""
import re
import struct

import pytest

from test_text import cat_n, expect_text_ok, split_lines

JA_PROSE = [
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
    "何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。",
    "設定ファイルは C:\\Users\\山田\\AppData\\Roaming\\設定.ini にあります。",
    "ホームの ~/.config/エディタ/init.el と ~/bin/起動.sh も確認してください。",
    '  printf("合計: %d件\\n", count);  /* 改行は \\n、タブは \\t */',
    "  path = \"D:\\\\データ\\\\売上\\\\2024年.csv\";  // 区切りは円記号ではなく \\",
    "第①章から第⑳章まで、ⅠⅡⅢⅣⅤ の順に読む。№12 と ㈱ と ㍻、ⅰⅱⅲ と 髙島屋・﨑 も使う。",
    "東京都千代田区丸の内一丁目、電話番号は〇三の一二三四です。",
]
KO_PROSE = [
    "대한민국의 수도는 서울이며, 한국어는 한글로 적습니다.",
    "설정 파일은 C:\\사용자\\문서\\설정.ini 에 있고 홈 디렉터리는 ~/문서 입니다.",
    "모든 사람은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.",
    '  printf("합계: %d개\\n", count);  // 줄바꿈은 \\n 입니다',
    "오늘은 날씨가 맑고 바람이 시원하게 불어서 산책하기 좋은 날입니다.",
]
EL_PROSE = [
    "Η ελληνική γλώσσα είναι μία από τις αρχαιότερες γλώσσες της Ευρώπης.",
    "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.",
    "Το αρχείο ρυθμίσεων βρίσκεται στο C:\\ΠΡΟΓΡΑΜΜΑ\\ΡΥΘΜΙΣΕΙΣ.INI και στο ~/έγγραφα.",
    "Καλημέρα σας! Σήμερα ο καιρός είναι ωραίος και η θάλασσα ήρεμη.",
]
TR_PROSE = [
    "Pijamalı hasta yağız şoföre çabucak güvendi – “İstanbul” 5 € tutar…",
    "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar.",
    "Ayarlar C:\\Program Files\\Uygulama\\ayar.ini ve ~/belgeler içindedir.",
]
TH_PROSE = [
    "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า – “กว่าบรรดาฝูงสัตว์เดรัจฉาน” …",
    "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ",
    "ไฟล์ตั้งค่าอยู่ที่ C:\\โปรแกรม\\ตั้งค่า.ini และ ~/เอกสาร",
]
HE_PROSE = [
    "השפה העברית היא שפה שמית ממשפחת השפות האפרו-אסייתיות.",
    "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם.",
    "קובץ ההגדרות נמצא בתיקייה C:\\PROGRAM\\הגדרות.INI ובבית ~/מסמכים.",
    "שלום עולם! מה שלומך היום? מזג האוויר נאה והים שקט.",
]
EN_CODE = [
    "/* A small program: paths, escapes and a table. */",
    '#include <stdio.h>',
    'int main(void) { printf("C:\\\\temp\\\\out.txt ~ %s\\n", "done"); return 0; }',
]


def prose(lines, size=6000):
    """Numbered lines cycling through lines until about size characters."""
    out, n = [], 0
    while sum(len(x) + 1 for x in out) < size:
        out.append(f"{n + 1:04d} {lines[n % len(lines)]}")
        n += 1
    return "\n".join(out) + "\n"


# name -> (text, codec for Python, expected metadata.encoding)
LEGACY = {
    "sjis_code.txt": (prose(JA_PROSE), "cp932", "windows-31j"),
    "iso2022jp.txt": (prose(JA_PROSE[:6] + JA_PROSE[7:]), "iso2022_jp", "iso-2022-jp"),
    # half-width katakana (ESC ( I), which WHATWG's ISO-2022-JP decodes: Python's _ext codec
    "iso2022jp_kana.txt": (prose(JA_PROSE[:6] + ["ﾊﾝｶｸ ｶﾀｶﾅ の ﾃｷｽﾄ も読める。"]),
                           "iso2022_jp_ext", "iso-2022-jp"),
    "iso2022kr.txt": (prose(KO_PROSE), "iso2022_kr", "iso-2022-kr"),
    "johab.txt": (prose(KO_PROSE), "johab", "johab"),
    "cp737.txt": (prose(EL_PROSE), "cp737", "cp737"),
    "ibm862.txt": (prose(HE_PROSE), "cp862", "ibm862"),
    "cp869.txt": (prose(EL_PROSE), "cp869", "cp869"),
    # uchardet 0.0.7 names these GB18030 and windows-1252: the fallback's model overrules it.
    "johab_gb.txt": ("한국어 텍스트입니다. 파일 경로는 C:\\사용자\\문서 에 있습니다. 똠방각하 "
                     "펲시콜라\n" * 40, "johab", "johab"),
    "cp737_short.txt": (prose(EL_PROSE, 160), "cp737", "cp737"),
    # uchardet's ISO-8859-9 and TIS-620 read as WHATWG does, as their windows supersets: the
    # dashes, quotes, euro sign and ellipsis (0x80-0x9F) are not C1 controls or U+FFFD.
    "windows1254.txt": (prose(TR_PROSE), "cp1254", "windows-1254"),
    "windows874.txt": (prose(TH_PROSE), "cp874", "windows-874"),
    # What uchardet already knows stays as it was.
    "iso8859_7.txt": (prose(EL_PROSE), "iso8859_7", "iso-8859-7"),
    "windows1255.txt": (prose(HE_PROSE), "cp1255", "windows-1255"),
    "uhc.txt": (prose(KO_PROSE), "cp949", "uhc"),
}

# name -> (text, codec, expected metadata.encoding): no byte order mark.
UNICODE = {
    "utf16le.txt": (prose(EN_CODE + JA_PROSE), "utf-16-le", "utf-16le"),
    "utf16be.txt": (prose(EN_CODE + KO_PROSE), "utf-16-be", "utf-16be"),
    "utf32le.txt": (prose(EN_CODE + EL_PROSE), "utf-32-le", "utf-32le"),
    "utf32be.txt": (prose(EN_CODE + HE_PROSE), "utf-32-be", "utf-32be"),
    "utf16le_ja.txt": (prose(JA_PROSE), "utf-16-le", "utf-16le"),
}


def check_decoded(toolfs_read, path, data, codec, encoding):
    lines = split_lines(data.decode(codec))
    j = expect_text_ok(toolfs_read(path))
    assert j["metadata"]["encoding"] == encoding
    assert j["range"]["total"] == len(lines)
    assert j["content"] == cat_n(lines)
    assert "\ufffd" not in j["content"]


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_encoding(toolfs_read, tmp_path, name):
    text, codec, encoding = LEGACY[name]
    data = text.encode(codec)
    assert len(data) > (100 if "short" in name else 3000)
    (tmp_path / name).write_bytes(data)
    check_decoded(toolfs_read, tmp_path / name, data, codec, encoding)


def test_shift_jis_keeps_backslash_and_tilde(toolfs_read, tmp_path):
    # IBM extensions by their own codes (FA40-FC4B), which Python's encoder never writes
    data = prose(JA_PROSE).encode("cp932") + b"\xfa\x40\xfa\x55\xfb\xfc\xfa\xb1\n"
    assert data.decode("cp932").endswith("ⅰ￤髙﨑\n")
    (tmp_path / "paths.txt").write_bytes(data)
    check_decoded(toolfs_read, tmp_path / "paths.txt", data, "cp932", "windows-31j")
    j = expect_text_ok(toolfs_read(tmp_path / "paths.txt"))
    assert "C:\\Users\\山田\\AppData" in j["content"] and "~/.config" in j["content"]
    assert "¥" not in j["content"] and "‾" not in j["content"]
    assert "第①章" in j["content"] and "ⅠⅡⅢ" in j["content"] and "№12" in j["content"]


@pytest.mark.parametrize("name", sorted(UNICODE))
def test_unicode_without_bom(toolfs_read, tmp_path, name):
    text, codec, encoding = UNICODE[name]
    data = text.encode(codec)
    (tmp_path / name).write_bytes(data)
    check_decoded(toolfs_read, tmp_path / name, data, codec, encoding)


def test_nul_separated_and_numbers_stay_binary(toolfs_read, tmp_path):
    """NULs that do not alternate, or 16-bit numbers that decode to control characters, are not
    UTF-16: the file stays binary."""
    listing = b"\0".join(f"/usr/share/doc/package-{i}/README".encode() for i in range(300))
    numbers = b"".join(struct.pack("<H", i % 300) for i in range(4000))
    for name, data in (("find0.out", listing), ("samples.raw", numbers)):
        (tmp_path / name).write_bytes(data)
        r = toolfs_read(tmp_path / name)
        assert r.json["contentType"] != "text", name


def test_undecided_stays_utf8_with_replacement(toolfs_read, tmp_path):
    """Bytes no candidate reads as text keep today's answer: UTF-8 with U+FFFD."""
    data = ("plain ascii line\n" * 50).encode() + bytes(range(0x80, 0x100)) + b"\n"
    (tmp_path / "noise.txt").write_bytes(data)
    j = expect_text_ok(toolfs_read(tmp_path / "noise.txt"))
    assert j["range"]["total"] == 51
    assert re.search(r"^ +1\tplain ascii line$", j["content"], re.M)
