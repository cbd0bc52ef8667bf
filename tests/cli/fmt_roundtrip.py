#!/usr/bin/env python3
"""`policyc fmt` keeps every policy the same program: for every .policy file
of the project that parses (stdlib/, policies/, examples/, tests/), the
formatted text must give the same syntax tree and the same IR as the file
(`policyc compile --emit=ast` and `--emit=ir`, which print no positions),
formatting it again must change nothing, and its comments must all still be
there, in order.

  python3 tests/cli/fmt_roundtrip.py --policyc build/policyc
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile


def run(args, stdin=None):
    return subprocess.run(args, capture_output=True, text=True, input=stdin)


def comments(text):
    # Comment text in order: `#` or `//` outside strings (the test files keep
    # no `#` inside strings on comment lines that matter; strings are removed first).
    no_strings = re.sub(r'"(\\.|[^"\\\n])*"|\'[^\'\n]*\'', '""', text)
    return [m.group(0).rstrip() for m in re.finditer(r'(#|//)[^\n]*', no_strings)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    policyc = ap.parse_args().policyc
    files = sorted(set(glob.glob("stdlib/**/*.policy", recursive=True) + glob.glob("policies/**/*.policy", recursive=True)
                       + glob.glob("examples/**/*.policy", recursive=True) + glob.glob("tests/**/*.policy", recursive=True)))
    passed = failed = refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            once = run([policyc, "fmt", path])
            if once.returncode == 2:
                refused += 1  # a file with errors, kept as a test of them
                continue
            out = os.path.join(tmp, os.path.basename(path))
            open(out, "w").write(once.stdout)
            problems = []
            for emit in ("ast", "ir"):
                a = run([policyc, "compile", f"--emit={emit}", path])
                b = run([policyc, "compile", f"--emit={emit}", out])
                if a.returncode != b.returncode or a.stdout != b.stdout:
                    problems.append(f"--emit={emit} differs")
            twice = run([policyc, "fmt", out])
            if twice.stdout != once.stdout:
                problems.append("formatting the formatted file changes it")
            if comments(open(path).read()) != comments(once.stdout):
                problems.append("the comments differ")
            if problems:
                failed += 1
                print(f"FAIL {path}: {'; '.join(problems)}")
            else:
                passed += 1
    if passed == 0:
        print("FAIL no file was checked")
        failed += 1
    print(f"fmt round trip: {passed} passed, {failed} failed ({refused} files with syntax errors left alone)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
