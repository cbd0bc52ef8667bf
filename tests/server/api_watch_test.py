#!/usr/bin/env python3
"""`policyc serve --kubeconfig`: the cluster state from the Kubernetes API.

A local API (fake_apiserver.py: HTTPS, a bearer token, the API's wire
format) holds the example cluster and a Pending GPU pod. policyc serve lists
it in pages and watches it; after every step its filter answer for the pod
equals `policyc check` on the API's objects at that moment:

1. the first list (pages of 4; csinodes not served: left out);
2. a node joins (an ADDED event): the pod fits there;
3. the streams break mid-way: each watch resumes from the last version it
   saw, a bookmark's included, with no new list, and loses no event;
4. the versions expire (410 Gone) while objects change unseen: it lists
   again and answers for the API's objects, not the ones it had;
5. bind: the Binding reaches the API with the node, the pod counts there at
   once; a binding the API refuses is an Error and the pod is not counted;
6. a burst of 300 events while filter calls run: none lost;
7. /metrics counts the lists, binds and events; SIGTERM ends it with 0;
8. a wrong token exits 1 naming HTTP 401; an exec-plugin user exits 2;
9. --mode decide (on the API's objects as a snapshot): filter answers the
   node check selects alone, the other feasible ones failed with that
   reason; the next pod is decided with the first counted there (check on
   the objects with it bound); the first pod filtered again (a retry) is not
   counted against itself.

  python3 tests/server/api_watch_test.py --policyc build/policyc
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extender_test import Serve  # noqa: E402
from fake_apiserver import FakeApi, cluster_role_rules  # noqa: E402

GPU_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-10-0-2-99.ec2.internal", "labels": {
    "kubernetes.io/hostname": "ip-10-0-2-99", "topology.kubernetes.io/zone": "us-east-1b",
    "nvidia.com/gpu.product": "NVIDIA-A10G", "nvidia.com/gpu.memory": "23028"}},
    "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "47", "memory": "180Gi", "pods": "110", "nvidia.com/gpu": "4"}}}


def kubeconfig(path, port, cert, token, exec_user=False):
    with open(cert, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    user = {"exec": {"command": "aws", "apiVersion": "client.authentication.k8s.io/v1beta1"}} if exec_user else {"token": token}
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "test",
           "clusters": [{"name": "fake", "cluster": {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": ca}}],
           "users": [{"name": "u", "user": user}],
           "contexts": [{"name": "test", "context": {"cluster": "fake", "user": "u"}}]}
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)


def check_says(policyc, objects, pod_file, tmp):
    """check's feasible nodes and failed nodes for the pod on `objects`."""
    snapshot = os.path.join(tmp, "snapshot.json")
    with open(snapshot, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
    p = subprocess.run([policyc, "check", "--cluster", snapshot, "--pod", pod_file, "--output", "json"],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"check exits {p.returncode}: {p.stderr}")
    doc = json.loads(p.stdout)
    return {n["name"] for n in doc["nodes"] if n["feasible"]}, {n["name"] for n in doc["nodes"] if not n["feasible"]}


def serve_says(serve, pod, names):
    status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names})
    got = json.loads(body)
    if status != 200 or got.get("Error"):
        raise RuntimeError(f"filter: {status} {body[:300]}")
    failed = set(got["FailedNodes"] or {}) | set(got["FailedAndUnresolvableNodes"] or {})
    return set(got["NodeNames"] or []), failed


def agree(policyc, api, serve, pod, pod_file, tmp, what, problems, timeout=15):
    """Waits until serve's answer equals check's on the API's objects now."""
    objects = api.objects()
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    want = check_says(policyc, objects, pod_file, tmp)
    deadline = time.time() + timeout
    got = None
    while time.time() < deadline:
        got = serve_says(serve, pod, names)
        if got == want:
            return True
        time.sleep(0.1)
    problems.append(f"{what}: serve says feasible {sorted(got[0])}, check {sorted(want[0])}")
    return False


def wait_for(condition, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def metric(serve, name):
    _, text = serve.call("GET", "/metrics")
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            if line.split(" ")[0] == name or line.startswith(name + "{"):
                yield line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    args = ap.parse_args()
    policyc = os.path.abspath(args.policyc)
    problems = []
    passed = 0
    with open("examples/cluster.yaml") as f:
        objects = yaml.safe_load(f)["items"]
    with open("examples/pods/gpu-training.yaml") as f:
        job = yaml.safe_load(f)  # the pod its controller makes, as kube-scheduler sees it
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": job["metadata"]["name"], "namespace": job["metadata"]["namespace"],
                        "labels": job["spec"]["template"]["metadata"]["labels"]},
           "spec": job["spec"]["template"]["spec"]}
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
                       check=True, capture_output=True)
        pending = json.loads(json.dumps(pod))
        pending.setdefault("spec", {}).pop("nodeName", None)
        api = FakeApi(objects + [pending], "s3cret", cert, key)
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(pod, f)
        config = os.path.join(tmp, "kubeconfig")
        kubeconfig(config, api.port, cert, "s3cret")
        serve = Serve(policyc, ["--kubeconfig", config])
        try:
            # 1. The first list, in pages.
            if agree(policyc, api, serve, pod, pod_file, tmp, "first list", problems):
                passed += 1
            if len(api.lists("pods")) < 2 or any(q.get("limit") != "500" for q in api.lists("pods")):
                problems.append(f"pods were not listed in pages: {api.lists('pods')}")
            if not any("csinodes" in line and "left out" in line for line in serve.log):
                problems.append("a kind the API does not serve was not logged as left out")

            # 2. A node joins.
            api.change(GPU_NODE)
            if agree(policyc, api, serve, pod, pod_file, tmp, "a node joins", problems):
                passed += 1
            if GPU_NODE["metadata"]["name"] not in serve_says(serve, pod, [GPU_NODE["metadata"]["name"]])[0]:
                problems.append("the pod does not fit the node that joined")

            # 3. Streams break; each watch resumes from the last version it saw.
            watches_before = len(api.watches("nodes"))
            lists_before = len(api.lists("nodes"))
            mark = api.bookmark("pods")
            # Break only once the bookmark is on the wire (a stream being
            # reopened at that moment would otherwise never carry it).
            if not wait_for(lambda: api.delivered_version("pods") >= int(mark)):
                problems.append("the fake API never wrote the bookmark to a pods watch")
            time.sleep(0.2)
            api.break_streams()
            node = json.loads(json.dumps(GPU_NODE))
            node["spec"]["unschedulable"] = True  # changed while no stream is open
            api.change(node)
            if not wait_for(lambda: len(api.watches("nodes")) > watches_before and
                            any(q.get("resourceVersion") == mark for q in api.watches("pods"))):
                problems.append(f"the watches did not resume from their versions (pods: {api.watches('pods')[-3:]}, "
                                f"bookmark {mark})")
            if agree(policyc, api, serve, pod, pod_file, tmp, "after a broken stream", problems):
                passed += 1
            if len(api.lists("nodes")) != lists_before:
                problems.append("a broken stream made a new list (it should resume the watch)")

            # 4. Versions expire while objects change unseen: list again.
            api.expire()
            gone = api.objects()
            victim = next(o for o in gone if o["kind"] == "Node" and o["metadata"]["name"] != GPU_NODE["metadata"]["name"])
            api.change(victim, deleted=True, quiet=True)
            node["spec"]["unschedulable"] = False
            api.change(node, quiet=True)
            if not wait_for(lambda: len(api.lists("nodes")) > lists_before):
                problems.append("410 Gone did not make a new list")
            if agree(policyc, api, serve, pod, pod_file, tmp, "after 410 Gone", problems):
                passed += 1

            # 5. Bind: the Binding reaches the API; the pod counts at once.
            name = GPU_NODE["metadata"]["name"]
            serve_says(serve, pod, [name])  # filter remembers the pod bind assumes
            meta = pod["metadata"]
            status, body = serve.call("POST", "/policyc/bind", {"PodName": meta["name"], "PodNamespace": meta["namespace"],
                                                                 "PodUID": "u-1", "Node": name})
            binding = api.bindings[-1] if api.bindings else {}
            if status != 200 or json.loads(body).get("Error") or binding.get("target", {}).get("name") != name:
                problems.append(f"bind: {status} {body}, the API got {binding}")
            elif agree(policyc, api, serve, pod, pod_file, tmp, "after bind", problems):
                passed += 1
            second = json.loads(json.dumps(pending))
            second["metadata"]["name"] = "finetune-llama-2"
            api.change(second)
            api.refuse_binding.add("finetune-llama-2")
            serve_says(serve, second, [name])
            status, body = serve.call("POST", "/policyc/bind", {"PodName": "finetune-llama-2",
                                                                 "PodNamespace": meta["namespace"], "Node": name})
            error = json.loads(body).get("Error", "")
            if "409" not in error or "already assigned" not in error:
                problems.append(f"a refused binding: {status} {body}")
            elif agree(policyc, api, serve, pod, pod_file, tmp, "after a refused bind", problems):
                passed += 1

            # 6. A burst of events while filter calls run: none lost.
            stop = threading.Event()
            names = [o["metadata"]["name"] for o in api.objects() if o["kind"] == "Node"]
            calls = [0]

            def caller():
                while not stop.is_set():
                    serve_says(serve, pod, names)
                    calls[0] += 1

            t = threading.Thread(target=caller)
            t.start()
            for i in range(300):
                n = json.loads(json.dumps(GPU_NODE))
                n["metadata"]["name"] = f"burst-{i}"
                n["status"]["allocatable"]["nvidia.com/gpu"] = str(i % 3)
                api.change(n)
            for i in range(0, 300, 2):
                api.change({"kind": "Node", "metadata": {"name": f"burst-{i}"}}, deleted=True)
            time.sleep(0.5)
            stop.set()
            t.join()
            if agree(policyc, api, serve, pod, pod_file, tmp, f"after a burst of 450 events ({calls[0]} calls meanwhile)",
                     problems):
                passed += 1

            # 7. Metrics.
            lines = {line.split(" ")[0]: line.split(" ")[1] for name in
                     ("policyc_api_lists_total", "policyc_binds_total", "policyc_watch_events_total")
                     for line in metric(serve, name)}
            want = {"policyc_api_lists_total": "2", 'policyc_binds_total{result="bound"}': "1",
                    'policyc_binds_total{result="failed"}': "1", 'policyc_watch_events_total{result="refused"}': "0"}
            if any(lines.get(k) != v for k, v in want.items()):
                problems.append(f"metrics: {lines}")
            else:
                passed += 1
        finally:
            code = serve.stop()
            if os.environ.get("POLICYC_SHOW_LOG"):
                print("".join(serve.log))
        if code != 0:
            problems.append(f"SIGTERM: exit {code}")
        else:
            passed += 1

        # 8. Refusals at start.
        for what, token, exec_user, exit_code, says in [("a wrong token", "wrong", False, 1, "HTTP 401"),
                                                         ("an exec-plugin user", "s3cret", True, 2, "exec plugin")]:
            kubeconfig(config, api.port, cert, token, exec_user=exec_user)
            p = subprocess.run([policyc, "serve", "--kubeconfig", config, "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=60)
            if p.returncode != exit_code or says not in p.stderr:
                problems.append(f"{what}: exit {p.returncode}: {p.stderr}")
            else:
                passed += 1

        # 9. Decide in filter.
        objects = [o for o in api.objects() if not o["metadata"]["name"].startswith("finetune-llama")]
        snapshot = os.path.join(tmp, "decide.json")
        with open(snapshot, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
        names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]

        def selected(objs):
            path = os.path.join(tmp, "decide-check.json")
            with open(path, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
            p = subprocess.run([policyc, "check", "--cluster", path, "--pod", pod_file, "--output", "json"],
                               capture_output=True, text=True)
            return json.loads(p.stdout).get("selected")

        serve = Serve(policyc, ["--cluster", snapshot, "--mode", "decide"])
        try:
            first = selected(objects)
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names})
            got = json.loads(body)
            chose = [f for f, r in (got["FailedNodes"] or {}).items() if r == f"policyc chose node {first} for this pod"]
            if got["NodeNames"] != [first] or not chose:
                problems.append(f"decide: filter answered {got['NodeNames']} (check selects {first}), chose-failed {chose}")
            else:
                passed += 1
            bound = json.loads(json.dumps(pod))
            bound["spec"]["nodeName"] = first
            bound["status"] = {"phase": "Running"}
            second = json.loads(json.dumps(pod))
            second["metadata"]["name"] = "finetune-llama-2"
            want = selected(objects + [bound])
            if os.environ.get("POLICYC_SHOW_LOG"):
                print("decide:", first, want, selected(objects))
            status, body = serve.call("POST", "/policyc/filter", {"Pod": second, "NodeNames": names})
            if json.loads(body)["NodeNames"] != ([want] if want else []):
                problems.append(f"decide: the second pod got {json.loads(body)['NodeNames']}, check with the first "
                                f"bound selects {want}")
            else:
                passed += 1
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names})
            retry = json.loads(body)["NodeNames"]
            second_bound = json.loads(json.dumps(second))
            second_bound["spec"]["nodeName"] = want
            second_bound["status"] = {"phase": "Running"}
            again = selected(objects + ([second_bound] if want else []))
            if retry != ([again] if again else []):
                problems.append(f"decide: the first pod retried got {retry}, check with only the second bound selects {again}")
            else:
                passed += 1
        finally:
            serve.stop()
        api.close()

        # RBAC. The ClusterRole of examples/extender/rbac.yaml grants exactly
        # what serve reads: the kinds of server/api_watch.cpp's list (get,
        # list, watch) and create on pods/binding; the fake API above
        # enforced it for every request of this test.
        import re
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../server/api_watch.cpp")) as f:
            code = f.read()
        listed = re.findall(r'\{"(/apis?/[^"]+)", "([a-z]+)"\}', code)
        wanted = set()
        for path, resource in listed:
            parts = path.strip("/").split("/")
            group = "" if parts[0] == "api" else parts[1]
            wanted |= {(group, resource, verb) for verb in ("get", "list", "watch")}
        wanted.add(("", "pods/binding", "create"))
        granted = cluster_role_rules()
        if len(listed) < 16 or granted != wanted:
            problems.append(f"rbac.yaml and server/api_watch.cpp differ: the role lacks {sorted(wanted - granted)}, "
                            f"grants beyond them {sorted(granted - wanted)}")
        else:
            passed += 1
        # Without the resource.k8s.io rule (DRA's optional kinds): serve starts, and says which rule it lacks.
        no_dra = {r for r in granted if r[0] != "resource.k8s.io"}
        api = FakeApi(objects, "s3cret", cert, key, rules=no_dra)
        kubeconfig(config, api.port, cert, "s3cret")
        try:
            serve = Serve(policyc, ["--kubeconfig", config])
            try:
                ready = wait_for(lambda: serve.call("GET", "/readyz")[0] == 200)
                lacking = [line for line in serve.log if "may not list" in line and
                           '{apiGroups: [\\"resource.k8s.io\\"], resources: [resourceslices]' in line]
                if not ready or not lacking:
                    problems.append(f"without the DRA rule: ready {ready}, the lacking rule logged: {lacking or serve.log[-4:]}")
                else:
                    passed += 1
            finally:
                serve.stop()
        except RuntimeError as e:
            problems.append(f"without the DRA rule serve did not start: {e}")
        api.close()
        # Without nodes: serve stops at once (exit 1, as for an API that does not answer), naming the rule.
        no_nodes = {r for r in granted if r[1] != "nodes"}
        api = FakeApi(objects, "s3cret", cert, key, rules=no_nodes)
        kubeconfig(config, api.port, cert, "s3cret")
        p = subprocess.run([policyc, "serve", "--listen", "127.0.0.1:0", "--kubeconfig", config], capture_output=True,
                           text=True, timeout=30)
        rule = '{apiGroups: [""], resources: [nodes], verbs: [get, list, watch]}'
        if p.returncode != 1 or "HTTP 403" not in p.stderr or rule not in p.stderr:
            problems.append(f"without the nodes rule: exit {p.returncode}, {p.stderr.strip()[-400:]!r}")
        else:
            passed += 1
        api.close()
    for p in problems:
        print(f"FAIL {p}")
    print(f"{passed} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
