#!/usr/bin/env python3
"""Fails when an include points up the layers or files include each other in a cycle
(a header and its source count as one unit).

Layers, lowest first (a folder may include its own files and any lower layer's):
    kernels, storage  <-  comm  <-  engine  <-  launch  <-  views  <-  app
kernels and storage sit side by side and do not include each other. tests/ and bench/
may include anything and are not checked. Run from anywhere: it finds the repository
from its own path. Exit status 1 lists every offending include with file and line.
"""
import os
import re
import sys

LAYER = {"kernels": 0, "storage": 0, "comm": 1, "engine": 2, "launch": 3, "views": 4, "app": 5}
SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root):
    for top in LAYER:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(folder, name), root)


def includes(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def layer_errors(path, number, target):
    src, dst = path.split("/")[0], target.split("/")[0]
    if dst not in LAYER or dst == src:
        return []
    if LAYER[dst] < LAYER[src]:
        return []
    return [f"{path}:{number}: includes {target}: {src} may not include {dst} "
            f"(layers: kernels, storage <- comm <- engine <- launch <- views <- app)"]


def unit(path):
    return os.path.splitext(path)[0]


def cycles(graph):
    """Each include cycle once, as a list of files (depth-first, three colours)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def main():
    # --root DIR checks another tree (the test plants violations in one).
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        root = sys.argv[2]
    errors, graph = [], {}
    for path in sources(root):
        for number, target in includes(root, path):
            errors += layer_errors(path, number, target)
            # A header and its source are one unit: a.cpp -> b.h and b.h -> a.h is a cycle.
            if os.path.isfile(os.path.join(root, target)) and unit(target) != unit(path):
                graph.setdefault(unit(path), set()).add(unit(target))
    for cycle in cycles(graph):
        errors.append("include cycle: " + " -> ".join(cycle))
    for e in errors:
        print(e)
    files = sum(1 for _ in sources(root))
    print(f"check_layers: {files} files, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
