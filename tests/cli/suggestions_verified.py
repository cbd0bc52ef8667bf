#!/usr/bin/env python3
"""Every suggestion `policyc check` makes is true: the change is made to the
pod's YAML (or to the snapshot) here, `check` runs again on the result, and
the nodes it then finds feasible (beyond those feasible before) must be
exactly the suggestion's. Kinds this script cannot apply to a file are
counted and reported; the run fails if none of a kind it knows was checked.

  python3 tests/cli/suggestions_verified.py --policyc build/policyc
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

import yaml

CASES = [
    ("examples/cluster.yaml", "examples/pods/gpu-training.yaml"),
    ("examples/cluster.yaml", "examples/pods/web-one-per-node.yaml"),
    ("examples/cluster.yaml", "tests/data/pod-node-selector-typo.yaml"),
    ("examples/cluster.yaml", "tests/data/suggest/gpu-three-untolerated.yaml"),
    ("examples/cluster.yaml", "tests/data/suggest/web-spread-hostname.yaml"),
    ("examples/cluster.yaml", "tests/data/suggest/dns-host-port.yaml"),
    ("tests/data/split-snapshot", "tests/data/pod-with-node-name.yaml"),
    ("tests/data/dra-gpu-memory-cluster.yaml", "tests/data/dra-busy-80gi.yaml"),
]


def check(policyc, cluster, pod):
    p = subprocess.run([policyc, "check", "--cluster", cluster, "--pod", pod, "-o", "json"],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"check --cluster {cluster} --pod {pod}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def feasible(doc):
    return {n["name"] for n in doc["nodes"] if n["feasible"]}


def pod_spec(obj):
    """The pod spec of a Pod or of a workload's template."""
    if obj["kind"] == "Pod":
        return obj["spec"]
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def apply_to_pod(obj, change):
    """Makes `change` to the pod object; False when this script cannot."""
    kind = change["kind"]
    if obj.get("kind") not in ("Pod", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob"):
        return False  # a manifest whose first object is a ResourceClaim: DRA edits are not made here
    spec = pod_spec(obj)
    if kind == "tolerate":
        t = {"key": change["key"], "effect": change["effect"]}
        if change["value"]:
            t.update(operator="Equal", value=change["value"])
        else:
            t["operator"] = "Exists"
        spec.setdefault("tolerations", []).append(t)
    elif kind == "lower-request":
        containers = spec["containers"]
        if len(containers) != 1 or spec.get("initContainers") or spec.get("overhead"):
            return False
        res = containers[0].setdefault("resources", {})
        limits = res.get("limits", {})
        requests = res.setdefault("requests", {})
        if change["resource"] not in requests and change["resource"] in limits:
            requests[change["resource"]] = limits[change["resource"]]
        requests[change["resource"]] = change["to"]
        if change["resource"] in limits:
            limits[change["resource"]] = change["to"]
    elif kind == "drop-node-selector":
        del spec["nodeSelector"][change["key"]]
    elif kind == "drop-pod-anti-affinity-term":
        del spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][int(change["term"])]
    elif kind == "drop-pod-affinity-term":
        del spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][int(change["term"])]
    elif kind == "raise-max-skew":
        spec["topologySpreadConstraints"][int(change["constraint"])]["maxSkew"] = int(change["maxSkew"])
    elif kind == "schedule-anyway":
        spec["topologySpreadConstraints"][int(change["constraint"])]["whenUnsatisfiable"] = "ScheduleAnyway"
    elif kind == "drop-node-name":
        del spec["nodeName"]
    elif kind == "drop-node-affinity":
        del spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    else:
        return False
    return True


def snapshot_items(path):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    items = []
    for d in docs:
        items.extend(d["items"] if d.get("kind", "").endswith("List") else [d])
    return items


def apply_to_cluster(items, change, suggestion):
    """The snapshot's objects with `change` made; None when this script cannot."""
    kind = change["kind"]
    if kind == "remove-pods":
        gone = set(suggestion["pods"])
        return [o for o in items if not (o["kind"] == "Pod" and
                f'{o["metadata"].get("namespace", "default")}/{o["metadata"]["name"]}' in gone)]
    if kind == "add-node":
        out = list(items)
        for like, name in zip(change["like"].split(","), suggestion["nodes"]):
            node = copy.deepcopy(next(o for o in items if o["kind"] == "Node" and o["metadata"]["name"] == like))
            node["metadata"]["name"] = name
            labels = node["metadata"].setdefault("labels", {})
            if "kubernetes.io/hostname" in labels:
                labels["kubernetes.io/hostname"] = name
            spec = node.setdefault("spec", {})
            spec.pop("unschedulable", None)
            spec["taints"] = [t for t in spec.get("taints", []) if t["key"] != "node.kubernetes.io/unschedulable"]
            out.append(node)
            # Its node-local ResourceSlices, as pools of the new node's own (devices no claim holds).
            names = {o["metadata"]["name"] for o in items if o["kind"] == "ResourceSlice"}
            for sl in [o for o in items if o["kind"] == "ResourceSlice" and o["spec"].get("nodeName") == like]:
                sl = copy.deepcopy(sl)
                sl["spec"]["nodeName"] = name
                pool = sl["spec"]["pool"]
                pool["name"] = name if pool["name"] == like else pool["name"] + "-copy"
                while sl["metadata"]["name"] in names:
                    sl["metadata"]["name"] += "-copy"
                names.add(sl["metadata"]["name"])
                out.append(sl)
        return out
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    policyc = ap.parse_args().policyc
    passed, failed, skipped = 0, 0, {}
    checked_kinds = set()
    with tempfile.TemporaryDirectory() as tmp:
        for cluster, pod_path in CASES:
            before = check(policyc, cluster, pod_path)
            if "suggestions" not in before or not before["suggestions"]:
                print(f"FAIL {pod_path}: no suggestions")
                failed += 1
                continue
            docs = [d for d in yaml.safe_load_all(open(pod_path)) if d]
            for i, s in enumerate(before["suggestions"]):
                what = " + ".join(c["kind"] for c in s["changes"])
                if s["target"] == "pod":
                    obj = copy.deepcopy(docs[0])
                    if not all(apply_to_pod(obj, c) for c in s["changes"]):
                        skipped[what] = skipped.get(what, 0) + 1
                        continue
                    path = os.path.join(tmp, f"pod-{i}.yaml")
                    yaml.safe_dump(obj, open(path, "w"))
                    after = check(policyc, cluster, path)
                else:
                    change = s["changes"][0]
                    items = apply_to_cluster(snapshot_items(cluster), change, s)
                    if items is None:
                        skipped[what] = skipped.get(what, 0) + 1
                        continue
                    path = os.path.join(tmp, f"cluster-{i}.yaml")
                    yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, open(path, "w"))
                    after = check(policyc, path, pod_path)
                opened = sorted(feasible(after) - feasible(before))
                if s["target"] == "cluster" and s["changes"][0]["kind"] == "remove-pods":
                    opened = sorted(feasible(after) & set(s["nodes"]))
                if opened == sorted(s["nodes"]):
                    passed += 1
                    checked_kinds.update(c["kind"] for c in s["changes"])
                else:
                    failed += 1
                    print(f"FAIL {pod_path}: {what}: says {sorted(s['nodes'])}, deciding again gives {opened}")
    for what, n in sorted(skipped.items()):
        print(f"not applied here: {what} ({n})")
    expected = {"tolerate", "lower-request", "drop-node-selector", "drop-pod-anti-affinity-term", "raise-max-skew",
                "add-node", "remove-pods"}
    for kind in sorted(expected - checked_kinds):
        print(f"FAIL no suggestion of kind {kind} was checked")
        failed += 1
    print(f"suggestions verified: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
