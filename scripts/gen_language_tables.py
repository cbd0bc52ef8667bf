#!/usr/bin/env python3
"""Regenerates the record-field and builtin tables of docs/language.md from
compiler/lang/schema.def and stdlib/builtins.def. `--check` fails when the
page is not what would be written."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def type_text(t):
    t = t.strip()
    t = t.replace("t.String()", "string").replace("t.Int()", "int").replace("t.Bool()", "bool")
    t = t.replace("t.Resources()", "resources")
    t = re.sub(r"t\.Map\((\w+)\)", r"map<string, \1>", t)
    t = re.sub(r"t\.Record\((\w+)\)", r"\1", t)
    t = re.sub(r"t\.List\(([\w<>, ]+)\)", r"list<\1>", t)
    return t


def fields():
    text = open(os.path.join(ROOT, "compiler/lang/schema.def"), encoding="utf-8").read()
    rows = re.findall(r'FIELD\((\w+),\s*(\w+),\s*"(\w+)",\s*(.+?),\s*(kPod|kNode),\s*"((?:[^"\\]|\\.)*)"\)', text)
    out = ["| record | field | type | side | meaning |", "| --- | --- | --- | --- | --- |"]
    for _, record, name, t, side, doc in rows:
        out.append(f"| `{record}` | `{name}` | `{type_text(t)}` | {'pod' if side == 'kPod' else 'node'} | {doc} |")
    return "\n".join(out)


def builtins():
    text = open(os.path.join(ROOT, "stdlib/builtins.def"), encoding="utf-8").read()
    rows = re.findall(r'BUILTIN\((\w+),\s*"(\w+)",\s*(\w+),\s*(\d+),\s*(\d+),\s*(\w+),\s*([\w |]+),\s*"((?:[^"\\]|\\.)*)"\)', text)
    out = ["| builtin | kind | evaluated by | meaning |", "| --- | --- | --- | --- |"]
    names = {"kFold": "folding", "kInterp": "interpreter", "kJit": "JIT"}
    for _, name, kind, _arity, _cost, reads, backends, doc in rows:
        what = 'function' if kind == 'kFunction' else 'method'
        if reads == 'kCluster':
            what += ', cluster'
        by = ", ".join(names[b.strip()] for b in backends.split("|"))
        out.append(f"| `{name}` | {what} | {by} | {doc} |")
    return "\n".join(out)


def render(page):
    for tag, table in (("fields", fields()), ("builtins", builtins())):
        page = re.sub(rf"(<!-- {tag}: [^\n]*-->\n).*?(\n<!-- /{tag} -->)", lambda m: m.group(1) + table + m.group(2),
                      page, flags=re.S)
    return page


def main():
    path = os.path.join(ROOT, "docs/language.md")
    current = open(path, encoding="utf-8").read()
    wanted = render(current)
    if "--check" in sys.argv:
        if wanted != current:
            print("docs/language.md tables are out of date: run scripts/gen_language_tables.py")
            print("0 passed, 1 failed")
            return 1
        print("1 passed, 0 failed")
        return 0
    open(path, "w", encoding="utf-8").write(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
