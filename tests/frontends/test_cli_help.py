# SPDX-License-Identifier: MIT
"""--help and --version of toolfs and toolfs-read, the manual pages of docs/man, and what
`meson install` lays out. The options and their defaults are read from docs/SPEC.md §4 and the
table include/tr_options.def, the version from `meson introspect`: never from the binaries."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MAN_DIR = REPO / "docs" / "man"
PAGES = ["toolfs.1", "toolfs-read.1", "toolfs-mcp.1", "toolfs.7"]


def spec_options() -> dict:
    """{name: default} from the options paragraph of docs/SPEC.md §4 (a flag's default is off)."""
    spec = (REPO / "docs" / "SPEC.md").read_text()
    para = spec[spec.index("Options (`-o` for the daemon"):]
    para = para[:para.index("\n\n")]
    options = {}
    for name, default in re.findall(r"`([a-z_0-9]+)(?:=[^`]*)?`(?:\s+\(([^)]+)\))?", para):
        options[name] = default or "off"
    return options


def table_rows() -> dict:
    """{name: fronts} of the option table include/tr_options.def (ALL, MOUNT or MCP)."""
    table = (REPO / "include" / "tr_options.def").read_text()
    return dict(re.findall(r"^TR_OPTION\((\w+), \w+, [^,]+, (?:SAME|MCP\([^)]*\)), (\w+),",
                           table, re.M))


def mount_rows() -> dict:
    """{name: (value, default)} of the daemon's own options, the TR_MOUNT_OPTION rows of
    include/tr_options.def (value None when the option takes none)."""
    table = (REPO / "include" / "tr_options.def").read_text()
    rows = re.findall(r'^TR_MOUNT_OPTION\((\w+), (NULL|"[^"]*"), "([^"]*)",', table, re.M)
    return {name: (None if value == "NULL" else value.strip('"'), default)
            for name, value, default in rows}


def header_fields() -> dict:
    """{name: fronts} of every option: the fields of struct tr_options are the table's rows."""
    return table_rows()


def mount_only() -> set:
    return {name for name, fronts in header_fields().items() if fronts == "MOUNT"}


def mcp_only() -> set:
    return {name for name, fronts in header_fields().items() if fronts == "MCP"}


def project_version(build_dir) -> str:
    meson = shutil.which("meson") or "/usr/bin/meson"
    out = subprocess.run([meson, "introspect", "--projectinfo", str(build_dir)],
                         capture_output=True, check=True).stdout
    return json.loads(out)["version"]


FOLDERS = {"toolfs": "fs", "toolfs-read": "cli", "toolfs-mcp": "mcp"}


def binary(build_dir, name):
    path = build_dir / FOLDERS[name] / name
    if not path.exists():
        pytest.skip(f"{name} is not built")
    return path


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, timeout=30)


def test_the_two_oracles_agree():
    assert set(spec_options()) == set(header_fields())
    assert mount_only() == {"cache_size", "max_open_memory", "symlinks", "hide_siblings"}


@pytest.mark.parametrize("name", ["toolfs", "toolfs-read"])
def test_help_lists_every_option_with_its_default(build_dir, name):
    proc = run(binary(build_dir, name), "--help")
    assert proc.returncode == 0 and proc.stderr == b""
    assert run(binary(build_dir, name), "-h").stdout == proc.stdout
    text = proc.stdout.decode()
    assert text.startswith(f"Usage: {name} ")
    lines = text.splitlines()
    for option, default in spec_options().items():
        if name == "toolfs" and option in mcp_only():
            assert not re.search(rf"^  {option}[= ]", text, re.M)
            continue
        prefix = f"  {option}" if name == "toolfs" else f"  --{option}"
        row = [line for line in lines if re.match(re.escape(prefix) + r"[= ]", line)]
        assert len(row) == 1, f"{option} in {name} --help"
        if name == "toolfs-read" and option in mount_only() | mcp_only():
            assert row[0].endswith(" option, ignored here")
        else:
            assert row[0].endswith(f"(default: {default})"), row[0]
    for flag in (["-f", "-d", "-s", "-o OPT", "allow_other"] if name == "toolfs"
                 else ["--select SEL", "--format FMT"]):
        assert f"  {flag}" in text
    status = text[text.index("\nExit status:\n"):]
    assert [line.split()[0] for line in status.splitlines()[2:5]] == ["0", "1", "2"]


def test_daemon_options_are_documented_from_the_table(build_dir):
    """Each TR_MOUNT_OPTION row is a row of toolfs --help, a paragraph of toolfs(1) and an item
    of SPEC.md §4's daemon-only sentence, each with the row's default; toolfs-read and
    toolfs-mcp do not take it."""
    rows = mount_rows()
    assert "allow_other" in rows and "cache" in rows, rows
    help_text = run(binary(build_dir, "toolfs"), "--help").stdout.decode()
    man = man_text("toolfs.1")
    spec = (REPO / "docs" / "SPEC.md").read_text()
    daemon = spec[spec.index("Daemon-only options (`-o`):"):]
    daemon = " ".join(daemon[:daemon.index("\n\n")].split())
    for name, (value, default) in rows.items():
        tag = name + (f"={value}" if value else "")
        block = re.search(rf"^  {re.escape(tag)} .*\n(?: {{28}}.*\n)*", help_text, re.M)
        assert block and f"(default: {default})" in " ".join(block[0].split()), tag
        man_tag = (f".BR {name}=" + value.replace("|", " | ") if value and "|" in value
                   else f".BI {name}= {value}" if value else f".B {name}")
        para = man[man.index(f".TP\n{man_tag}\n"):]
        para = para[:para.index("\n.TP\n") if "\n.TP\n" in para else para.index("\n.PP\n")]
        assert f"(default: {default})" in " ".join(para.split()), name
        assert f"`{tag}` ({default})" in daemon, name
    for front in ("toolfs-read", "toolfs-mcp"):
        for name in rows:
            proc = run(binary(build_dir, front), f"--{name}", "x", "/nonexistent")
            assert proc.returncode == 2 and b"unknown option" in proc.stderr, (front, name)


def test_daemon_options_parse_their_values(build_dir, tmp_path):
    """Every value a TR_MOUNT_OPTION row names (an alternative of "a|b", a number for "N") is
    taken, so toolfs goes on to refuse the missing SOURCE (exit 1); a value it does not name is a
    usage error (exit 2) naming the item."""
    toolfs = binary(build_dir, "toolfs")
    missing = tmp_path / "no-such-source"
    for name, (value, _) in mount_rows().items():
        good = ([f"{name}={v}" for v in value.split("|")] if value and "|" in value
                else [f"{name}=7"] if value == "N" else [] if value else [name])
        for item in good:
            proc = run(toolfs, "-o", item, missing, tmp_path)
            assert proc.returncode == 1, (item, proc.stderr)
            assert f"source {missing}" in proc.stderr.decode(), (item, proc.stderr)
        if value:
            for item in (f"{name}=bogus", f"{name}=-1", name):
                proc = run(toolfs, "-o", item, missing, tmp_path)
                assert proc.returncode == 2, (item, proc.stderr)
                assert f"invalid -o {item}" in proc.stderr.decode(), (item, proc.stderr)


def test_toolfs_mcp_help_names_every_reader_option(build_dir):
    """toolfs-mcp is written elsewhere: its help layout is its own, its contract is not."""
    proc = run(binary(build_dir, "toolfs-mcp"), "--help")
    assert proc.returncode == 0
    for option in set(spec_options()) - mount_only():
        assert option in proc.stdout.decode()


@pytest.mark.parametrize("name", ["toolfs", "toolfs-read", "toolfs-mcp"])
@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_is_the_project_version(build_dir, name, flag):
    proc = run(binary(build_dir, name), flag)
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout == f"{name} {project_version(build_dir)}\n".encode()


@pytest.mark.parametrize("name", ["toolfs", "toolfs-read"])
def test_usage_errors_still_exit_2(build_dir, name):
    proc = run(binary(build_dir, name), "--no-such-option")
    assert proc.returncode == 2 and proc.stdout == b""
    assert f"Try '{name} --help'." in proc.stderr.decode()


def test_debian_changelog_has_the_project_version(build_dir):
    first = (REPO / "debian" / "changelog").read_text().splitlines()[0]
    assert re.match(r"toolfs \(([^)]+)\)", first).group(1) == project_version(build_dir)


@pytest.mark.parametrize("page", PAGES)
def test_man_page_has_no_warnings(page):
    if not shutil.which("groff") or not shutil.which("man"):
        pytest.skip("groff and man are needed (Debian packages groff-base and man-db)")
    source = MAN_DIR / f"{page}.in"
    # -ww: every warning, undefined macros and registers too (-wall leaves those out).
    groff = run("groff", "-z", "-ww", "-man", source)
    assert groff.returncode == 0 and groff.stderr == b"", groff.stderr.decode()
    man = subprocess.run(["man", "--warnings=w", "-l", str(source)], capture_output=True,
                         env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING=""),
                         timeout=30)
    assert man.returncode == 0 and man.stderr == b"", man.stderr.decode()
    title, section = page.rsplit(".", 1)
    assert man.stdout.decode().startswith(f"{title.upper()}({section})")


@pytest.mark.parametrize("page", PAGES)
def test_man_font_macros_glue_no_words(page):
    """An alternating font macro (.BR, .IB, ...) joins its arguments without spaces, so prose
    after its second argument runs together with no warning from groff: toolfs(7) rendered
    "--- OCR ---);aword-processingdocumentMarkdown-like..." (issue 38). Two arguments meeting
    letter to letter are words glued, unless both are one letter (".IB W x H", meant)."""
    glued = []
    for number, line in enumerate((MAN_DIR / f"{page}.in").read_text().splitlines(), 1):
        macro = re.match(r"\.(BR|BI|IB|IR|RB|RI)\s+(.*)", line)
        if not macro:
            continue
        args = re.findall(r'"[^"]*"|\S+', macro.group(2))
        for left, right in zip(args, args[1:]):
            left, right = left.strip('"'), right.strip('"')
            if left[-1:].isalnum() and right[:1].isalnum() and max(len(left), len(right)) > 1:
                glued.append(f"{page}.in:{number}: {line}")
                break
    assert glued == []


def man_option_paragraph(page, option) -> str:
    """The rendered text of OPTION's paragraph in docs/man/PAGE.in, words joined by spaces."""
    text = subprocess.run(["man", "-l", str(MAN_DIR / f"{page}.in")], capture_output=True,
                          check=True, env=dict(os.environ, MANWIDTH="1000"),
                          timeout=30).stdout.decode()
    para = re.search(rf"^ +{re.escape(option)}\b.*\n((?: {{14,}}.*\n|\n)*?)(?= {{7}}\S)", text,
                     re.M)
    assert para, (page, option)
    return " ".join(para[0].split())


def test_toolfs_read_man_page_gives_every_format_and_selector_kind(build_dir):
    """toolfs-read(1) drifted from --help (issue 38): --format without txt, --select without
    times, sheets or slides. Every format of include/tr_results.def, and every
    kind of selection --help names, is in the man page's paragraph, and --help names them too."""
    formats = results_lists()["TR_OUTPUT_FORMAT"]
    assert "txt" in formats and len(formats) >= 5
    fmt = man_option_paragraph("toolfs-read.1", "--format")
    help_text = " ".join(run(binary(build_dir, "toolfs-read"), "--help").stdout.decode().split())
    for name in formats:
        assert re.search(rf"\b{name}\b", fmt), name
        assert re.search(rf"--format FMT .*\b{name}\b", help_text), name
    sel = man_option_paragraph("toolfs-read.1", "--select")
    for kind in ("lines", "cells", "pages", "sheets", "slides", "T1-T2", "MM:SS", "HH:MM:SS",
                 "P@WxH+X+Y", "A.C-"):
        assert kind in sel, kind


def test_toolfs_7_gives_every_key_metadata_key_and_range_unit():
    """toolfs(7) drifted from the result (issue 38): its keys lacked `audio`, its metadata list
    tokens, region and ocr, its range units `second`. Every property of
    docs/toolresult.schema.json and of its metadata has a paragraph or a mention, and every
    unit of include/tr_results.def is in the range paragraph."""
    schema = json.loads((REPO / "docs" / "toolresult.schema.json").read_text())
    source = (MAN_DIR / "toolfs.7.in").read_text()
    for key in schema["properties"]:
        assert re.search(rf"^\.TP\n\.BR? (?:.*\W)?{key}(?:\W.*)?$", source, re.M), key
    metadata = man_option_paragraph("toolfs.7", "metadata")
    for key in schema["properties"]["metadata"]["properties"]:
        assert re.search(rf"\b{key}\b", metadata), key
    units = results_lists()["TR_RANGE_UNIT"]
    assert "second" in units
    range_text = man_option_paragraph("toolfs.7", "range")
    for unit in units:
        assert re.search(rf"\b{unit}\b", range_text), unit


def test_toolfs_help_and_page_name_every_kind_of_selection(build_dir):
    """toolfs --help and toolfs(1) described selectors without times (issue 38)."""
    help_text = " ".join(run(binary(build_dir, "toolfs"), "--help").stdout.decode().split())
    head = help_text[:help_text.index("Options:")]
    page = " ".join(subprocess.run(["man", "-l", str(MAN_DIR / "toolfs.1.in")],
                                   capture_output=True, check=True, timeout=30,
                                   env=dict(os.environ, MANWIDTH="1000")).stdout.decode().split())
    page = page[page.index("holds a selection"):][:300]
    for kind in ("lines", "cells", "pages", "sheets", "slides"):
        assert kind in head and kind in page, kind
    assert "T1-T2" in head and "WxH+X+Y" in head
    assert "time" in page and "region" in page


def readme_table(head: str) -> dict:
    """{first cell: the row's text} of the README table whose header row starts with head."""
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index(f"| {head} |"):]
    table = table[:table.index("\n\n")]
    return {row.split(" | ")[0].lstrip("| "): row for row in table.splitlines()[2:]}


def test_readme_gives_every_key_content_type_and_option():
    """The README drifted from the result and the options (issue 38): its ToolResult table
    lacked `audio` and the contentTypes audio and video, its options paragraph max_audio_size
    and max_audio_seconds, and its toolfs-mcp table one of the five defaults toolfs-mcp
    changes. The keys and types come from docs/toolresult.schema.json, the options and the
    MCP defaults from include/tr_options.def."""
    schema = json.loads((REPO / "docs" / "toolresult.schema.json").read_text())
    rows = readme_table("key")
    keys = {k for cell in rows for k in re.findall(r"`(\w+)`", cell)}
    assert set(schema["properties"]) <= keys, set(schema["properties"]) - keys
    types = re.findall(r"`(\w+)`", rows["`contentType`"].split(" | ", 2)[2])
    assert types == schema["properties"]["contentType"]["enum"]
    readme = (REPO / "README.md").read_text()
    para = readme[readme.index("Options (`-o name=value`"):]
    para = " ".join(para[:para.index("\n\n")].split())
    for name, fronts in table_rows().items():
        if fronts != "MCP":
            assert re.search(rf"`{name}(` \(|=|`[,.])", para), name
    table = (REPO / "include" / "tr_options.def").read_text()
    changed = re.findall(r"^TR_OPTION\((\w+), \w+, [^,]+, MCP\(", table, re.M)
    mcp_rows = readme_table("option")
    assert sorted(re.sub(r"`", "", k) for k in mcp_rows) == sorted(changed)


def results_lists() -> dict:
    """{list: [names in row order]} of include/tr_results.def."""
    table = (REPO / "include" / "tr_results.def").read_text()
    table = table[table.index("#endif\n\n"):]
    return {macro: re.findall(rf'^{macro}\(\w+, "(\w+)"', table, re.M)
            for macro in ("TR_CONTENT_TYPE", "TR_ERROR_CODE", "TR_RANGE_UNIT", "TR_OUTPUT_FORMAT")}


def test_every_list_matches_its_docs():
    """Each closed list of the result is written once, in include/tr_results.def (issue 38);
    the schema, SPEC, the manual pages and the README are checked against it, so a row added
    without its docs fails here (try: a TR_ERROR_CODE(GONE, "gone") row)."""
    lists = results_lists()
    types, codes, units, formats = (lists[m] for m in (
        "TR_CONTENT_TYPE", "TR_ERROR_CODE", "TR_RANGE_UNIT", "TR_OUTPUT_FORMAT"))
    assert types[0] == "unknown" and "timeout" in codes and "second" in units
    schema = json.loads((REPO / "docs" / "toolresult.schema.json").read_text())
    assert schema["properties"]["contentType"]["enum"] == types[1:] + ["unknown"]
    assert schema["properties"]["errorCode"]["enum"] == codes
    assert schema["properties"]["range"]["properties"]["unit"]["enum"] == units
    spec = (REPO / "docs" / "SPEC.md").read_text()
    errors = spec[spec.index("## 5. Error codes"):spec.index("## 6.")]
    assert re.findall(r"^\| `(\w+)` \|", errors, re.M) == codes
    type_row = re.search(r"^\| `contentType` \|.*$", spec, re.M)[0]
    assert re.findall(r"`(\w+)`", type_row.split("|")[4]) == types[1:] + ["unknown"]
    range_row = re.search(r"^\| `range` \|.*$", spec, re.M)[0]
    assert re.findall(r'"(\w+)"', range_row.split('"unit":')[1].split(',"start"')[0]) == units
    page = (MAN_DIR / "toolfs.7.in").read_text()
    errors_page = page[page.index(".SH ERROR"):]
    assert re.findall(r"^\.TP\n\.B (\w+)$", errors_page, re.M)[:len(codes)] == codes
    readme = (REPO / "README.md").read_text()
    error_row = re.search(r"^\| `error`, `errorCode` \|.*$", readme, re.M)[0]
    assert re.findall(r"`(\w+)`", error_row.split(" | ", 2)[2]) == codes
    for name in formats[1:]:
        suffix = ".tool.txt" if name == "txt" else f".tool.{name}.json"
        assert f"`{name}`" in spec[spec.index("## 6."):] and suffix in readme, name


def rendered(build_dir, page) -> str:
    path = build_dir / "docs" / "man" / page
    if not path.exists():
        pytest.skip(f"{page} is not generated in this build")
    return subprocess.run(["man", "-l", str(path)], capture_output=True, check=True,
                          env=dict(os.environ, MANWIDTH="1000"), timeout=30).stdout.decode()


def test_toolfs_1_gives_every_option_and_default(build_dir):
    lines = [line.strip() for line in rendered(build_dir, "toolfs.1").splitlines()]
    for option, default in spec_options().items():
        if option in mcp_only():
            continue
        tags = [i for i, line in enumerate(lines) if re.fullmatch(rf"{option}(=\S+)?", line)]
        assert len(tags) == 1, option
        assert lines[tags[0] + 1].endswith(f"(default: {default}).") or \
            f"(default: {default})" in lines[tags[0] + 1], lines[tags[0] + 1]


@pytest.mark.parametrize("page", ["toolfs.1", "toolfs-read.1", "toolfs.7"])
def test_generated_pages_carry_the_version(build_dir, page):
    text = rendered(build_dir, page)
    assert "@" not in text.splitlines()[-1]
    assert text.splitlines()[-1].split()[:2] == ["toolfs", project_version(build_dir)]


def test_meson_install_lays_out_binaries_pages_and_units(build_dir):
    meson = shutil.which("meson") or "/usr/bin/meson"
    out = subprocess.run([meson, "introspect", "--installed", str(build_dir)],
                         capture_output=True, check=True).stdout
    installed = set(json.loads(out).values())
    prefix = json.loads(subprocess.run(
        [meson, "introspect", "--buildoptions", str(build_dir)], capture_output=True,
        check=True).stdout)
    prefix = next(o["value"] for o in prefix if o["name"] == "prefix")
    want = {f"{prefix}/bin/toolfs-read", f"{prefix}/share/man/man1/toolfs-read.1",
            f"{prefix}/share/man/man7/toolfs.7"}
    if (build_dir / "fs" / "toolfs").exists():
        want |= {f"{prefix}/bin/toolfs", f"{prefix}/share/man/man1/toolfs.1",
                 f"{prefix}/lib/systemd/system/toolfs@.service",
                 f"{prefix}/lib/systemd/user/toolfs@.service"}
    if (REPO / "mcp").is_dir():
        want |= {f"{prefix}/bin/toolfs-mcp", f"{prefix}/share/man/man1/toolfs-mcp.1"}
    assert want <= installed, want - installed


def schema_content_types() -> list:
    schema = json.loads((REPO / "docs" / "toolresult.schema.json").read_text())
    return schema["properties"]["contentType"]["enum"]


def man_text(page) -> str:
    """The source of a manual page with roff's escaped dashes and font changes undone."""
    text = (MAN_DIR / f"{page}.in").read_text()
    return re.sub(r"\\f[BIRP]|\\&", "", text.replace("\\-", "-"))


def mentions(text, option) -> bool:
    """True when option is named in text, with underscores or with dashes."""
    return any(re.search(rf"(?<![a-z_]){re.escape(form)}(?![a-z_])", text)
               for form in {option, option.replace("_", "-")})


def mcp_read_description(build_dir) -> str:
    proc = subprocess.run([str(binary(build_dir, "toolfs-mcp"))], capture_output=True,
                          timeout=30, input=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    tools = json.loads(proc.stdout.decode().splitlines()[0])["result"]["tools"]
    return next(t for t in tools if t["name"] == "read")["description"]


def catalogue(build_dir) -> dict:
    """{where: text} of every place that must name every content type and option."""
    places = {f"man {page}": man_text(page) for page in PAGES}
    for name in FOLDERS:
        places[f"{name} --help"] = run(binary(build_dir, name), "--help").stdout.decode()
    places["toolfs-mcp read description"] = mcp_read_description(build_dir)
    return places


def test_every_content_type_and_option_is_documented_everywhere(build_dir):
    """The MCP tool description, the four manual pages and the three --help texts name every
    contentType of the schema and every option of include/tr_options.def (the mount's own options
    are not asked of toolfs-mcp, which has no mount)."""
    missing = []
    for where, text in catalogue(build_dir).items():
        for kind in schema_content_types():
            if not re.search(rf"\b{kind}\b", text):
                missing.append(f"{where}: content type {kind}")
        for option in header_fields():
            if "toolfs-mcp" in where and option in mount_only():
                continue
            if where in ("man toolfs.1", "toolfs --help") and option in mcp_only():
                continue
            if not mentions(text, option):
                missing.append(f"{where}: option {option}")
    assert not missing, "\n".join(missing)


def test_options_sections_are_generated_from_the_table(build_dir, tmp_path):
    """The options sections of the manual pages and docs/SPEC.md are what options-doc writes
    from include/tr_options.def; one changed default in a copy makes --check fail, naming it."""
    tool = build_dir / "docs" / "man" / "options-doc"
    if not tool.exists():
        pytest.skip("options-doc is not built")
    assert run(tool, "--check", REPO).returncode == 0
    for rel in ["docs/SPEC.md"] + [f"docs/man/{page}.in" for page in PAGES]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((REPO / rel).read_bytes())
    page = tmp_path / "docs" / "man" / "toolfs.1.in"
    text = page.read_text()
    assert text.count("(default: 2000).") >= 1
    page.write_text(text.replace("(default: 2000).", "(default: 3000).", 1))
    proc = run(tool, "--check", tmp_path)
    assert proc.returncode == 1
    assert "docs/man/toolfs.1.in differs" in proc.stderr.decode()
    assert run(tool, "--write", tmp_path).returncode == 0
    assert page.read_text() == text


def test_content_type_lists_agree(build_dir):
    """The contentType values are one list: the schema's enum, the list the three --help texts
    print from the library (tr_content_type_name), and the enum of the MCP outputSchema
    (reader.h's recipe, step 5). A type added to the C enum alone, or to the schema alone, fails
    here."""
    want = schema_content_types()
    assert "spreadsheet" in want and "unknown" in want, want
    for name in FOLDERS:
        text = run(binary(build_dir, name), "--help").stdout.decode()
        listed = re.search(r"Content types \(the result's contentType\):\n  (.*)\n", text)[1]
        assert listed.split(", ") == want, f"{name} --help: {listed}"
    proc = subprocess.run([str(binary(build_dir, "toolfs-mcp")), "--mcp-structured"],
                          capture_output=True, timeout=30,
                          input=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    tools = json.loads(proc.stdout.decode().splitlines()[0])["result"]["tools"]
    read = next(t for t in tools if t["name"] == "read")
    assert read["outputSchema"]["properties"]["contentType"]["enum"] == want
    assert f"(contentType): {', '.join(want)}." in read["description"]


def mcp_arg_rows() -> list:
    """[(name, type)] of the read tool's arguments, the MCP_ARG rows of mcp/mcp_args.def."""
    return re.findall(r"^MCP_ARG\((\w+), (\w+),", (REPO / "mcp" / "mcp_args.def").read_text(), re.M)


MCP_ARG_JSON_TYPES = {"PATH": "string", "COUNT": "integer", "SELECTOR": "string", "CHOICE": "string"}


def option_values(name) -> list:
    """The values a reader option of include/tr_options.def takes, from its value form."""
    table = (REPO / "include" / "tr_options.def").read_text()
    return re.search(rf'^TR_OPTION\({name}, \w+, [^,]+, [^,]+, \w+, "([^"]+)"', table,
                     re.M)[1].split("|")


def test_every_mcp_argument_is_documented(build_dir):
    """The read tool's arguments are written once, in mcp/mcp_args.def (issue 38): tools/list's
    inputSchema is checked against the rows, and toolfs-mcp(1), docs/SPEC.md §7 and the README
    must name each with its type, so a row added without its docs fails here (try: an
    MCP_ARG(sheet, SELECTOR, NULL, "A sheet.", "a sheet") row)."""
    rows = mcp_arg_rows()
    names = [name for name, _ in rows]
    assert names[0] == "file_path" and "ocr" in names and len(names) >= 8
    proc = subprocess.run([str(binary(build_dir, "toolfs-mcp"))], capture_output=True,
                          timeout=30, input=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    tools = json.loads(proc.stdout.decode().splitlines()[0])["result"]["tools"]
    schema = next(t for t in tools if t["name"] == "read")["inputSchema"]
    assert list(schema["properties"]) == names
    assert schema["required"] == [name for name, kind in rows if kind == "PATH"]
    for name, kind in rows:
        prop = schema["properties"][name]
        assert prop["type"] == MCP_ARG_JSON_TYPES[kind], name
        assert prop.get("minimum") == (1 if kind == "COUNT" else None), name
        assert prop.get("enum") == (option_values(name) if kind == "CHOICE" else None), name
    page = (MAN_DIR / "toolfs-mcp.1.in").read_text()
    listed = page[page.index("Arguments:\n"):page.index("The result is exactly")]
    assert re.findall(r"^\.BR? (\w+)\n\((\w+)", listed, re.M) == [
        (name, MCP_ARG_JSON_TYPES[kind]) for name, kind in rows], "toolfs-mcp(1) TOOLS read"
    spec = (REPO / "docs" / "SPEC.md").read_text()
    row = re.search(r"^\| `read` \|.*$", spec, re.M)[0].split(" | ")[1]
    assert re.findall(r"`(\w+)` \(", row) == names, "docs/SPEC.md §7 read"
    for name, kind in rows:
        said = row[row.index(f"`{name}` ("):]
        if kind == "COUNT":
            assert said.startswith(f"`{name}` (integer >= 1"), name
        if kind == "CHOICE":
            assert said.startswith(f"`{name}` (" + ", ".join(
                f"`{v}`" for v in option_values(name)[:-1])), name
    readme = (REPO / "README.md").read_text()
    mcp = readme[readme.index("## MCP server"):]
    mcp = mcp[mcp.index("\n\n") + 2:]
    mcp = mcp[:mcp.index("\n\n")]
    assert [name for name in names if f"`{name}`" not in mcp] == [], "README MCP server"


def test_mcp_argument_errors_are_worded_from_their_rows(build_dir):
    """A bad argument's sentence names it and what its row says it must be, as the schema says:
    an integer >= 1, one of the option's values, a non-empty string."""
    calls = [{"file_path": ""}, {"file_path": "x", "offset": 0}, {"file_path": "x", "limit": 1.5},
             {"file_path": "x", "max_tokens": "9"}, {"file_path": "x", "ocr": "maybe"},
             {"file_path": "x", "pages": 3}]
    lines = "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                "params": {"name": "read", "arguments": a}}) + "\n"
                    for i, a in enumerate(calls))
    proc = subprocess.run([str(binary(build_dir, "toolfs-mcp"))], capture_output=True,
                          timeout=30, input=lines.encode())
    answers = sorted((json.loads(line) for line in proc.stdout.decode().splitlines()),
                     key=lambda m: m["id"])
    texts = [a["result"]["content"][0]["text"] for a in answers]
    assert all(a["result"]["isError"] for a in answers)
    head = "Invalid arguments for read: "
    assert texts == [
        head + "file_path must be a non-empty string (an absolute path inside an allowed "
        "directory, or one relative to the first).",
        head + "offset must be an integer >= 1 (the first line, cell or page to read).",
        head + "limit must be an integer >= 1 (how many lines, cells or pages to read).",
        head + "max_tokens must be an integer >= 1 (the most tokens of text to return).",
        head + 'ocr must be "off", "auto" or "on".',
        head + 'pages must be a string "A" or "A-B" (e.g. "3" or "2-5").']


FRONTS = {"TR_FRONT_MOUNT": "toolfs", "TR_FRONT_CLI": "toolfs-read", "TR_FRONT_MCP": "toolfs-mcp"}


def front_option_rows() -> list:
    """[(programs, flags, value)] of include/tr_front_options.def: the front ends' own options."""
    table = (REPO / "include" / "tr_front_options.def").read_text()
    rows = re.findall(r'^TR_FRONT_OPTION\(([\w |]+), "([^"]+)", (NULL|"[^"]*"),', table, re.M)
    return [([FRONTS[f.strip()] for f in fronts.split("|")], flags,
             None if value == "NULL" else value.strip('"')) for fronts, flags, value in rows]


def test_every_front_end_option_is_documented(build_dir):
    """The front ends' own options are written once, in include/tr_front_options.def (issue 38):
    each program's --help lists its rows under "Options:" in row order, and the OPTIONS section
    of its manual page has a .TP entry for every spelling with its value, so a row added without
    its docs fails here (try: a TR_FRONT_OPTION(TR_FRONT_CLI, "--quiet", NULL, "say less") row)."""
    rows = front_option_rows()
    assert ("-h, --help" in [flags for _, flags, _ in rows] and
            (["toolfs-read"], "--select", "SEL") in rows)
    missing = []
    for program in FRONTS.values():
        mine = [(flags, value) for programs, flags, value in rows if program in programs]
        text = run(binary(build_dir, program), "--help").stdout.decode()
        listed = text[text.index("\nOptions:\n") + 10:]
        listed = listed[:listed.index("\n\n")]
        tags = [re.split(r"\s{2,}", line.strip())[0] for line in listed.splitlines()
                if re.match(r"  -", line)]
        assert tags == [f"{flags} {value}" if value else flags for flags, value in mine], program
        page = man_text(f"{program}.1")
        section = page[page.index(".SH OPTIONS"):]
        section = section[:section.index("\n.SH ", 1)]
        heads = re.findall(r"^\.TP\n(\.B[IR]? .*)$", section, re.M)
        for flags, value in mine:
            for flag in flags.split(", "):
                ok = [h for h in heads if re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", h)
                      and (not value or re.match(r"[A-Z]+", value)[0] in h)]
                if not ok:
                    missing.append(f"{program}(1) OPTIONS: {flag} {value or ''}".rstrip())
    assert missing == []
