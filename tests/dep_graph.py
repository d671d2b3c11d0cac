#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that the source has no dependency cycle: neither between headers (#include lines) nor
between C files (which file calls a function defined in which, read with nm from every object
the build compiles for a program or module: the daemon, the CLI, the MCP server, the shared
modules and the libraries they link, tests and fuzz targets aside), and that readers/util/, the
ground floor, neither includes a header of readers/core/ nor calls a function defined there.
Prints each cycle or upward edge found and exits 1; prints the counts and exits 0 when there is
none.

    tests/dep_graph.py [BUILD_DIR]        (default: build)
"""
import json
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["include", "readers", "fs", "cli", "mcp"]
UTIL = REPO / "readers" / "util"
CORE = REPO / "readers" / "core"


def sources():
    for top in SOURCE_DIRS:
        yield from sorted((REPO / top).rglob("*.[ch]"))


def include_graph():
    """Header -> headers it includes, by file name (names are unique in the project)."""
    files = list(sources())
    by_name = {}
    for f in files:
        if f.suffix == ".h":
            by_name.setdefault(f.name, f)
    graph = {}
    for f in files:
        if f.suffix != ".h":
            continue
        deps = set()
        for line in f.read_text(errors="replace").splitlines():
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and pathlib.Path(m.group(1)).name in by_name:
                deps.add(by_name[pathlib.Path(m.group(1)).name])
        graph[f] = deps - {f}
    return graph


def call_graph(build: pathlib.Path):
    """Source file -> source files whose functions it calls, from nm over every object meson's
    compile_commands.json lists but those of tests/ (an object compiled twice, for two modules,
    is one node: its source)."""
    commands = build / "compile_commands.json"
    if not commands.is_file():
        return {}
    objects = {}
    for entry in json.loads(commands.read_text()):
        source = (pathlib.Path(entry["directory"]) / entry["file"]).resolve()
        if REPO not in source.parents or (REPO / "tests") in source.parents:
            continue
        objects.setdefault(source, []).append(pathlib.Path(entry["directory"]) / entry["output"])
    defined, used = {}, {}
    for source, outputs in objects.items():
        used[source] = set()
        for obj in outputs:
            out = subprocess.run(["nm", "--defined-only", "-g", str(obj)], capture_output=True,
                                 text=True, check=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TDRBVW" and parts[2] != "main":
                    defined[parts[2]] = source
            out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                                 check=True).stdout
            used[source] |= {line.split()[-1] for line in out.splitlines() if line.strip()}
    graph = {}
    for source, symbols in used.items():
        graph[source] = {defined[s] for s in symbols if s in defined} - {source}
    return graph


def upward_edges(headers, calls):
    """Each include or call from readers/util/ into readers/core/, as text."""
    found = []
    for path in sorted(UTIL.glob("*.[ch]")):
        for header in re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M):
            if (CORE / header).is_file():
                found.append(f"{name(path)} includes core/{header}")
    for source, deps in sorted(calls.items()):
        if UTIL in source.parents:
            found += [f"{name(source)} calls {name(dep)}" for dep in sorted(deps)
                      if CORE in dep.parents]
    return found


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def name(path: pathlib.Path) -> str:
    return str(path.relative_to(REPO)) if REPO in path.parents else str(path)


def main() -> int:
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "build").resolve()
    headers = include_graph()
    calls = call_graph(build)
    if not calls:
        print(f"dep_graph: no objects under {build}: build first", file=sys.stderr)
        return 2
    bad = 0
    for kind, graph in (("include", headers), ("call", calls)):
        for component in cycles(graph):
            names = tuple(name(p) for p in component)
            bad += 1
            print(f"{kind} cycle: " + " <-> ".join(names))
    for edge in upward_edges(headers, calls):
        bad += 1
        print(f"util -> core: {edge}")
    edges = sum(len(v) for v in headers.values()), sum(len(v) for v in calls.values())
    print(f"dep_graph: {len(headers)} headers ({edges[0]} includes), {len(calls)} objects "
          f"({edges[1]} call edges), {bad} cycles or upward edges")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
