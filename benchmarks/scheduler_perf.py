#!/usr/bin/env python3
"""kube-scheduler's own benchmark workloads, run through `policyc schedule`.

kube's CI holds kube-scheduler to a minimum throughput on the workloads of
test/integration/scheduler_perf (its performance-config.yaml files, the
`threshold:` of each `performance` workload, in pods/s). This script builds
those workloads from their published templates — nodes, init pods, the
measured pods, and the objects they need (PersistentVolumes and bound claims,
CSINodes, a DeviceClass, ResourceSlices and a ResourceClaimTemplate,
namespaces with labels) — then, per workload:

1. places the init pods (`policyc schedule --output-cluster`), untimed, as
   scheduler_perf does before it measures;
2. places the measured pods against that cluster with `--stats` and reports
   their pods/s beside kube's threshold, with how the decisions were made
   (templates, plans, full and incremental decisions);
3. checks the placements against the workload's intent: every pod placed,
   anti-affinity one per node, topology skew within maxSkew, volume and
   device limits kept, the DaemonSet's pods on their node, each extended
   resource's pod on the one node that has it.

    python3 benchmarks/scheduler_perf.py                    # every workload, published sizes
    python3 benchmarks/scheduler_perf.py --scale small      # the same shapes, small (the tests' tier)
    python3 benchmarks/scheduler_perf.py --workload SchedulingInTreePVs --keep /tmp/sp
    python3 benchmarks/scheduler_perf.py --baseline --repeat 5  # medians, with and without own volumes

Where they differ from the published templates (docs/performance.md):
nodes carry `kubernetes.io/hostname` (a kubelet sets it; scheduler_perf's
fake nodes lack it, which makes hostname anti-affinity vacuous) and an
allocatable equal to their capacity.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

CONTAINER = {"name": "pause", "image": "registry.k8s.io/pause:3.10.1", "ports": [{"containerPort": 80}],
             "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                           "requests": {"cpu": "100m", "memory": "500Mi"}}}


def node(name, labels=None, capacity=None):
    cap = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    cap.update(capacity or {})
    meta_labels = {"kubernetes.io/hostname": name}
    meta_labels.update(labels or {})
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": meta_labels},
            "spec": {}, "status": {"capacity": cap, "allocatable": dict(cap),
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, namespace, spec, labels=None):
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
            "creationTimestamp": "2026-01-01T00:00:00Z"}
    if labels:
        meta["labels"] = labels
    full = {"containers": [CONTAINER]}
    full.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": full, "status": {"phase": "Pending"}}


def pod_term(color, topology, namespaces=None, namespace_selector=None):
    term = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": topology}
    if namespaces:
        term["namespaces"] = namespaces
    if namespace_selector:
        term["namespaceSelector"] = {"matchLabels": namespace_selector}
    return term


def required_term(kind, color, topology, namespaces=None, namespace_selector=None):
    term = pod_term(color, topology, namespaces, namespace_selector)
    return {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def preferred_term(kind, color, topology, namespaces=None, namespace_selector=None):
    term = pod_term(color, topology, namespaces, namespace_selector)
    return {"affinity": {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": term}]}}}


# The pod templates of scheduler_perf/templates, as (spec, labels).
SHAPES = {
    "default": ({}, None),
    "anti-affinity": (required_term("podAntiAffinity", "green", "kubernetes.io/hostname", ["sched-1", "sched-0"]),
                      {"color": "green"}),
    "affinity": (required_term("podAffinity", "blue", "topology.kubernetes.io/zone", ["sched-1", "sched-0"]),
                 {"color": "blue"}),
    "preferred-affinity": (preferred_term("podAffinity", "red", "kubernetes.io/hostname", ["sched-1", "sched-0"]),
                           {"color": "red"}),
    "preferred-anti-affinity": (preferred_term("podAntiAffinity", "yellow", "kubernetes.io/hostname",
                                               ["sched-1", "sched-0"]), {"color": "yellow"}),
    "anti-affinity-ns": (required_term("podAntiAffinity", "green", "kubernetes.io/hostname",
                                       namespace_selector={"team": "devops"}), {"color": "green"}),
    "affinity-ns": (required_term("podAffinity", "blue", "topology.kubernetes.io/zone",
                                  namespace_selector={"team": "devops"}), {"color": "blue"}),
    "preferred-anti-affinity-ns": (preferred_term("podAntiAffinity", "green", "kubernetes.io/hostname",
                                                  namespace_selector={"team": "devops"}), {"color": "green"}),
    "preferred-affinity-ns": (preferred_term("podAffinity", "blue", "topology.kubernetes.io/zone",
                                             namespace_selector={"team": "devops"}), {"color": "blue"}),
    "node-affinity": ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone1", "zone2"]}]}]}}}}, None),
    "spreading": ({"topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"color": "blue"}}}]},
                  {"color": "blue"}),
    "preferred-spreading": ({"topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                                            "whenUnsatisfiable": "ScheduleAnyway",
                                                            "labelSelector": {"matchLabels": {"color": "blue"}}}]},
                            {"color": "blue"}),
    "secret": ({"volumes": [{"name": "secret", "secret": {"secretName": "secret"}}]}, None),
}


class Workload:
    """One scheduler_perf workload at one size: what to create, and its threshold."""

    # Whether its measured pods bring their own volume or claim; `--baseline`
    # then also runs the same pods without it (sizes["bare"]), in the same run.
    owns = False

    def __init__(self, name, threshold, sizes, small):
        self.name, self.threshold = name, threshold
        self.published, self.small = sizes, small

    def build(self, p):
        """(cluster objects, init pods, measured pods) for sizes `p`."""
        raise NotImplementedError

    def check(self, p, placed, cluster):
        """Problems with the placements `placed` (pod -> node); empty when kept."""
        return []


def zone_nodes(n, zones):
    return [node(f"node-{i}", {"topology.kubernetes.io/zone": zones[i % len(zones)]}) if zones else node(f"node-{i}")
            for i in range(n)]


def pods_of(shape, count, namespace, prefix):
    spec, labels = SHAPES[shape]
    return [pod(f"{prefix}-{i}", namespace, spec, labels) for i in range(count)]


class Plain(Workload):
    """Nodes, init pods and measured pods of pod templates (most of scheduler_perf)."""

    def __init__(self, name, threshold, sizes, small, init_shape, measure_shape, zones=None,
                 init_ns="default", measure_ns="default", intent=None):
        super().__init__(name, threshold, sizes, small)
        self.init_shape, self.measure_shape, self.zones = init_shape, measure_shape, zones
        self.init_ns, self.measure_ns, self.intent = init_ns, measure_ns, intent

    def build(self, p):
        nodes = zone_nodes(p["nodes"], self.zones)
        objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                   for ns in sorted({self.init_ns, self.measure_ns})]
        return (nodes + objects, pods_of(self.init_shape, p["init"], self.init_ns, "init"),
                pods_of(self.measure_shape, p["measure"], self.measure_ns, "pod"))

    def check(self, p, placed, cluster):
        if self.intent == "one-per-node":
            counts = Counter(placed.values())
            worst = max(counts.values(), default=0)
            return [f"{worst} anti-affinity pods share a node"] if worst > 1 else []
        if self.intent == "skew":
            zone_of = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
                       for n in cluster if n["kind"] == "Node"}
            counts = Counter(zone_of[n] for pod_name, n in placed.items() if pod_name.startswith("pod-"))
            skew = max(counts.values()) - min(counts.get(z, 0) for z in self.zones)
            return [f"skew {skew} over maxSkew 5: {dict(counts)}"] if skew > 5 else []
        return []


class NamespaceSelector(Plain):
    """Pods whose terms select namespaces by label: init pods spread over labelled namespaces."""

    def build(self, p):
        nodes = zone_nodes(p["nodes"], self.zones)
        spaces = [f"init-ns-{i}" for i in range(p["namespaces"])] + ["measure-ns-0"]
        objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": "devops"}}}
                   for ns in spaces]
        init = [q for i in range(p["namespaces"])
                for q in pods_of(self.init_shape, p["init_per_ns"], f"init-ns-{i}", "init")]
        return nodes + objects, init, pods_of(self.measure_shape, p["measure"], "measure-ns-0", "pod")


class Volumes(Workload):
    """Each pod with its own PersistentVolumeClaim, bound to its own PersistentVolume."""

    owns = True

    def __init__(self, name, threshold, sizes, small, source, csi_limit=None):
        super().__init__(name, threshold, sizes, small)
        self.source, self.csi_limit = source, csi_limit

    def claims(self, namespace, count, bare=False):
        objects, pods = [], []
        for i in range(count):
            pv_name = f"{namespace}-vol-{i}"
            source = ({"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": pv_name}} if self.source == "csi"
                      else {"awsElasticBlockStore": {"volumeID": f"vol-{namespace}-{i}"}})
            pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
                  "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                           "persistentVolumeReclaimPolicy": "Retain",
                           "claimRef": {"kind": "PersistentVolumeClaim", "namespace": namespace,
                                        "name": f"pvc-{i}", "apiVersion": "v1"}, **source},
                  "status": {"phase": "Bound"}}
            pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": f"pvc-{i}", "namespace": namespace,
                                "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                   "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}},
                            "volumeName": pv_name},
                   "status": {"phase": "Bound"}}
            objects += [pv, pvc]
            spec = {} if bare else {"volumes": [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]}
            pods.append(pod(f"pod-{i}" if namespace == "measure" else f"init-{i}", namespace, spec))
        return objects, pods

    def build(self, p):
        nodes = zone_nodes(p["nodes"], None)
        objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("init", "measure")]
        if self.csi_limit:
            for n in nodes:
                n["status"]["allocatable"]["attachable-volumes-csi-ebs.csi.aws.com"] = str(self.csi_limit)
                objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                "metadata": {"name": n["metadata"]["name"],
                                             "annotations": {"storage.alpha.kubernetes.io/migrated-plugins":
                                                             "kubernetes.io/aws-ebs"}},
                                "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": n["metadata"]["name"],
                                                      "allocatable": {"count": self.csi_limit}}]}})
        init_objects, init = self.claims("init", p["init"])
        measure_objects, measure = self.claims("measure", p["measure"], p.get("bare", False))
        return nodes + objects + init_objects + measure_objects, init, measure

    def check(self, p, placed, cluster):
        if not self.csi_limit:
            return []
        worst = max(Counter(placed.values()).values(), default=0)
        return [f"{worst} volumes on one node, over the limit {self.csi_limit}"] if worst > self.csi_limit else []


class Daemonset(Workload):
    """Pods pinned to one node by matchFields metadata.name, among many others."""

    def build(self, p):
        target = node("scheduler-perf-node", capacity={"pods": "90000"})
        spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}]}]}}},
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.2"}]}
        return [target] + zone_nodes(p["nodes"], None), [], [pod(f"pod-{i}", "default", spec)
                                                             for i in range(p["measure"])]

    def check(self, p, placed, cluster):
        wrong = [q for q, n in placed.items() if n != "scheduler-perf-node"]
        return [f"{len(wrong)} pods off scheduler-perf-node"] if wrong else []


class ExtendedResource(Workload):
    """Node i has its own extended resource foo.com/bar-i; pod i asks for it."""

    def build(self, p):
        nodes = [node(f"node-{i}", {"node-with-extended-resource": "true"}, {f"foo.com/bar-{i}": "1"})
                 for i in range(p["nodes"])]
        pods = []
        for i in range(p["measure"]):
            c = {"name": "pause", "image": "registry.k8s.io/pause:3.9",
                 "resources": {"requests": {f"foo.com/bar-{i}": "1"}, "limits": {f"foo.com/bar-{i}": "1"}}}
            pods.append(pod(f"pod-{i}", "test", {"containers": [c]}))
        return nodes, [], pods

    def check(self, p, placed, cluster):
        wrong = [q for q, n in placed.items() if n != "node-" + q.split("-")[1]]
        return [f"{len(wrong)} pods off the node of their resource"] if wrong else []


class ClaimTemplate(Workload):
    """Each pod's ResourceClaim made from one ResourceClaimTemplate; a slice of devices per node."""

    owns = True

    def build(self, p):
        nodes = [node(f"scheduler-perf-dra-{i}") for i in range(p["nodes"])]
        objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("init", "test")]
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
                        "spec": {"selectors": [{"cel": {"expression":
                                                        'device.driver == "test-driver.cdi.k8s.io"'}}]}})
        for n in nodes:
            name = n["metadata"]["name"]
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                            "metadata": {"name": f"{name}-test-driver.cdi.k8s.io"},
                            "spec": {"driver": "test-driver.cdi.k8s.io", "nodeName": name,
                                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": f"instance-{d}"} for d in range(p["per_node"])]}})
        for ns in ("init", "test"):
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                            "metadata": {"name": "test-claim-template", "namespace": ns},
                            "spec": {"spec": {"devices": {"requests": [
                                {"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}}}})
        spec = {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                                "resources": {"claims": [{"name": "resource"}]}}],
                "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}
        bare = {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.1"}]}
        return (nodes + objects, [pod(f"init-{i}", "init", spec) for i in range(p["init"])],
                [pod(f"pod-{i}", "test", bare if p.get("bare") else spec) for i in range(p["measure"])])

    def check(self, p, placed, cluster):
        worst = max(Counter(placed.values()).values(), default=0)
        return [f"{worst} claims' pods on one node of {p['per_node']} devices"] if worst > p["per_node"] else []


def plain(name, threshold, nodes, init, measure, shape, init_shape=None, zones=None, two_ns=False, intent=None,
          small=(50, 10, 100)):
    ns = ("sched-0", "sched-1") if two_ns else ("default", "default")
    return Plain(name, threshold, {"nodes": nodes, "init": init, "measure": measure},
                 {"nodes": small[0], "init": small[1], "measure": small[2]}, init_shape or shape, shape, zones,
                 ns[0], ns[1], intent)


def ns_selector(name, threshold, nodes, per_ns, spaces, measure, shape, zones=None, intent=None):
    return NamespaceSelector(name, threshold, {"nodes": nodes, "init_per_ns": per_ns, "namespaces": spaces,
                                               "measure": measure},
                             {"nodes": 50, "init_per_ns": 2, "namespaces": 5, "measure": 40}, shape, shape, zones,
                             intent=intent)


# The `performance` workloads of scheduler_perf (kube master as of 2026:
# misc/, affinity/, topology_spreading/, volumes/, dra/), their sizes and
# thresholds; `small` keeps each shape at a size the tests can afford.
WORKLOADS = [
    plain("SchedulingBasic", 680, 5000, 1000, 10000, "default"),
    plain("SchedulingPodAntiAffinity", 60, 5000, 1000, 2000, "anti-affinity", two_ns=True, intent="one-per-node",
          small=(50, 10, 40)),
    plain("SchedulingPodAffinity", 35, 5000, 5000, 5000, "affinity", zones=["zone1"], two_ns=True),
    plain("SchedulingPreferredPodAffinity", 90, 5000, 5000, 5000, "preferred-affinity", two_ns=True),
    plain("SchedulingPreferredPodAntiAffinity", 90, 5000, 5000, 5000, "preferred-anti-affinity", two_ns=True),
    ns_selector("SchedulingRequiredPodAntiAffinityWithNSSelector", 24, 6000, 40, 100, 2000, "anti-affinity-ns",
                intent="one-per-node"),
    ns_selector("SchedulingPreferredAntiAffinityWithNSSelector", 55, 5000, 40, 100, 2000,
                "preferred-anti-affinity-ns"),
    ns_selector("SchedulingRequiredPodAffinityWithNSSelector", 35, 5000, 50, 100, 2000, "affinity-ns",
                zones=["zone1"]),
    ns_selector("SchedulingPreferredAffinityWithNSSelector", 90, 5000, 50, 100, 5000, "preferred-affinity-ns"),
    plain("TopologySpreading", 460, 5000, 5000, 5000, "spreading", "default", zones=["moon-1", "moon-2", "moon-3"],
          intent="skew"),
    plain("PreferredTopologySpreading", 340, 5000, 5000, 5000, "preferred-spreading", "default",
          zones=["moon-1", "moon-2", "moon-3"]),
    plain("SchedulingNodeAffinity", 220, 5000, 5000, 10000, "node-affinity", zones=["zone1"]),
    plain("SchedulingSecrets", 790, 5000, 1000, 10000, "secret"),
    Volumes("SchedulingInTreePVs", 290, {"nodes": 5000, "init": 1000, "measure": 2000},
            {"nodes": 50, "init": 10, "measure": 100}, "aws"),
    Volumes("SchedulingMigratedInTreePVs", 100, {"nodes": 5000, "init": 5000, "measure": 5000},
            {"nodes": 50, "init": 10, "measure": 100}, "aws", csi_limit=39),
    Volumes("SchedulingCSIPVs", 100, {"nodes": 5000, "init": 5000, "measure": 5000},
            {"nodes": 50, "init": 10, "measure": 100}, "csi", csi_limit=39),
    Daemonset("SchedulingDaemonset", 1100, {"nodes": 15000, "measure": 30000}, {"nodes": 50, "measure": 200}),
    ClaimTemplate("SchedulingWithResourceClaimTemplate", 40,
                  {"nodes": 500, "init": 2500, "measure": 2500, "per_node": 10},
                  {"nodes": 20, "init": 50, "measure": 150, "per_node": 10}),
    ExtendedResource("SchedulingWithExtendedResource", 180, {"nodes": 5000, "measure": 5000},
                     {"nodes": 50, "measure": 50}),
]


def write(path, items):
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, separators=(",", ":"))


def run(policyc, args, what):
    proc = subprocess.run(policyc + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 2:
        sys.exit(f"{what}: policyc refused the input:\n{proc.stderr}")
    return proc


def measure(w, sizes, policyc, folder, extra, repeat=1):
    cluster, init, queue = w.build(sizes)
    base = os.path.join(folder, w.name + ("-without" if sizes.get("bare") else ""))
    write(base + "-cluster.json", cluster + init)
    write(base + "-measure.json", queue)
    started = time.monotonic()
    ready = base + "-cluster.json"
    if init:
        ready = base + "-ready.json"
        proc = run(policyc, ["schedule", "--cluster", base + "-cluster.json", "-o", "jsonl", "--no-cache",
                             "--output-cluster", ready] + extra, w.name + " (init pods)")
        init_pending = sum(1 for line in proc.stdout.splitlines() if json.loads(line).get("node") is None)
        if init_pending:
            return {"workload": w.name, "problems": [f"{init_pending} init pods stayed Pending"]}
    init_s = time.monotonic() - started
    runs = []  # the measured pods placed `repeat` times; the run of the median pods/s is reported
    for _ in range(max(1, repeat)):
        proc = run(policyc, ["schedule", "--cluster", ready, "--pending", base + "-measure.json", "-o", "jsonl",
                             "--no-cache", "--stats"] + extra, w.name)
        runs.append((json.loads(proc.stderr.strip().splitlines()[-1]), proc))
    runs.sort(key=lambda r: r[0]["pods_per_second"])
    stats, proc = runs[len(runs) // 2]
    placed, pending = {}, 0
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if record.get("node"):
            placed[record["pod"].split("/")[-1]] = record["node"]
        else:
            pending += 1
    problems = ([f"{pending} measured pods stayed Pending"] if pending else []) + w.check(sizes, placed, cluster)
    return {"workload": w.name, "nodes": sizes["nodes"], "init": len(init), "pods": len(queue),
            "pods_per_s": stats["pods_per_second"], "threshold": w.threshold,
            "x_threshold": stats["pods_per_second"] / w.threshold, "init_s": init_s, "stats": stats,
            "problems": problems}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policyc", default="build/policyc", help="the policyc to run (default build/policyc)")
    parser.add_argument("--workload", action="append", help="run only these (repeatable)")
    parser.add_argument("--scale", choices=["published", "small"], default="published")
    parser.add_argument("--keep", help="write the inputs here and keep them")
    parser.add_argument("--json", action="store_true", help="one JSON record a workload")
    parser.add_argument("--no-incremental", action="store_true", help="decide every pod from scratch")
    parser.add_argument("--baseline", action="store_true",
                        help="for workloads whose pods bring their own volume or claim, also run the same pods "
                             "without it and report the time per pod against theirs")
    parser.add_argument("--repeat", type=int, default=1,
                        help="place the measured pods this many times and report the run of the median pods/s "
                             "(the machine is noisy; the init pods are placed once)")
    parser.add_argument("--min-ratio", type=float, default=0,
                        help="exit 1 when a workload's pods/s is under this times its threshold")
    a = parser.parse_args()
    known = {w.name for w in WORKLOADS}
    for name in a.workload or []:
        if name not in known:
            sys.exit(f"unknown workload {name!r}; known: {', '.join(sorted(known))}")
    chosen = [w for w in WORKLOADS if not a.workload or w.name in a.workload]
    folder = a.keep or tempfile.mkdtemp(prefix="policyc-scheduler-perf-")
    os.makedirs(folder, exist_ok=True)
    extra = ["--no-incremental"] if a.no_incremental else []
    failed = False
    if not a.json:
        print(f"{'workload':50} {'nodes':>6} {'pods':>6} {'pods/s':>9} {'threshold':>9} {'x':>7}  "
              f"templates plans full incr")
    for w in chosen:
        sizes = w.published if a.scale == "published" else w.small
        r = measure(w, sizes, a.policyc.split(), folder, extra, a.repeat)
        if a.baseline and w.owns and "stats" in r:
            bare = measure(w, dict(sizes, bare=True), a.policyc.split(), folder, extra, a.repeat)
            r["pods_per_s_without"] = bare.get("pods_per_s", 0)
            r["x_without"] = bare["pods_per_s"] / r["pods_per_s"] if r["pods_per_s"] else float("inf")
            r["problems"] += [f"without: {p}" for p in bare["problems"]]
        bad = bool(r["problems"]) or r.get("x_threshold", 0) < a.min_ratio
        failed |= bad
        if a.json:
            print(json.dumps(r), flush=True)
        elif "stats" in r:
            s = r["stats"]
            print(f"{w.name:50} {r['nodes']:>6} {r['pods']:>6} {r['pods_per_s']:>9,.0f} {w.threshold:>9} "
                  f"{r['x_threshold']:>7.1f}  {s['templates']:>9} {s['plans']:>5} {s['decisions']['full']:>4} "
                  f"{s['decisions']['incremental']:>4}  {'; '.join(r['problems'])}", flush=True)
            if "x_without" in r:
                print(f"  the same pods without their own volume or claim: {r['pods_per_s_without']:,.0f} pods/s; "
                      f"a pod with one takes {r['x_without']:.2f}x the time", flush=True)
        else:
            print(f"{w.name:50} {'; '.join(r['problems'])}", flush=True)
    if not a.keep:
        for f in os.listdir(folder):
            os.remove(os.path.join(folder, f))
        os.rmdir(folder)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
