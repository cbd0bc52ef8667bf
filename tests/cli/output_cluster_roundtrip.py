#!/usr/bin/env python3
"""`policyc schedule --output-cluster` writes a cluster that reads back as
the run left it: for each run below, the file loads (PyYAML or json), keeps
the format of the input, has every placed pod bound to the node the run
chose, has no victim, keeps every other object, has every claim of a placed
pod bound (spec.volumeName, the volume's claimRef naming it) or marked for
provisioning on the pod's node (the selected-node annotation), and a second
`schedule` of it finds the same pods Pending for the same reasons and places
nothing new; and runs chained through --output-cluster place as many pods
as one run of the same queue.

  python3 tests/cli/output_cluster_roundtrip.py --policyc build/policyc
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

RUNS = [
    ["--cluster", "tests/data/storage-cluster.yaml", "--pending", "tests/data/helm-web-release.yaml"],
    ["--cluster", "tests/data/schedule-preempt-cluster.yaml", "--pending", "tests/data/schedule-preempt-pending.yaml"],
    ["--cluster", "examples/cluster.yaml", "--fill", "examples/pods/web-one-per-node.yaml"],
    ["--cluster", "examples/cluster.yaml", "--pending", "examples/pods/gpu-training.yaml"],
    ["--cluster", "tests/data/pending-snapshot.yaml"],  # the snapshot's own Pending pods
    ["--cluster", "tests/data/bom-cluster.json", "--pending", "examples/pods/web.yaml"],  # JSON in, JSON out
    ["--cluster", "tests/data/local-pv-pending.yaml"],  # a claim bound to a local volume by the bind
    # DRA: claims made from templates, allocated and reserved for the pods placed
    ["--cluster", "tests/data/dra-cluster.yaml", "--pending", "tests/data/dra-workers-a.yaml", "--pending",
     "tests/data/dra-workers-b.yaml"],
]

# Runs chained through --output-cluster place what one run of the same
# queue places: the second run sees the first one's claims made and devices
# held (before, it saw the devices free and booked them twice).
CHAINS = [
    ("tests/data/dra-cluster.yaml", ["tests/data/dra-workers-a.yaml", "tests/data/dra-workers-b.yaml"]),
]


def schedule(policyc, args):
    p = subprocess.run([policyc, "schedule", "-o", "jsonl"] + args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"schedule {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def load(path, as_json):
    with open(path) as f:
        return json.load(f) if as_json else yaml.safe_load(f)


def items_of(path):
    """Objects of a snapshot file (a List, or a stream of documents)."""
    with open(path) as f:
        text = f.read()
    docs = [json.loads(text)] if text.lstrip().startswith("{") else [d for d in yaml.safe_load_all(text) if d]
    out = []
    for d in docs:
        out.extend(d.get("items", []) if d.get("kind", "").endswith("List") else [d])
    return out


def key(obj):
    m = obj.get("metadata", {})
    return f"{m.get('namespace') or 'default'}/{m.get('name')}"


def claim_problems(doc, pods, records):
    """Each claim of a pod the run placed is bound, or waits for a volume
    provisioned on the pod's node, as kube-scheduler's binder leaves it."""
    claims = {key(o): o for o in doc["items"] if o.get("kind") == "PersistentVolumeClaim"}
    volumes = {o["metadata"]["name"]: o for o in doc["items"] if o.get("kind") == "PersistentVolume"}
    problems = []
    for r in records:
        pod = pods.get(r["pod"])
        if r["node"] is None or pod is None:
            continue
        namespace = pod["metadata"].get("namespace") or "default"
        for v in pod.get("spec", {}).get("volumes") or []:
            name = (v.get("persistentVolumeClaim") or {}).get("claimName")
            claim = claims.get(f"{namespace}/{name}") if name else None
            if claim is None:
                continue
            bound = (claim.get("spec") or {}).get("volumeName")
            selected = ((claim["metadata"].get("annotations") or {}).get("volume.kubernetes.io/selected-node"))
            if bound:
                ref = ((volumes.get(bound) or {}).get("spec") or {}).get("claimRef") or {}
                if ref.get("name") != name or (ref.get("namespace") or "default") != namespace:
                    problems.append(f"claim {namespace}/{name} names volume {bound}, whose claimRef is {ref}")
            elif selected != r["node"] and not claim.get("status", {}).get("phase") == "Bound":
                problems.append(f"claim {namespace}/{name} of {r['pod']} (on {r['node']}) is neither bound nor selected there")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, run in enumerate(RUNS):
            out = os.path.join(tmp, f"out{n}")
            records = schedule(args.policyc, run + ["--output-cluster", out])
            snapshot = run[run.index("--cluster") + 1]
            as_json = open(snapshot).read().lstrip().startswith("{")
            doc = load(out, as_json)
            problems = []
            if doc.get("apiVersion") != "v1" or doc.get("kind") != "List":
                problems.append("not a v1/List")
            pods = {key(o): o for o in doc["items"] if o.get("kind") == "Pod"}
            evicted = {v for r in records for v in r["preempted"]}
            for r in records:
                pod = pods.get(r["pod"])
                if r["node"] is not None and (pod is None or pod.get("spec", {}).get("nodeName") != r["node"]):
                    problems.append(f"{r['pod']} is not bound to {r['node']}")
                if r["node"] is None and "--fill" not in run and (pod is None or pod.get("spec", {}).get("nodeName")):
                    problems.append(f"{r['pod']} stayed Pending but is not there unbound")
            for v in evicted:
                if v in pods:
                    problems.append(f"victim {v} is still there")
            problems += claim_problems(doc, pods, records)
            others = {(o.get("kind"), key(o)) for o in items_of(snapshot) if o.get("kind") != "Pod"}
            written = {(o.get("kind"), key(o)) for o in doc["items"]}
            for missing in sorted(others - written):
                problems.append(f"{missing[0]} {missing[1]} is missing")
            again = schedule(args.policyc, ["--cluster", out])
            pending = {r["pod"]: r["summary"] for r in records if r["node"] is None and "--fill" not in run}
            for r in again:
                if r["node"] is not None:
                    problems.append(f"scheduling again placed {r['pod']}")
                elif pending.get(r["pod"]) != r["summary"]:
                    problems.append(f"scheduling again: {r['pod']} says `{r['summary']}`")
            if len(again) != len(pending):
                problems.append(f"scheduling again found {len(again)} Pending pods, not {len(pending)}")
            label = " ".join(run)
            if problems:
                failures += 1
                print(f"FAIL {label}")
                for p in problems:
                    print(f"  {p}")
            else:
                print(f"ok   {label}")
        for cluster, pendings in CHAINS:
            one = schedule(args.policyc, ["--cluster", cluster] + [a for p in pendings for a in ("--pending", p)])
            at = cluster
            chained = []
            for n, pending in enumerate(pendings):
                out = os.path.join(tmp, f"chain{n}.yaml")
                chained += schedule(args.policyc, ["--cluster", at, "--pending", pending, "--output-cluster", out])
                at = out
            placed_one = sum(r["node"] is not None for r in one)
            placed_chained = sum(r["node"] is not None for r in chained)
            label = f"chained {cluster} " + " then ".join(pendings)
            if placed_one != placed_chained or len(one) != len(chained):
                failures += 1
                print(f"FAIL {label}: one run placed {placed_one} of {len(one)}, the chained runs {placed_chained} of "
                      f"{len(chained)}")
            else:
                print(f"ok   {label}: {placed_one} of {len(one)} placed either way")
    print(f"{len(RUNS) + len(CHAINS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
