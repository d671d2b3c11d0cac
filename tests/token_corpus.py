# SPDX-License-Identifier: MIT
"""token_corpus.py - writes the mixed corpus the token estimate is checked on
(tests/readers/test_tokens.py, bench/tokens.py): generated source code in several languages, English
prose, JSON, minified JavaScript, CSV, CJK text and base64 noise, each from a fixed seed, so every
run checks the same bytes. Usage: python3 token_corpus.py DIR."""
import base64
import json
import random
import sys
from pathlib import Path

WORDS = ("the of and to in is that for it as was with be by on not he this are or his from at "
         "which but have an they you were her she there been one all we their has would when if "
         "so no will more can out up about into them some could time these two may then do first "
         "any my now such like our over man me even most made after also did many before must "
         "through back years where much your way well down should because each just those people "
         "how too little state good very make world still own see men work long get here between "
         "both life being under never day same another know while last might us great old year off "
         "come since against go came right used take three reading window budget protocol server "
         "client request result token estimate directory license agreement measurement").split()
IDENTS = ("count value buffer length index result status error name path options config request "
          "response handler context window line offset limit size total parser token reader "
          "writer stream cursor entry table node item list map key data text").split()


def prose(rng, n):
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 24))]
        words[0] = words[0].capitalize()
        s = " ".join(words)
        if rng.random() < 0.3:
            s = s.replace(" ", ", ", 1)
        out.append(s + ".")
        if rng.random() < 0.15:
            out.append("\n\n")
    return " ".join(out).replace(" \n\n ", "\n\n") + "\n"


def ident(rng):
    a, b = rng.choice(IDENTS), rng.choice(IDENTS)
    return rng.choice([a, f"{a}_{b}", a + b.capitalize(), f"{a}{rng.randint(0, 9)}"])


def c_code(rng, n):
    out = ["#include <stdio.h>\n#include <stdlib.h>\n\n"]
    for _ in range(n):
        name, x, y = ident(rng), ident(rng), ident(rng)
        out.append(f"/* {prose(rng, 1).strip()} */\nstatic int {name}(const char *{x}, size_t {y})\n{{\n"
                   f"\tint total = 0;\n\n\tfor (size_t i = 0; i < {y}; i++) {{\n"
                   f"\t\tif ({x}[i] == '\\n')\n\t\t\ttotal += {rng.randint(1, 999)};\n\t}}\n"
                   f"\treturn total > {rng.randint(0, 4096)} ? -1 : total;\n}}\n\n")
    return "".join(out)


def py_code(rng, n):
    out = ["import os\nimport sys\n\n\n"]
    for _ in range(n):
        name, x, y = ident(rng), ident(rng), ident(rng)
        out.append(f"def {name}({x}, {y}=None):\n    \"\"\"{prose(rng, 1).strip()}\"\"\"\n"
                   f"    result = []\n    for item in {x}:\n        if item.{y} is not None:\n"
                   f"            result.append((item, {rng.randint(0, 10000)}))\n"
                   f"    return {{'count': len(result), 'items': result}}\n\n\n")
    return "".join(out)


def js_code(rng, n):
    out = ["'use strict';\n\n"]
    for _ in range(n):
        name, x, y = ident(rng), ident(rng), ident(rng)
        out.append(f"// {prose(rng, 1).strip()}\nexport async function {name}({x}, {y} = {{}}) {{\n"
                   f"  const response = await fetch(`/api/{x}/${{{y}.id}}`);\n"
                   f"  if (!response.ok) throw new Error('failed: ' + response.status);\n"
                   f"  return (await response.json()).map((e) => e.{y} ?? {rng.randint(0, 99)});\n}}\n\n")
    return "".join(out)


def go_code(rng, n):
    out = ["package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n"]
    for _ in range(n):
        name, x = ident(rng), ident(rng)
        out.append(f"// {name} {prose(rng, 1).strip()}\nfunc {name}({x} []string) (int, error) {{\n"
                   f"\tn := 0\n\tfor _, s := range {x} {{\n\t\tif strings.HasPrefix(s, \"{x}\") {{\n"
                   f"\t\t\tn += {rng.randint(1, 500)}\n\t\t}}\n\t}}\n\tif n == 0 {{\n"
                   f"\t\treturn 0, fmt.Errorf(\"no {x}\")\n\t}}\n\treturn n, nil\n}}\n\n")
    return "".join(out)


def rust_code(rng, n):
    out = ["use std::collections::HashMap;\n\n"]
    for _ in range(n):
        name, x = ident(rng), ident(rng)
        out.append(f"/// {prose(rng, 1).strip()}\npub fn {name}({x}: &[u8]) -> Result<HashMap<String, usize>, String> {{\n"
                   f"    let mut map = HashMap::new();\n    for (i, b) in {x}.iter().enumerate() {{\n"
                   f"        *map.entry(format!(\"{{:02x}}\", b)).or_insert(0) += i % {rng.randint(2, 64)};\n"
                   f"    }}\n    Ok(map)\n}}\n\n")
    return "".join(out)


def json_text(rng, n):
    rows = [{"id": i, "name": ident(rng), "active": rng.random() < 0.5, "score": round(rng.random() * 100, 2),
             "tags": [rng.choice(IDENTS) for _ in range(rng.randint(0, 4))],
             "note": prose(rng, 1).strip()} for i in range(n)]
    return json.dumps(rows, indent=2) + "\n"


def minified_js(rng, n):
    parts = []
    for i in range(n):
        a, b = ident(rng), ident(rng)
        parts.append(f"function {a}{i}(e,t){{var n=e.{b}||{{}};return t?n[t]:Object.keys(n).map(function(r)"
                     f"{{return r+\"={i}\"}}).join(\"&\")}}var {chr(97 + i % 26)}{i}={a}{i}(window.{b},{rng.randint(0, 99)});")
    return "".join(parts) + "\n"


def csv_text(rng, n):
    rows = ["id,name,city,amount,date,status"]
    for i in range(n):
        rows.append(f"{i},{ident(rng)},{rng.choice(['Paris', 'Berlin', 'Lagos', 'Lima', 'Osaka'])},"
                    f"{rng.randint(0, 99999)}.{rng.randint(0, 99):02d},2026-{rng.randint(1, 12):02d}-"
                    f"{rng.randint(1, 28):02d},{rng.choice(['paid', 'open', 'void'])}")
    return "\n".join(rows) + "\n"


CJK_ZH = ("我们的 这个 一个 没有 时候 什么 知道 自己 因为 所以 已经 现在 可以 这样 问题 工作 文件 "
          "读取 服务器 结果 目录 程序 数据 系统 用户 时间 世界 中国 今天 学习 开始 需要").split()
CJK_JA = ("これは ファイル です 読み込み サーバー 結果 ディレクトリ の を に は が て した ます "
          "日本語 文章 東京 今日 時間 世界").split()


def cjk_text(rng, n, words, stop):
    out = []
    for _ in range(n):
        out.append("".join(rng.choice(words) for _ in range(rng.randint(5, 15))) + stop)
        if rng.random() < 0.2:
            out.append("\n")
    return "".join(out) + "\n"


def base64_noise(rng, n):
    raw = bytes(rng.getrandbits(8) for _ in range(n))
    text = base64.b64encode(raw).decode()
    return "\n".join(text[i:i + 76] for i in range(0, len(text), 76)) + "\n"


def corpus():
    """(name, text) pairs, each from its own seed."""
    makers = [
        ("code.c", lambda r: c_code(r, 60)), ("code.py", lambda r: py_code(r, 60)),
        ("code.js", lambda r: js_code(r, 60)), ("code.go", lambda r: go_code(r, 50)),
        ("code.rs", lambda r: rust_code(r, 50)), ("prose.txt", lambda r: prose(r, 300)),
        ("data.json", lambda r: json_text(r, 120)), ("bundle.min.js", lambda r: minified_js(r, 300)),
        ("table.csv", lambda r: csv_text(r, 800)),
        ("chinese.txt", lambda r: cjk_text(r, 200, CJK_ZH, "。")),
        ("japanese.txt", lambda r: cjk_text(r, 200, CJK_JA, "。")),
        ("noise.b64", lambda r: base64_noise(r, 20000)),
    ]
    return [(name, make(random.Random(i))) for i, (name, make) in enumerate(makers)]


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, text in corpus():
        (out / name).write_text(text, encoding="utf-8")
