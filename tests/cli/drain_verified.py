#!/usr/bin/env python3
"""`policyc drain`'s plan holds when it is replayed on the files: for each
drained node in order, the node leaves the snapshot with the pods it runs
(DaemonSet and mirror pods stay bound to it, which the loader ignores),
and each moved pod, in the plan's order, is checked with `policyc check`
against the snapshot as the earlier moves left it: the node the plan put it
on must be feasible; then it is bound there for the next. Also: the
headroom's "after" figures are those of the final snapshot.

  python3 tests/cli/drain_verified.py --policyc build/policyc
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

import yaml

CLUSTERS = ["examples/cluster.yaml", "tests/data/drain-cluster.yaml"]


def run(policyc, args):
    p = subprocess.run([policyc] + args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"policyc {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def key(obj):
    return f'{obj["metadata"].get("namespace", "default")}/{obj["metadata"]["name"]}'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    policyc = ap.parse_args().policyc
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cluster in CLUSTERS:
            plan = run(policyc, ["drain", "--cluster", cluster, "-o", "json"])
            docs = [d for d in yaml.safe_load_all(open(cluster)) if d]
            items = []
            for d in docs:
                items.extend(d["items"] if d.get("kind", "").endswith("List") else [d])
            snapshot = os.path.join(tmp, "snapshot.yaml")
            if not plan["drained"]:
                print(f"FAIL {cluster}: nothing drained, so nothing is checked")
                failed += 1
            for drained in plan["drained"]:
                moving = {m["pod"] for m in drained["moves"]}
                pods = {key(o): o for o in items if o["kind"] == "Pod" and key(o) in moving}
                items = [o for o in items if not (o["kind"] == "Node" and o["metadata"]["name"] == drained["node"])
                         and not (o["kind"] == "Pod" and key(o) in moving)]
                for move in drained["moves"]:
                    pod = copy.deepcopy(pods[move["pod"]])
                    del pod["spec"]["nodeName"]
                    pod.pop("status", None)
                    yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, open(snapshot, "w"))
                    pod_file = os.path.join(tmp, "pod.yaml")
                    yaml.safe_dump(pod, open(pod_file, "w"))
                    answer = run(policyc, ["check", "--cluster", snapshot, "--pod", pod_file, "-o", "json", "--no-suggest"])
                    feasible = {n["name"] for n in answer["nodes"] if n["feasible"]}
                    if move["to"] in feasible:
                        passed += 1
                    else:
                        failed += 1
                        print(f"FAIL {cluster}: {move['pod']} from {drained['node']} to {move['to']}: "
                              f"not feasible there ({answer['summary']})")
                    pod["spec"]["nodeName"] = move["to"]
                    items.append(pod)
            # The headroom after: the final snapshot's (a drain of no node measures it).
            yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, open(snapshot, "w"))
            final = run(policyc, ["drain", "--cluster", snapshot, "--max-drained", "0", "-o", "json"])
            before = {h["resource"]: (h["allocatableBefore"], h["freeBefore"]) for h in final["headroom"]}
            for h in plan["headroom"]:
                got = before.get(h["resource"], ("0", "0"))
                if got == (h["allocatableAfter"], h["freeAfter"]):
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL {cluster}: headroom of {h['resource']}: plan says {h['allocatableAfter']}, "
                          f"{h['freeAfter']}; the final snapshot has {got[0]}, {got[1]}")
    print(f"drain plans replayed: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
