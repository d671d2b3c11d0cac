# SPDX-License-Identifier: MIT
"""The architecture holds: no dependency cycle between headers or between C files, the reader
core knows nothing of FUSE, front ends see include/ alone, nothing points outside the
repository for its contract, and every library meson looks for has its Debian -dev package in
debian/control's Build-Depends and in .ci/packages."""
import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent


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
        own = {p.name for p in folder.glob("*.h")}
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
