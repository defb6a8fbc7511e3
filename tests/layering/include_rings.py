#!/usr/bin/env python3
"""No unit includes another that includes it back, directly or in a ring (issue 41).

A unit is a .cc with its .h (same path, extension dropped). Unit A points at unit B when A's
header or source has `#include "B.h"`. A ring is a strongly connected set of two or more units:
each reaches every other, so none of them can be understood, tested or moved without the rest.

Usage: include_rings.py SOURCE_DIR [MIN_UNITS]
       include_rings.py --self-check
Prints one FAIL line per ring with the includes that close it, else one PASS line. MIN_UNITS
(default 300) guards the check itself: fewer units seen means it read the wrong folder.
--self-check runs it on a made-up tree that holds one ring of three and a one-way chain, so a
check that can no longer find a ring fails too.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+\.h)"')
SKIP_DIRS = {".git", "node_modules"}


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(folder, name), root)


def include_graph(root):
    """unit -> {unit it includes: [(file, line number), ...]}"""
    graph = {}
    for path in source_files(root):
        unit = os.path.splitext(path)[0]
        edges = graph.setdefault(unit, {})
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match or not os.path.isfile(os.path.join(root, match.group(1))):
                    continue  # a system header, or one found on another include path
                target = os.path.splitext(match.group(1))[0]
                if target != unit:
                    edges.setdefault(target, []).append((path, number))
    return graph


def rings(graph):
    """Strongly connected components of two or more units (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            unit, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                    advanced = True
                    break
                if target in on_stack:
                    low[unit] = min(low[unit], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[unit])
            if low[unit] == index[unit]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == unit:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def closing_path(graph, component):
    """One cycle through the component's first unit, as the includes that make it."""
    members = set(component)
    start = component[0]
    came_from = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for unit in frontier:
            for target in sorted(graph.get(unit, {})):
                if target == start:
                    path, at = [], unit
                    while at is not None:
                        path.append(at)
                        at = came_from[at]
                    path.reverse()
                    path.append(start)
                    return path
                if target in members and target not in came_from:
                    came_from[target] = unit
                    nxt.append(target)
        frontier = nxt
    return component


def self_check():
    tree = {
        # a -> b (header) -> c (source) -> a: a ring of three, closed by a .cc's include.
        "x/a.h": '#include "x/b.h"\n',
        "x/a.cc": '#include "x/a.h"\n',
        "x/b.h": "",
        "x/b.cc": '#include "x/b.h"\n#include "x/c.h"\n',
        "x/c.h": "#include <vector>\n",
        "x/c.cc": '#include "x/c.h"\n#include "x/a.h"\n',
        # d -> e -> f: one way, no ring.
        "y/d.cc": '#include "y/e.h"\n',
        "y/e.h": '#include "y/f.h"\n',
        "y/f.h": '#include "x/a.h"\n',
        "build-old/g.h": '#include "y/d.h"\n',  # build folders are not read
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        graph = include_graph(root)
        found = rings(graph)
        path = closing_path(graph, found[0]) if found else []
    if found != [["x/a", "x/b", "x/c"]] or path != ["x/a", "x/b", "x/c", "x/a"]:
        print(f"FAIL: on a made-up tree found {found} (path {path}); "
              "expected one ring x/a -> x/b -> x/c -> x/a")
        return 1
    if "build-old/g" in graph:
        print("FAIL: read a build folder")
        return 1
    print("PASS: the made-up tree's one ring found, its one-way chain not")
    return 0


def main():
    if sys.argv[1:] == ["--self-check"]:
        return self_check()
    if len(sys.argv) < 2:
        print("FAIL: usage: include_rings.py SOURCE_DIR [MIN_UNITS]")
        return 1
    root = sys.argv[1]
    min_units = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    graph = include_graph(root)
    edges = sum(len(targets) for targets in graph.values())
    if len(graph) < min_units:
        print(f"FAIL: only {len(graph)} units under {root} (at least {min_units}): wrong dir?")
        return 1
    found = rings(graph)
    for component in found:
        path = closing_path(graph, component)
        steps = []
        for a, b in zip(path, path[1:]):
            file, line = graph[a][b][0]
            steps.append(f"{file}:{line} includes {b}.h")
        print(f"FAIL: ring of {len(component)} units ({', '.join(component)}): " +
              "; ".join(steps))
    if found:
        return 1
    print(f"PASS: {len(graph)} units, {edges} includes between them, no ring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
