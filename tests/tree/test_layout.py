# SPDX-License-Identifier: MIT
"""The architecture holds: no dependency cycle between headers or between C files, the reader
core knows nothing of FUSE, front ends see include/ alone, nothing points outside the
repository for its contract, and every library meson looks for has its Debian -dev package in
debian/control's Build-Depends and in .ci/packages."""
import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / p for p in out.decode().split("\0") if p and (REPO / p).is_file()]


def test_no_dependency_cycle(build_dir):
    """Over every object of the programs and modules; util/ calls nothing in core/."""
    proc = subprocess.run(["/usr/bin/python3", str(REPO / "tests" / "dep_graph.py"),
                           str(build_dir)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b0 cycles or upward edges$", proc.stdout.strip()), proc.stdout


def test_reader_core_has_no_fuse():
    for path in list((REPO / "readers").rglob("*.[ch]")) + list((REPO / "include").glob("*.h")):
        text = path.read_text(errors="replace")
        assert not re.search(r'#\s*include\s*[<"]fuse', text), path


def test_front_ends_use_the_public_api_only():
    public = {p.name for p in (REPO / "include").glob("*.h")}
    for folder in [REPO / "fs", REPO / "cli", REPO / "mcp"]:
        own = {p.name for p in folder.glob("*.h")} | {p.name for p in folder.glob("*.def")}
        for path in folder.glob("*.[ch]"):
            for name in re.findall(r'#\s*include\s*"([^"]+)"', path.read_text()):
                assert name in public or name in own, f"{path.name} includes private {name}"


def test_contract_lives_in_the_repository():
    spec = REPO / "docs" / "SPEC.md"
    assert spec.is_file()
    for path in tracked_files():
        if "node_modules" in path.parts or path == pathlib.Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        assert "../shared" not in text, f"{path.relative_to(REPO)} points outside the repository"
        for section in re.findall(r"SPEC(?:\.md)? §(\d+)", text):
            assert f"\n## {section}." in spec.read_text(), f"{path.name}: no §{section}"


def meson_dependencies() -> set:
    """Every name passed to dependency() in a meson.build, but meson's own `threads`."""
    names = set()
    for path in tracked_files():
        if path.name == "meson.build":
            names |= set(re.findall(r"\bdependency\(\s*'([^']+)'", path.read_text()))
    return names - {"threads"}


def pkg_config_package(name: str) -> str:
    """The Debian package that ships NAME.pc (dpkg -S), or a message saying why none."""
    found = subprocess.run(["pkg-config", "--variable=pcfiledir", name], capture_output=True,
                           text=True)
    if found.returncode != 0:
        return f"(no {name}.pc installed: {found.stderr.strip()})"
    pc = os.path.realpath(os.path.join(found.stdout.strip(), name + ".pc"))
    owner = subprocess.run(["dpkg", "-S", pc], capture_output=True, text=True)
    if owner.returncode != 0:
        return f"(dpkg -S {pc}: {owner.stderr.strip()})"
    return owner.stdout.split(":", 1)[0].split(",")[0].strip()


def build_depends() -> set:
    """The package names of debian/control's Build-Depends (versions and arch lists dropped)."""
    text = (REPO / "debian" / "control").read_text()
    field = re.search(r"^Build-Depends:(.*?)(?=^\S)", text, re.M | re.S)[1]
    return {alt.split()[0] for item in field.split(",") for alt in item.split("|") if alt.strip()}


def test_every_meson_dependency_has_its_debian_package():
    deps = meson_dependencies()
    assert "libzip" in deps and "fuse3" in deps, deps  # the scan finds them at all
    control = build_depends()
    ci = {line.strip() for line in (REPO / ".ci" / "packages").read_text().splitlines()
          if line.strip() and not line.startswith("#")}
    packages = {name: pkg_config_package(name) for name in sorted(deps)}
    missing = [f"{name}: {pkg}" for name, pkg in packages.items()
               if not pkg.endswith("-dev") or pkg not in control or pkg not in ci]
    assert not missing, "meson dependency(): Debian -dev package not in debian/control's " \
        "Build-Depends and .ci/packages: " + "; ".join(missing)


SPDX = "SPDX-License-Identifier: MIT"
# The files that carry an SPDX line: code, build files, scripts, man page and unit sources.
SPDX_SUFFIXES = (".c", ".h", ".py", ".sh", ".js", ".mjs", ".map", ".in", ".ini", ".supp", ".dict")


def test_every_source_file_carries_the_license():
    """LICENSE is the MIT licence meson.build names, debian/copyright holds the same text and
    holder, and every source file says so in its first two lines (after a shebang)."""
    license_text = (REPO / "LICENSE").read_text()
    assert "license : 'MIT'" in (REPO / "meson.build").read_text()
    holder = re.search(r"^Copyright \(c\) (.+)$", license_text, re.M)[1]
    copyright = (REPO / "debian" / "copyright").read_text()
    assert f"Copyright: {holder}" in copyright
    def words(text):
        return re.sub(r"[\s.]+", " ", text).strip()  # debian/copyright's " ." blank lines

    body = license_text[license_text.index("Permission is hereby granted"):]
    assert words(body) in words(copyright[copyright.index("License: MIT\n "):]), \
        "debian/copyright's MIT text differs from LICENSE"
    missing = []
    for path in tracked_files():
        rel = path.relative_to(REPO)
        if "node_modules" in rel.parts or "regressions" in rel.parts:
            continue
        script = "." not in path.name and path.read_bytes().startswith(b"#!")
        if not (path.name.endswith(SPDX_SUFFIXES) or path.name in ("meson.build",
                "meson_options.txt") or script):
            continue
        if SPDX not in "".join(path.read_text(errors="replace").splitlines(True)[:2]):
            missing.append(str(rel))
    assert not missing, f"no '{SPDX}' in the first two lines: " + " ".join(missing)


# reader.h's recipe for a new format: the steps a script can check.

def reader_sources() -> dict:
    """{reader: its folder under readers/} for every `const struct tr_reader tr_reader_X =`."""
    found = {}
    for path in (REPO / "readers").rglob("*.c"):
        for name in re.findall(r"^const struct tr_reader (tr_reader_\w+) = \{",
                               path.read_text(), re.M):
            found[name] = path.relative_to(REPO / "readers").parts[0]
    return found


def test_every_reader_is_registered_and_built():
    """Recipe steps 2 and 3: each reader has its extern and entry in registry.c, and its folder
    a subdir() and a core_private_inc entry in readers/meson.build."""
    readers = reader_sources()
    assert {"tr_reader_text", "tr_reader_pdf", "tr_reader_office"} <= set(readers), readers
    registry = (REPO / "readers" / "core" / "registry.c").read_text()
    table = registry[registry.index("tr_readers[] = {"):]
    build = (REPO / "readers" / "meson.build").read_text()
    private_inc = re.search(r"core_private_inc = include_directories\(([^)]*)\)", build)[1]
    missing = []
    for name, folder in sorted(readers.items()):
        if not re.search(rf"^extern const struct tr_reader {name};", registry, re.M):
            missing.append(f"{name}: no extern line in registry.c")
        if not re.search(rf"&{name},", table):
            missing.append(f"{name}: no entry in registry.c's tr_readers[]")
        if not re.search(rf"^subdir\('{folder}'\)", build, re.M):
            missing.append(f"{name}: no subdir('{folder}') in readers/meson.build")
        if f"'{folder}'" not in private_inc:
            missing.append(f"{name}: '{folder}' not in core_private_inc")
    assert not missing, "\n".join(missing)


def test_every_registry_guard_is_defined_by_the_build():
    """Recipe step 2: an optional reader's `#if defined(TR_HAVE_X)` is a -DTR_HAVE_X that a
    meson.build adds inside an `if` (when its library is found), never a name nothing sets."""
    registry = (REPO / "readers" / "core" / "registry.c").read_text()
    guards = set(re.findall(r"#\s*if\s+defined\((TR_HAVE_\w+)\)", registry))
    assert "TR_HAVE_OFFICE" in guards, guards
    defined = set()
    for path in (REPO / "readers").rglob("meson.build"):
        for indent, name in re.findall(r"^( *)core_args \+= \['-D(TR_HAVE_\w+)'\]",
                                       path.read_text(), re.M):
            if indent:  # inside the `if have_...` block
                defined.add(name)
    assert guards <= defined, f"guards no meson.build defines: {sorted(guards - defined)}"


def module_only_dependencies() -> set:
    """The dependency() names reached only through a *_module_deps list of readers/, never
    through core_deps: the heavy libraries the recipe (step 3) keeps out of the programs."""
    variables = {}
    for path in tracked_files():
        if path.name == "meson.build":
            variables.update(re.findall(r"^(\w+) = dependency\('([^']+)'", path.read_text(),
                                        re.M))
    module, core = set(), set()
    for path in (REPO / "readers").rglob("meson.build"):
        text = path.read_text()
        for target, items in re.findall(r"^\s*(\w+) \+?= \[([^\]]*)\]", text, re.M):
            names = {variables[v] for v in re.findall(r"\w+", items) if v in variables}
            if target.endswith("_module_deps"):
                module |= names
            elif target == "core_deps":
                core |= names
    return module - core


def needed(path) -> set:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def test_module_libraries_stay_out_of_the_programs(build_dir):
    """Recipe step 3: poppler, cairo, libvips and ISA-L are loaded with their module on first
    use; none of the three programs links them (a sanitizer build links the modules in)."""
    options = subprocess.run(["meson", "introspect", "--buildoptions", str(build_dir)],
                             capture_output=True, text=True, check=True).stdout
    if re.search(r'"name": "b_sanitize", "value": "(?!none")', options):
        import pytest
        pytest.skip("a sanitizer build links the modules into the programs")
    deps = module_only_dependencies()
    assert {"poppler-glib", "vips"} <= deps, deps
    libraries = {}
    for name in deps:
        flags = subprocess.run(["pkg-config", "--libs-only-l", name], capture_output=True,
                               text=True)
        if flags.returncode == 0 and flags.stdout.split():
            libraries[name] = "lib" + flags.stdout.split()[0][2:] + ".so"
    assert libraries.get("poppler-glib") == "libpoppler-glib.so", libraries
    modules = set().union(*(needed(p) for p in (build_dir / "readers").glob("toolfs-*.so")))
    assert any(so.startswith("libpoppler-glib.so") for so in modules), modules  # seen at all
    linked = []
    for program in ["fs/toolfs", "cli/toolfs-read", "mcp/toolfs-mcp"]:
        if not (build_dir / program).exists():
            continue
        for so in needed(build_dir / program):
            linked += [f"{program}: {so} ({name})" for name, lib in libraries.items()
                       if so.startswith(lib + ".")]
    assert not linked, "module libraries linked into a program: " + "; ".join(linked)


def reader_rows() -> dict:
    """Every reader's table row: {name: (folder, the row's text)}."""
    rows = {}
    for path in (REPO / "readers").rglob("*.c"):
        for name, body in re.findall(r"^const struct tr_reader tr_reader_(\w+) = \{(.*?)^\};",
                                     path.read_text(), re.S | re.M):
            rows[name] = (path.parent.name, body)
    return rows


def folders_reaching_a_module() -> set:
    """The folders of readers/ whose code loads a shared module (tr_module_api: poppler,
    libvips, librsvg, libzip + libxml2, Tesseract, FFmpeg), or calls a folder's functions that do."""
    functions, sources = {}, {}
    for folder in (REPO / "readers").iterdir():
        if not folder.is_dir():
            continue
        sources[folder.name] = "".join(p.read_text() for p in folder.glob("*.c"))
        headers = "".join(p.read_text() for p in folder.glob("*.h"))
        functions[folder.name] = set(re.findall(r"\b(tr_\w+)\s*\(", headers))
    reaching = {name for name, text in sources.items() if "tr_module_api(" in text} - {"util"}
    while True:
        more = {name for name, text in sources.items() if name not in reaching and any(
            re.search(rf"\b{f}\b", text) for r in reaching for f in functions[r])}
        more -= {"core", "util", "render", "sandbox"}  # the dispatcher and the helpers
        if not more:
            return reaching
        reaching |= more


def test_third_party_parsers_run_only_in_the_reader_worker(build_dir):
    """Recipe step 10 (docs/SPEC.md §8): a reader whose folder reaches a module that links a
    third-party parser is marked TR_CAP_UNTRUSTED in its table row, so that the dispatcher runs
    it in toolfs-reader-worker and never in a front end; its .module names a module the build
    makes; and no program but the worker is built from the worker's sources."""
    rows = reader_rows()
    assert {"pdf", "image", "text"} <= set(rows), sorted(rows)
    reaching = folders_reaching_a_module()
    assert {"pdf", "image", "svg", "office", "ocr", "notebook", "media"} <= reaching, reaching
    unmarked = {name for name, (folder, body) in rows.items()
                if folder in reaching and "TR_CAP_UNTRUSTED" not in body}
    assert not unmarked, f"readers that reach a parser's module without the worker: {unmarked}"
    for name, (folder, body) in rows.items():
        for module in re.findall(r'\.module = "([^"]+)"', body):
            built = build_dir / "readers" / module
            assert built.exists() or not (build_dir / "readers" / "toolfs-pdf.so").exists(), \
                f"reader {name} names {module}, which the build does not make"
    dispatch = (REPO / "readers" / "core" / "read.c").read_text()
    assert "TR_CAP_UNTRUSTED" in dispatch and "tr_sandbox_read(" in dispatch
    meson = (REPO / "readers" / "meson.build").read_text()
    assert meson.count("sandbox_worker_sources") == 1, "the worker's sources in a program"


def test_recipe_names_places_that_exist():
    """reader.h's recipe is complete (reader, registry and its guard, build and modules,
    packaging, contract, manual pages and MCP text, tests, fuzzing) and every file and
    function it names exists."""
    header = (REPO / "readers" / "core" / "reader.h").read_text()
    recipe = header[header.index("Adding a format"):header.index("#ifndef")]
    flat = re.sub(r"\s*\n \* *", " ", recipe)
    for topic in ["registry.c", "TR_HAVE_FOO", "struct tr_module", "_module_deps",
                  "Build-Depends", ".ci/packages", "toolresult.schema.json", "tr_options.def",
                  "docs/man/", "read_description", "tool_result_schema", "tests/fuzz",
                  "TR_CAP_UNTRUSTED", "docs/SPEC.md §8"]:
        assert topic in flat, f"the recipe in reader.h does not say where: {topic}"
    paths = r"(?<![\w/])((?:docs|readers|tests|include|debian|mcp|\.ci)/[\w./-]*\w)"
    for rel in set(re.findall(paths, flat)):
        if "foo" not in rel and "*" not in rel:
            assert (REPO / rel).exists(), f"reader.h's recipe names {rel}, which does not exist"
    for function, where in [("tr_content_type_name", "readers/core/result.c"),
                            ("tool_result_schema", "mcp/mcp_tools.c"),
                            ("read_description", "mcp/mcp_tools.c"),
                            ("tr_result_set_window", "include/tr_result.h")]:
        assert function in flat and function in (REPO / where).read_text(), function


def test_every_pytest_file_is_in_a_meson_suite():
    """Every test_*.py sits in a suite folder of tests/ (none at its top) that tests/meson.build
    walks and tests/pytest.ini puts on the path, and its folder's meson.build registers it, so
    `meson test --suite FOLDER` runs what `pytest tests/FOLDER` collects."""
    tests = REPO / "tests"
    walked = re.search(r"^foreach suite : \[(.*)\]$", (tests / "meson.build").read_text(), re.M)
    suites = re.findall(r"'(\w+)'", walked[1])
    on_path = re.search(r"^pythonpath = (.*)$", (tests / "pytest.ini").read_text(), re.M)[1]
    assert set(suites) <= set(on_path.split()), "a suite folder not in pytest.ini's pythonpath"
    assert not sorted(tests.glob("test_*.py")), "a test file at the top of tests/, in no suite"
    for suite in suites:
        on_disk = sorted(path.name for path in (tests / suite).glob("test_*.py"))
        listing = (tests / suite / "meson.build").read_text()
        registered = re.findall(r"^  '(test_\w+\.py)',$", listing, re.M)
        assert registered == on_disk, f"tests/{suite}/meson.build registers {registered}"
    in_folders = {path.parent.name for path in tests.glob("*/test_*.py")}
    assert in_folders <= set(suites), f"test files outside the suites: {in_folders - set(suites)}"


# Small files with one purpose: the C outside tests/ stays under these sizes.
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 100
MAX_LONG_FUNCTIONS = 4


def c_functions(text: str) -> list:
    """[(name, line of the name, line of the closing brace)] of every function defined in C
    text: comments, literals and preprocessor lines are blanked, then a brace at file scope
    after `name(...)` with no `=` before it opens a body."""
    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    text = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank,
                  text, flags=re.S)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, text, flags=re.M)
    found, depth, head, body = [], 0, 0, None
    for match in re.finditer(r"[{};]", text):
        char = match.group(0)
        if char == "{" and depth == 0:
            signature = text[head:match.start()]
            call = re.search(r"(\w+)\s*\([^;{}]*\)\s*$", signature)
            body = None
            if call and "=" not in signature.split("(")[0]:
                body = [call.group(1), text.count("\n", 0, head + call.start(1)) + 1]
        depth += {"{": 1, "}": -1, ";": 0}[char]
        if char == "}" and depth == 0 and body:
            found.append((body[0], body[1], text.count("\n", 0, match.start()) + 1))
            body = None
        if depth == 0 and char in "};":
            head = match.end()
    return found


def test_c_files_and_functions_stay_small():
    """No C file outside tests/ passes MAX_FILE_LINES lines, and at most MAX_LONG_FUNCTIONS
    functions pass MAX_FUNCTION_LINES (from the line of the name to the closing brace)."""
    long_files, long_functions = [], []
    for path in tracked_files():
        rel = path.relative_to(REPO)
        if path.suffix != ".c" or rel.parts[0] == "tests" or "node_modules" in rel.parts:
            continue
        text = path.read_text(errors="replace")
        if text.count("\n") > MAX_FILE_LINES:
            long_files.append(f"{rel} ({text.count(chr(10))} lines)")
        for name, first, last in c_functions(text):
            if last - first + 1 > MAX_FUNCTION_LINES:
                long_functions.append(f"{rel}:{first} {name} ({last - first + 1} lines)")
    assert not long_files, f"over {MAX_FILE_LINES} lines: " + ", ".join(sorted(long_files))
    assert len(long_functions) <= MAX_LONG_FUNCTIONS, (
        f"{len(long_functions)} functions over {MAX_FUNCTION_LINES} lines (at most "
        f"{MAX_LONG_FUNCTIONS}): " + ", ".join(sorted(long_functions)))
