#!/usr/bin/env python3
"""Runs every command example of README.md and docs/*.md and compares its
output with the output shown, so an example cannot go stale.

An example is a fenced block whose lines starting with `$ ` are commands
(`policyc ...` runs build/policyc; `build/...` runs as written, from the
repository's root) and whose other lines, up to the next command, are the
output shown. A line that is `...` alone stands for any number of lines;
`...` inside a line stands for any text there (a timing); trailing spaces
and blank lines at the ends are not compared. The output is
stdout, or stderr then stdout where the example shows both. A command that
runs in the background (`&`), or is not policyc's (`curl`), is not run: the
extender's examples are held by tests/server/extender_test.py. A command
naming a file the repository lacks fails: examples use the repository's files.

Also: every relative link of those files resolves inside the repository.

usage: tests/docs/examples_run.py --policyc build/policyc [--update]

--update writes the printed output in place of the shown one for every
failing example without `...` (review the diff: an example's output changing
may be a bug).
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))


def examples(path):
    """(line number, command, shown output lines, (first, end) output line numbers) for each command."""
    out = []
    block = None
    with open(path) as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if block is None:
                block = []
            else:
                out.extend(commands(block))
                block = None
            continue
        if block is not None:
            block.append((number, line))
    return out


def commands(block):
    found = []
    for number, line in block:
        if line.startswith("$ "):
            found.append([number, line[2:], [], number + 1])
        elif found:
            found[-1][2].append(line)
            found[-1][3] = number + 1
    return [(n, c, trim(shown), (n + 1, end)) for n, c, shown, end in found]


def trim(lines):
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def same_line(shown, got):
    """A shown line is the printed one; `...` inside it stands for any text (timings)."""
    if "..." not in shown:
        return shown == got
    return re.fullmatch(".*".join(re.escape(part) for part in shown.split("...")), got) is not None


def matches(shown, got):
    """Whether `got` is `shown`, a `...` line standing for any lines."""
    memo = {}

    def at(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(shown):
            ok = j == len(got)
        elif shown[i].strip() == "...":
            ok = any(at(i + 1, k) for k in range(j, len(got) + 1))
        else:
            ok = j < len(got) and same_line(shown[i], got[j]) and at(i + 1, j + 1)
        memo[(i, j)] = ok
        return ok

    return at(0, 0)


def links(path):
    """Relative link targets of a markdown file that leave the repository or name nothing."""
    bad = []
    text = open(path).read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
        if not resolved.startswith(ROOT + os.sep) or not os.path.exists(resolved):
            bad.append(target)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    policyc = os.path.abspath(args.policyc)
    os.chdir(ROOT)
    passed = failed = skipped = 0
    for path in ["README.md"] + sorted(glob.glob("docs/*.md")):
        for target in links(os.path.join(ROOT, path)):
            failed += 1
            print(f"FAIL {path}: the link `{target}` leaves the repository or names nothing")
        updates = []  # (first line, end line, new lines), 1-based, end exclusive
        for number, command, shown, (first, end) in examples(path):
            words = command.split()
            if not words or command.rstrip().endswith("&") or not (words[0] == "policyc" or words[0].startswith("build/")):
                skipped += 1
                continue
            argv = shlex.split(command.split(" #")[0])
            if argv[0] in ("policyc", "build/policyc"):
                argv[0] = policyc
            missing = [a for a in argv[1:] if not a.startswith("-") and ("/" in a or re.search(r"\.(ya?ml|json|policy)$", a))
                       and not os.path.exists(a)]
            where = f"{path}:{number}: {command}"
            if missing:
                failed += 1
                print(f"FAIL {where}\n  names files the repository lacks: {missing}")
                continue
            p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            outs = [p.stdout, p.stderr + p.stdout]
            if any(matches(shown, trim(o.split("\n"))) for o in outs):
                passed += 1
                continue
            failed += 1
            got = trim(p.stdout.split("\n")) or trim(p.stderr.split("\n"))
            if args.update and not any(line.strip() == "..." for line in shown):
                updates.append((first, end, got))
            print(f"FAIL {where}\n  shown:\n" + "\n".join("    " + s for s in shown[:30]) +
                  "\n  printed:\n" + "\n".join("    " + s for s in got[:30]))
        if updates:
            with open(path) as f:
                lines = f.read().split("\n")
            for first, end, got in sorted(updates, reverse=True):
                # keep the block's closing fence: `end` is the line after the output
                lines[first - 1:end - 1] = got
            with open(path, "w") as f:
                f.write("\n".join(lines))
            print(f"updated {len(updates)} example(s) of {path}")
    print(f"doc examples: {passed} passed, {failed} failed ({skipped} not run: in the background, or not policyc's)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
