#!/usr/bin/env python3
"""Fails when an include points up the layers, up the sub-layers inside one, or brings a
system library into a folder that is not its home, or when files include each other in a
cycle (a header and its source count as one unit).

Layers, lowest first (a folder may include its own files and any lower layer's):
    kernels, storage  <-  comm  <-  engine  <-  launch  <-  views  <-  app
Inside a layer its sub-folders are ordered the same way (SUBLAYER below; "." is the
layer's own top folder): e.g. comm/collectives knows no codec, comm/codecs may use the
collectives, comm/ps both. Names on one rung sit side by side and do not include each
other. Libraries (LIBRARY_HOME): Qt only in views/ and app/, ZeroMQ only in
comm/telemetry, MPI only in comm/mpi, NCCL only in comm/nccl, SQLite only in storage/.
tests/ and bench/ may include anything and are not checked. Run from anywhere: it finds
the repository from its own path. Exit status 1 lists every offending include with file
and line.
"""
import os
import re
import sys

LAYER = {"kernels": 0, "storage": 0, "comm": 1, "engine": 2, "launch": 3, "views": 4, "app": 5}
# Each layer's sub-folders, lowest rung first; a sub-folder not named here may not be
# included by a sibling (a new one gets its rung here).
SUBLAYER = {
    "kernels": [["."], ["cpu"], ["cuda"]],
    "storage": [["."], ["analysis", "trace_import"]],
    "comm": [["."], ["collectives", "memory", "mpi", "nccl", "telemetry"], ["codecs"], ["ps"]],
    "engine": [["job"], ["model", "data"], ["amp", "optim"], ["train"], ["sim"]],
    "launch": [["bench"], ["."]],
    "views": [["models", "lessons"], ["."]],
    "app": [["."], ["cli", "workbench"]],
}
# System headers (by name) and the folders that alone may include them.
LIBRARY_HOME = [
    ("Qt", re.compile(r"^Q[A-Za-z]*$|^Qt[A-Za-z]*/"), ("views/", "app/")),
    ("ZeroMQ", re.compile(r"^zmq"), ("comm/telemetry/",)),
    ("MPI", re.compile(r"^mpi\.h$"), ("comm/mpi/",)),
    ("NCCL", re.compile(r"^nccl\.h$"), ("comm/nccl/",)),
    ("SQLite", re.compile(r"^sqlite3\.h$"), ("storage/",)),
]
SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>")


def sources(root):
    for top in LAYER:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(folder, name), root)


def includes(root, path, pattern=INCLUDE):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = pattern.match(line)
            if m:
                yield number, m.group(1)


def sub_folder(path):
    """comm/codecs/x.h -> "codecs"; comm/x.h -> "."."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "."


def rung(layer, sub):
    for number, names in enumerate(SUBLAYER.get(layer, [])):
        if sub in names:
            return number
    return None


def sublayer_errors(path, number, target):
    layer = path.split("/")[0]
    if target.split("/")[0] != layer or layer not in SUBLAYER:
        return []
    src, dst = sub_folder(path), sub_folder(target)
    if src == dst:
        return []
    src_rung, dst_rung = rung(layer, src), rung(layer, dst)
    if src_rung is not None and dst_rung is not None and dst_rung < src_rung:
        return []
    order = " <- ".join(", ".join(names) for names in SUBLAYER[layer])
    return [f"{path}:{number}: includes {target}: {layer}/{src} may not include {layer}/{dst} "
            f"(inside {layer}/: {order})"]


def library_errors(path, number, header):
    for library, pattern, homes in LIBRARY_HOME:
        if pattern.search(header) and not path.startswith(homes):
            return [f"{path}:{number}: includes <{header}>: {library} belongs in "
                    f"{' and '.join(homes)} alone"]
    return []


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
        for number, header in includes(root, path, SYSTEM_INCLUDE):
            errors += library_errors(path, number, header)
        for number, target in includes(root, path):
            errors += layer_errors(path, number, target)
            errors += sublayer_errors(path, number, target)
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
