#!/usr/bin/env python3
"""Writes bench_schedule's queue as workload manifests for `policyc schedule
--pending`: 30 Deployments, StatefulSets and Jobs whose replicas (a Job's
parallelism) have Zipf-like sizes summing to about 10,000 pods, in the same
eight shapes as benchmarks/bench_schedule.cpp's Templates().

    build/benchmarks/gen_cluster --nodes 5000 --pods-per-node 20 > /tmp/c.json
    python3 benchmarks/gen_queue.py > /tmp/queue.yaml
    build/policyc schedule --cluster /tmp/c.json --pending /tmp/queue.yaml --stats -o jsonl >/dev/null
"""

import json

PODS, TEMPLATES = 10000, 30


def workload(r, size):
    app = f"app{r}"
    kind = r % 8
    requests = {"cpu": f"{100 + 50 * (r % 7)}m", "memory": f"{128 + 64 * (r % 5)}Mi"}
    limits = {}
    spec = {}
    if kind == 2:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": app}}}]}}
    if kind == 3:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    if kind == 4:
        gpu_memory = f"{8 + 4 * (r % 3)}Gi"
        requests.update({"nvidia.com/gpu": "1", "nvidia.com/gpu-memory": gpu_memory})
        limits = {"nvidia.com/gpu": "1", "nvidia.com/gpu-memory": gpu_memory}
        spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    if kind == 5:
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/zone",
                                               "labelSelector": {"matchLabels": {"app": "app0"}}}}]}}
    if kind == 6:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "eks.amazonaws.com/nodegroup", "operator": "In",
                                                         "values": ["general-0", "general-1"]}]}]}}}
    if kind == 7:
        spec["priority"] = 1000
    if r == TEMPLATES - 1:
        requests["cpu"] = "300"
    resources = {"requests": requests}
    if limits:
        resources["limits"] = limits
    spec["containers"] = [{"name": "main", "image": f"bench/{app}:1", "resources": resources}]
    template = {"metadata": {"labels": {"app": app}}, "spec": spec}
    if kind in (1, 4, 6):
        spec["restartPolicy"] = "Never"
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": app, "namespace": "bench"},
                "spec": {"parallelism": size, "template": template}}
    kind_name = "StatefulSet" if kind == 3 else "Deployment"
    return {"apiVersion": "apps/v1", "kind": kind_name, "metadata": {"name": app, "namespace": "bench"},
            "spec": {"replicas": size, "selector": {"matchLabels": {"app": app}}, "template": template}}


def main():
    harmonic = sum(1 / (r + 1) for r in range(TEMPLATES))
    docs = [workload(r, int(PODS / (r + 1) / harmonic + 0.5)) for r in range(TEMPLATES)]
    print("\n---\n".join(json.dumps(d) for d in docs))


if __name__ == "__main__":
    main()
