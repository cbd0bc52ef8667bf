#!/usr/bin/env python3
"""Every command with structured output prints the same document with
`-o yaml` as with `-o json`: each pair is loaded (PyYAML reads YAML 1.1,
the strictest about what a plain scalar means) and compared.

  python3 tests/cli/yaml_matches_json.py --policyc build/policyc
"""
import argparse
import json
import subprocess
import sys

import yaml

COMMANDS = [
    ["check", "--cluster", "examples/cluster.yaml", "--pod", "examples/pods/gpu-training.yaml"],
    ["check", "--cluster", "tests/data/storage-cluster.yaml", "--pod", "tests/data/helm-web-release.yaml"],
    ["check", "--cluster", "tests/data/pending-snapshot.yaml", "--all-pending"],
    ["check", "--cluster", "tests/data/storage-cluster.yaml", "--pod", "tests/data/pod-missing-claim.yaml"],
    ["inspect", "--cluster", "examples/cluster.yaml"],
    ["inspect", "--cluster", "tests/data/storage-cluster.yaml"],
    ["inspect", "--pod", "examples/pods/web-one-per-node.yaml"],
    ["schedule", "--cluster", "tests/data/schedule-preempt-cluster.yaml", "--pending", "tests/data/schedule-preempt-pending.yaml"],
    ["lint", "tests/data/lint/workloads.yaml", "--cluster", "examples/cluster.yaml"],
    ["test", "tests/policy", "--policies", "policies", "--coverage"],
    ["test", "tests/data/policy-tests-misspelled/misspelled-expect.yaml"],
]


def run(policyc, args, fmt):
    p = subprocess.run([policyc] + args + ["-o", fmt], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} -o {fmt}: exit {p.returncode}\n{p.stderr}")
    return p.stdout, p.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", default="build/policyc")
    a = ap.parse_args()
    passed = failed = 0
    for args in COMMANDS:
        js, js_exit = run(a.policyc, args, "json")
        ys, ys_exit = run(a.policyc, args, "yaml")
        if json.loads(js) == yaml.safe_load(ys) and js_exit == ys_exit:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {' '.join(args)}: -o yaml differs from -o json")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
