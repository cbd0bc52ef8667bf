#!/usr/bin/env python3
"""Fails when a file includes from, or a library links, a layer above its own.

The layers, lowest first, as docs/architecture.md draws them. A file may
include headers of its own folder and of the folders in lower layers; a
folder's CMake library may link only libraries of its own or lower layers.
The CLI goes further: besides the tooling layer, the engine, the host core,
the server and the object model, it may include only the few lower headers
whose types the engine's API speaks in (CLI_API_HEADERS).

Every folder with C++ sources must have a layer: a new folder fails the
check until it is placed in LAYERS.

It also holds the plugin row to being the registry: no in-tree plugin's
name (the `.name = "..."` of InTreePlugins(), runtime/sched/profile.cpp)
appears as a string literal in the runtime, the server or the CLI outside
that table. What C++ knows of a plugin is a field or hook of its row.

usage: scripts/check_layers.py [--list]
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Lowest first; folders on one line are one layer.
LAYERS = [
    ["support"],
    ["k8s"],
    ["runtime/columnar"],  # data and its bookkeeping: below the compiler, which it never calls
    ["compiler/lang", "stdlib"],  # the language's vocabulary; stdlib/ is data (builtins.def, the embedded sources)
    ["grammar", "compiler/syntax", "compiler/cel"],
    ["compiler/sema"],
    ["compiler/binding"],
    ["compiler/ir"],
    ["compiler/lower"],
    ["compiler/passes"],
    ["compiler/driver"],
    ["compiler/codegen"],
    ["runtime/dra"],
    ["runtime/interp"],
    ["runtime/sched"],
    ["runtime/engine"],
    ["runtime/host", "include"],
    ["runtime/tooling"],
    ["server"],
    ["cli"],
    # Above everything: they may use any layer.
    ["tests", "benchmarks", "examples"],
]

# What the CLI may include: these folders (any header) ...
CLI_FOLDERS = {"cli", "support", "k8s", "runtime/engine", "runtime/host", "runtime/tooling", "server"}
# ... and the headers of the types the engine's API takes and returns
# (a profile, a decision's words, the node table and what loading it
# reported), and the formatter `fmt` runs.
CLI_API_HEADERS = {
    "runtime/sched/profile.h",
    "runtime/sched/explain.h",
    "runtime/columnar/node_table.h",
    "runtime/columnar/cluster_loader.h",
    "compiler/syntax/formatter.h",
}

SOURCE_EXTENSIONS = (".h", ".cpp", ".c", ".def")
SKIP_DIRS = {"build", ".git", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ADD_LIBRARY = re.compile(r"add_library\(\s*(\w+)")
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)


def layer_of(path):
    """(rank, folder) of the longest layer folder that holds `path`, else None."""
    best = None
    for rank, folders in enumerate(LAYERS):
        for folder in folders:
            if path == folder or path.startswith(folder + "/"):
                if best is None or len(folder) > len(best[1]):
                    best = (rank, folder)
    return best


def source_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTENSIONS) or name == "CMakeLists.txt":
                yield os.path.relpath(os.path.join(dirpath, name), ROOT)


REGISTRY = "runtime/sched/profile.cpp"
ROW_NAME = re.compile(r'\.name\s*=\s*"(\w+)"')
REGISTRY_SCOPE = ("runtime/", "server/", "cli/", "include/")


def plugin_names_outside_the_row(files):
    """Problems: a plugin's name quoted in C++ of REGISTRY_SCOPE outside REGISTRY."""
    names = set(ROW_NAME.findall(open(os.path.join(ROOT, REGISTRY), encoding="utf-8").read()))
    if len(names) < 10:
        return [f"{REGISTRY}: found {len(names)} plugin rows; the check reads `.name = \"...\"`"]
    quoted = re.compile(r'"(' + "|".join(sorted(names)) + r')"')
    problems = []
    for path in files:
        if path == REGISTRY or not path.startswith(REGISTRY_SCOPE) or not path.endswith((".h", ".cpp", ".c")):
            continue
        for line_no, line in enumerate(open(os.path.join(ROOT, path), encoding="utf-8", errors="replace"), 1):
            code = line.split("//", 1)[0]
            if code.lstrip().startswith(("*", "/*")):
                continue  # a block comment's line
            for m in quoted.finditer(code):
                problems.append(f"{path}:{line_no}: names the plugin {m.group(1)}: say it with a field or hook "
                                f"of its row ({REGISTRY})")
    return problems


def main():
    problems = []
    files = list(source_files())
    # Which folder each library is made in.
    library_folder = {}
    for path in files:
        if os.path.basename(path) == "CMakeLists.txt":
            text = open(os.path.join(ROOT, path), encoding="utf-8").read()
            for name in ADD_LIBRARY.findall(text):
                library_folder[name] = os.path.dirname(path) or "."
    for path in files:
        folder = os.path.dirname(path)
        if folder == "":
            continue  # the top-level CMakeLists.txt
        own = layer_of(path)
        if own is None:
            problems.append(f"{path}: its folder has no layer; place `{folder}` in LAYERS (scripts/check_layers.py)")
            continue
        rank, own_folder = own
        text = open(os.path.join(ROOT, path), encoding="utf-8", errors="replace").read()
        if os.path.basename(path) == "CMakeLists.txt":
            for target, libs in LINK.findall(text):
                for lib in re.findall(r"\b(policy\w*)\b", libs):
                    where = library_folder.get(lib)
                    other = layer_of(where) if where else None
                    if other is not None and other[0] > rank:
                        problems.append(f"{path}: {target} links {lib} ({where}), a layer above `{own_folder}`")
            continue
        for line_no, included in ((text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)):
            if "/" not in included:
                continue  # beside the file, or a generated or system header
            other = layer_of(included)
            if other is None:
                if os.path.exists(os.path.join(ROOT, included)):
                    problems.append(f"{path}:{line_no}: includes {included}, whose folder has no layer")
                continue
            if other[0] > rank:
                problems.append(f"{path}:{line_no}: includes {included} ({other[1]}), a layer above `{own_folder}`")
            elif own_folder == "cli" and other[1] not in CLI_FOLDERS and included not in CLI_API_HEADERS:
                problems.append(f"{path}:{line_no}: includes {included}: the CLI goes through the engine's API and "
                                "the tooling layer (scripts/check_layers.py, CLI_API_HEADERS)")
    problems += plugin_names_outside_the_row(files)
    if "--list" in sys.argv:
        for rank, folders in enumerate(LAYERS):
            print(f"{rank:2}  {'  '.join(folders)}")
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} include{'s' if len(problems) != 1 else ''} or links across layers "
          "or plugin names outside their row")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
