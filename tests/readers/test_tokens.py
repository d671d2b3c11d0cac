# SPDX-License-Identifier: MIT
"""metadata.tokens (docs/SPEC.md §2) against independent oracles: js-tiktoken's exact o200k_base
count (pinned in tests/sdk) of the content toolfs-read returns, for every file of the generated
mixed corpus (tests/token_corpus.py) and of this repository; the providers' image formulas
written out here; and max_tokens (§4) cutting a text window where the estimate says."""
import json
import math
import pathlib
import statistics
import subprocess

import pytest

import token_corpus

REPO = pathlib.Path(__file__).resolve().parents[2]
SDK = REPO / "tests" / "sdk"
WHOLE = ["--max_lines", "1000000", "--max_output", "1G"]


def exact_tokens(texts: dict, tmp: pathlib.Path) -> dict:
    """{key: js-tiktoken's o200k_base count of text} for {key: text}."""
    if not (SDK / "node_modules" / "js-tiktoken").is_dir():
        pytest.fail("the SDKs are not installed: run (cd tests/sdk && npm ci), as tests/run does")
    files = {}
    for i, (key, text) in enumerate(texts.items()):
        files[key] = tmp / f"text{i}"
        files[key].write_text(text, encoding="utf-8")
    out = subprocess.run(["node", "count_tokens.mjs", *map(str, files.values())], cwd=SDK,
                         capture_output=True, check=True, timeout=600).stdout
    counts = json.loads(out)
    return {key: counts[str(path)] for key, path in files.items()}


def repo_files():
    """The repository's text files (git ls-files), but for test fixtures and tiny files."""
    names = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    for name in names:
        path = REPO / name
        if not name or name.startswith("tests/fixtures/") or not path.is_file():
            continue
        data = path.read_bytes()
        if 256 <= len(data) <= 1024 * 1024 and b"\0" not in data:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            yield path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("corpus")
    for name, text in token_corpus.corpus():
        (out / name).write_text(text, encoding="utf-8")
    return out


def test_content_tokens_within_10_percent_of_o200k_base(toolfs_read, corpus, tmp_path):
    paths = sorted(corpus.iterdir()) + list(repo_files())
    got, contents = {}, {}
    for path in paths:
        r = toolfs_read(path, *WHOLE)
        assert r.rc == 0, r.err
        if r.json["contentType"] != "text":
            continue
        got[path] = r.json["metadata"]["tokens"]["content"]
        contents[path] = r.json["content"]
        assert r.json["metadata"]["tokens"]["tokenizer"] == "o200k_base"
    exact = exact_tokens(contents, tmp_path)
    errors = {path: got[path] / exact[path] - 1 for path in got}
    assert len([p for p in errors if p.parent == corpus]) == len(token_corpus.corpus())
    worst = sorted(errors.items(), key=lambda kv: -abs(kv[1]))
    far = [f"{p}: {got[p]} vs {exact[p]} ({e:+.1%})" for p, e in worst if abs(e) > 0.10]
    assert not far, far
    size = [abs(e) for e in errors.values()]
    print(f"\n{len(size)} files: median {statistics.median(size):.1%}, "
          f"p95 {sorted(size)[int(len(size) * .95)]:.1%}, max {max(size):.1%}; "
          + ", ".join(f"{p.name} {errors[p]:+.1%}" for p in sorted(corpus.iterdir())))


def openai_tiles(w: int, h: int) -> int:
    """OpenAI's published high-detail price, written from its steps."""
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


@pytest.mark.parametrize("size", [(1, 1), (100, 100), (1000, 750), (2000, 400), (4000, 3000)])
def test_image_costs_by_each_providers_formula(toolfs_read, tmp_path, size):
    from PIL import Image
    path = tmp_path / "pic.png"
    Image.new("RGB", size, (10, 120, 200)).save(path)
    r = toolfs_read(path, "--image_max_dim", "10000")
    assert r.rc == 0, r.err
    [image] = r.json["images"]
    w, h = image["width"], image["height"]
    assert (w, h) == size
    assert r.json["metadata"]["tokens"]["images"] == [
        {"anthropic": math.ceil(w * h / 750), "openai": openai_tiles(w, h)}]
    assert r.json["metadata"]["tokens"]["content"] > 0  # the description costs too


def test_no_images_no_image_costs(toolfs_read):
    r = toolfs_read(REPO / "README.md")
    assert "images" not in r.json["metadata"]["tokens"]


def numbered(path: pathlib.Path) -> str:
    lines = path.read_text().split("\n")
    if lines[-1] == "":
        lines.pop()
    return "".join(f"{n:6d}\t{line}\n" for n, line in enumerate(lines, 1))


@pytest.mark.parametrize("budget", [500, 3000])
def test_max_tokens_cuts_before_the_line_that_passes_it(toolfs_read, corpus, tmp_path, budget):
    """Windows chained by next join to cat -n; each holds at most budget estimated tokens and
    ends before the line whose tokens would pass it; the exact count stays within 10%."""
    path = corpus / "code.py"
    want = numbered(path)
    start, pieces, estimates = 1, [], []
    while True:
        r = toolfs_read(path, "--max_tokens", budget, "--max_lines", "100000", "--select",
                        f"{start}-")
        assert r.rc == 0, r.err
        tokens = r.json["metadata"]["tokens"]["content"]
        assert tokens <= budget
        pieces.append(r.json["content"])
        estimates.append(tokens)
        rng = r.json["range"]
        if rng["end"] == rng["total"]:
            assert "next" not in r.json
            break
        assert r.json["truncated"] and r.json["next"] == f"code.py:{rng['end'] + 1}-{rng['total']}.tool.json"
        # one more line would have passed the budget
        more = toolfs_read(path, "--max_lines", "100000", "--select",
                           f"{start}-{rng['end'] + 1}").json
        assert more["metadata"]["tokens"]["content"] > budget
        start = rng["end"] + 1
    assert "".join(pieces) == want
    assert len(pieces) >= 2
    exact = exact_tokens(dict(enumerate(pieces)), tmp_path)
    for i, piece_tokens in enumerate(estimates):
        assert exact[i] <= budget * 1.1 + 5, (i, exact[i], piece_tokens)


def test_max_tokens_option_forms(toolfs_read):
    r = toolfs_read(REPO / "README.md", "--max-tokens", "off")
    assert r.rc == 0 and r.json["range"]["end"] == r.json["range"]["total"]
    r = toolfs_read(REPO / "README.md", "--max-tokens", "x")
    assert r.rc == 2 and "max-tokens" in r.err.replace("_", "-")


@pytest.mark.parametrize("budget", [2**64 // 1000 + 1, 2**64 - 1])
def test_max_tokens_past_what_thousandths_hold_is_no_cap(toolfs_read, tmp_path, budget):
    """The cap is kept in thousandths of a token: a budget whose thousandths pass 2^64 still caps
    nothing of a 20-line file (before the fix it wrapped to a fraction of a token: 1 line)."""
    path = tmp_path / "a.txt"
    lines = [f"line {n}" for n in range(1, 21)]
    path.write_text("".join(line + "\n" for line in lines))
    r = toolfs_read(path, "--max_tokens", budget)
    assert r.rc == 0, r.err
    assert r.json["content"] == "".join(f"{n:6d}\t{line}\n" for n, line in enumerate(lines, 1))
    assert r.json["range"]["end"] == 20 and not r.json["truncated"]


def test_mount_takes_max_tokens_as_the_cli_does(build_dir, toolfs_read, corpus, tmp_path):
    """-o max_tokens=N: the sibling is the bytes toolfs-read --max_tokens N prints."""
    import mount_util
    binary = build_dir / "fs" / "toolfs"
    if not binary.exists():
        pytest.skip("toolfs is not built")
    with mount_util.mounted(binary, corpus, tmp_path / "mnt", "-o", "max_tokens=700") as m:
        got = (m.path / "code.py.tool.json").read_bytes()
    want = toolfs_read(corpus / "code.py", "--max_tokens", "700")
    assert json.loads(got)["metadata"]["tokens"]["content"] <= 700
    assert json.loads(got)["range"] == want.json["range"]
    assert json.loads(got)["content"] == want.json["content"]
