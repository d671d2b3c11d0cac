#!/usr/bin/env python3
"""Checks that the source has no dependency cycle: neither between headers (#include lines) nor
between C files (which file calls a function defined in which, read from the built objects with
nm). Prints each cycle found and exits 1; prints the counts and exits 0 when there is none.

    tests/dep_graph.py [BUILD_DIR]        (default: build)
"""
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["include", "readers", "fs"]


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
    """Object -> objects whose functions it calls, from nm over the core and fs libraries."""
    objects = sorted(p for p in build.rglob("*.o")
                     if any(part.startswith(("libtoolfs_core.a.p", "libtoolfs_fs"))
                            for part in p.parts))
    defined, used = {}, {}
    for obj in objects:
        out = subprocess.run(["nm", "--defined-only", "-g", str(obj)], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDRB":
                defined[parts[2]] = obj
        out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                             check=True).stdout
        used[obj] = {line.split()[-1] for line in out.splitlines() if line.strip()}
    graph = {}
    for obj, symbols in used.items():
        graph[obj] = {defined[s] for s in symbols if s in defined} - {obj}
    return graph


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
    stem = path.name
    if stem.endswith(".o"):  # meson names objects folder_file.c.o
        stem = stem[:-2]
    return str(path.relative_to(REPO)) if REPO in path.parents and path.suffix != ".o" else stem


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
            bad += 1
            print(f"{kind} cycle: " + " <-> ".join(name(p) for p in component))
    edges = sum(len(v) for v in headers.values()), sum(len(v) for v in calls.values())
    print(f"dep_graph: {len(headers)} headers ({edges[0]} includes), {len(calls)} objects "
          f"({edges[1]} call edges), {bad} cycles")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
