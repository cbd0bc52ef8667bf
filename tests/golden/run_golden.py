#!/usr/bin/env python3
"""Golden tests: run policyc on each case and compare exit status, stdout and
stderr with the recorded `.expected` file.

A case is an input file under tests/golden/<suite>/ (any extension but
.expected/.args) with NAME.expected beside it; NAME.args may give the
arguments ({file} = the input path, {dir} = the case folder), else they are
`check {file}` for .policy files under sema/, `compile {file} --emit=ast` for
other .policy files, `inspect --pod {file}` for names
starting with pod-, `inspect --cluster {file}` otherwise. A case may also be NAME.args alone (no input file).

usage: run_golden.py --policyc BIN [--update-goldens] [case ...]
Prints one line per failing case and ends with `N passed, N failed`.
Also fails when a diagnostic code of support/diagnostic_codes.def
appears in no expected output.
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_cases(paths):
    cases = {}
    for p in paths:
        if os.path.isfile(p):  # one case: its input, .args or .expected file
            stem, ext = os.path.splitext(p)
            cases.setdefault(stem, None)
            if ext not in (".args", ".expected"):
                cases[stem] = p
            continue
        for dirpath, _, names in os.walk(p):
            for n in sorted(names):
                stem, ext = os.path.splitext(n)
                if ext == ".expected":
                    continue
                cases.setdefault(os.path.join(dirpath, stem), None)
                if ext != ".args":
                    cases[os.path.join(dirpath, stem)] = os.path.join(dirpath, n)
    return sorted(cases.items())


def args_for(stem, input_file):
    args_file = stem + ".args"
    rel = lambda p: os.path.relpath(p, ROOT)
    if os.path.exists(args_file):
        text = open(args_file, encoding="utf-8").read().strip()
        text = text.replace("{file}", rel(input_file) if input_file else "").replace("{dir}", rel(os.path.dirname(stem)))
        return shlex.split(text)
    if os.path.basename(os.path.dirname(stem)) == "yaml-policy":
        return ["check", rel(input_file)]
    if input_file.endswith(".policy"):
        if os.path.basename(os.path.dirname(stem)) == "sema":
            return ["check", rel(input_file)]
        return ["compile", rel(input_file), "--emit=ast"]
    flag = "--pod" if os.path.basename(stem).startswith("pod-") else "--cluster"
    return ["inspect", flag, rel(input_file)]


def render(code, out, err):
    return f"exit: {code}\n--- stdout\n{out}--- stderr\n{err}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    ap.add_argument("--update-goldens", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once")
    ap.add_argument("cases", nargs="*")
    opts = ap.parse_args()
    policyc = os.path.abspath(opts.policyc)
    paths = opts.cases or [os.path.join(HERE, d) for d in sorted(os.listdir(HERE)) if os.path.isdir(os.path.join(HERE, d))]
    passed = failed = 0
    seen = ""

    def run(case):
        stem, input_file = case
        argv = [policyc] + args_for(stem, input_file)
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=60)
        return render(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))

    cases = list(find_cases(paths))
    # Cases are independent processes: run --jobs at once, report in order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        outputs = list(pool.map(run, cases))
    for (stem, input_file), got in zip(cases, outputs):
        expected_file = stem + ".expected"
        name = os.path.relpath(stem, HERE)
        if opts.update_goldens:
            with open(expected_file, "w", encoding="utf-8") as f:
                f.write(got)
        want = open(expected_file, encoding="utf-8").read() if os.path.exists(expected_file) else None
        seen += got
        if want == got:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {name}: output differs (run with --update-goldens to record; diff below)")
            import difflib
            for line in difflib.unified_diff((want or "").splitlines(), got.splitlines(), "expected", "got", lineterm="", n=1):
                print("    " + line)
    if not opts.cases:
        table = open(os.path.join(ROOT, "support/diagnostic_codes.def"), encoding="utf-8").read()
        for code in re.findall(r'DIAG\(\w+,\s*"(\w+)"', table):
            if f"[{code}]" not in seen:
                failed += 1
                print(f"FAIL coverage: no golden case shows diagnostic {code}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
