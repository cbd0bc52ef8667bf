#!/usr/bin/env python3
"""`policyc serve` as kube-scheduler calls it, over HTTP on loopback.

1. Every conformance case given (the shared corpus, ours): a server on the
   case's cluster, plugins and policies answers `filter` with exactly the
   nodes `policyc check --output json` finds feasible, lists every other node
   in FailedNodes or FailedAndUnresolvableNodes with check's first reason
   (with --all-reasons, on the example cluster: every reason), and
   answers `prioritize` with check's totals scaled to 0-10; with node
   objects (`nodeCacheCapable: false`) it gives back the objects that pass.
2. Faults, on the example cluster: malformed JSON (200 with Error), a body
   over --max-body-bytes (413), an unknown path (404), a client that stops
   half way through its headers (refused after --read-timeout while others
   are answered), a watch event from --events that adds a node (then
   feasible), a refused event (counted, the state unchanged), a connection
   dropped mid-body (others answered), too many header fields (431), more
   connections than --max-connections (503, then served once one closes),
   /healthz, /readyz, /metrics, and SIGTERM (exit 0).
3. As kube-scheduler's client sends and reads: `null` for the unused form,
   an empty list of names, preempt with NodeNameToMetaVictims and with
   NodeNameToVictims (kube's candidates kept with their victims, less a
   node no eviction helps), a malformed call answered other than 200.
4. The real dumps (../shared/fixtures/real): first reasons as check has
   them, prioritize's levels in the order of check's totals.
5. TLS: with --tls-cert and --tls-key it answers HTTPS and refuses plain
   HTTP; with --client-ca it refuses a client without a certificate and
   answers one with a certificate that CA signed.

  python3 tests/server/extender_test.py --policyc build/policyc --policies policies DIRS...
"""
import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from conformance_case import CaseFiles, conformance  # noqa: E402


class Serve:
    """A `policyc serve` on a free port, stopped with SIGTERM."""

    context = None  # an ssl.SSLContext for HTTPS

    def __init__(self, policyc, flags):
        self.proc = subprocess.Popen([policyc, "serve", "--listen", "127.0.0.1:0"] + flags,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log = []  # its stderr lines, read on a thread of their own (a full pipe would stall it)
        m = None
        while m is None:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("serve did not start:\n" + "".join(self.log))
            self.log.append(line)
            m = re.search(r"serving the extender at https?://127\.0\.0\.1:(\d+)", line)
        self.port = int(m.group(1))
        threading.Thread(target=lambda: self.log.extend(iter(self.proc.stderr.readline, "")), daemon=True).start()

    def call(self, method, path, body=None, timeout=30):
        if self.context is not None:
            c = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=self.context)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        c.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        out = r.status, r.read().decode("utf-8", "replace")
        c.close()
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None


@contextlib.contextmanager
def serving(policyc, flags, problems):
    """A Serve for the block; its exit on SIGTERM other than 0 is a problem."""
    serve = Serve(policyc, flags)
    try:
        yield serve
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")


def example_pod():
    with open("examples/pods/web.yaml") as f:
        return yaml.safe_load(f)


def check_case(policyc, path, case, policies_dir):
    """Problems with one case, or None when the case does not apply (bad input, a workload)."""
    if isinstance(case["cluster"], str) or isinstance(case["pod"], str) or case["expect"].get("exit") == 2:
        return None  # malformed input: the fault tests cover the server's answer
    if case["pod"].get("kind", "Pod") != "Pod":
        return None  # kube-scheduler sends pods, never workloads
    with tempfile.TemporaryDirectory() as tmp:
        files = CaseFiles(path, case, policies_dir, tmp)
        flags = files.flags
        p = subprocess.run([policyc, "check"] + flags + ["--pod", files.pod_file, "--output", "json"], capture_output=True,
                           text=True)
        if p.returncode not in (0, 1):
            return [f"check exits {p.returncode}"]
        want = json.loads(p.stdout)
        # The pod as kube-scheduler sends it: with spec.nodeName unset.
        pod = json.loads(json.dumps(case["pod"]))
        nodes = [o for o in case["cluster"] if o.get("kind") == "Node"]
        names = [n["metadata"]["name"] for n in nodes]
        serve = Serve(policyc, flags)
        try:
            problems = []
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names, "Nodes": None})
            got = json.loads(body)
            feasible = {n["name"] for n in want["nodes"] if n["feasible"]}
            if status != 200 or got.get("Error"):
                return [f"filter: {status} {body[:200]}"]
            if set(got["NodeNames"] or []) != feasible:
                problems.append(f"filter NodeNames {sorted(got['NodeNames'] or [])}, check {sorted(feasible)}")
            failed = {**(got["FailedNodes"] or {}), **(got["FailedAndUnresolvableNodes"] or {})}
            for n in want["nodes"]:
                if n["feasible"]:
                    continue
                if n["name"] not in failed:
                    problems.append(f"{n['name']} is in neither failed map")
                    continue
                # The first failing plugin's first reason, as kube-scheduler's own status for the node.
                if n["reasons"] and failed[n["name"]] != n["reasons"][0]["reason"]:
                    problems.append(f"{n['name']}: `{failed[n['name']]}`, not check's first reason "
                                    f"`{n['reasons'][0]['reason']}`")
            status, body = serve.call("POST", "/policyc/filter",
                                      {"Pod": pod, "NodeNames": None, "Nodes": {"items": nodes}})
            got = json.loads(body)
            passed = {n["metadata"]["name"] for n in ((got.get("Nodes") or {}).get("items") or [])}
            if passed != feasible or got.get("NodeNames") is not None:
                problems.append(f"filter with node objects gave back {sorted(passed)}")
            if feasible:
                status, body = serve.call("POST", "/policyc/prioritize", {"Pod": pod, "NodeNames": sorted(feasible)})
                scores = {h["Host"]: h["Score"] for h in json.loads(body)}
                totals = {n["name"]: n["score"] for n in want["nodes"] if n["feasible"]}
                top = max(scores.values())
                best = {n for n, s in totals.items() if s == max(totals.values())}
                if not all(scores[n] == top for n in best) or any(s < 0 or s > 10 for s in scores.values()):
                    problems.append(f"prioritize {scores} does not rank check's best {sorted(best)} first")
            return problems
        finally:
            if serve.stop() != 0:
                problems.append("serve did not exit 0 on SIGTERM")


def faults(policyc):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        events = os.path.join(tmp, "events")
        with open(events, "w") as f:
            f.write('{"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra", '
                    '"labels": {"kubernetes.io/hostname": "extra"}}, "status": {"allocatable": {"cpu": "64", '
                    '"memory": "256Gi", "pods": "110"}}}}\n')
            f.write('{"type": "ADDED", "object": {"kind": "Node"\n')  # truncated: refused
        serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--events", events, "--max-body-bytes", "65536",
                                "--read-timeout", "1", "--threads", "3", "--max-connections", "3"])
        try:
            pod = example_pod()
            deadline = time.time() + 10
            while time.time() < deadline:  # the events are read beside serving
                status, body = serve.call("GET", "/metrics")
                if 'policyc_watch_events_total{result="refused"} 1' in body:
                    break
                time.sleep(0.05)
            if 'policyc_watch_events_total{result="applied"} 1' not in body or "policyc_cluster_nodes 7" not in body:
                problems.append("the --events file was not applied: " + "; ".join(
                    l for l in body.splitlines() if l.startswith(("policyc_watch", "policyc_cluster"))))
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": ["extra"]})
            if json.loads(body).get("NodeNames") != ["extra"]:
                problems.append(f"the node an event added is not feasible: {body[:200]}")
            status, body = serve.call("POST", "/policyc/filter", b'{"Pod": {"metadata": ')
            if status != 200 or not json.loads(body).get("Error"):
                problems.append(f"malformed JSON: {status} {body[:120]}")
            status, body = serve.call("POST", "/policyc/filter", b'{"Pod": ' + b" " * 70000 + b"{}}")
            if status != 413:
                problems.append(f"a body over --max-body-bytes: {status}")
            status, body = serve.call("POST", "/policyc/nosuchverb", {"Pod": pod})
            if status != 404:
                problems.append(f"an unknown verb: {status}")
            # The connection refused 413 above is let go only after the rest of its body times out
            # (--read-timeout 1): until then it holds one of the 3 --max-connections, and under the
            # sanitizers the call below was answered 503 by it, not by the slow client.
            time.sleep(1.5)
            slow = socket.create_connection(("127.0.0.1", serve.port))
            slow.sendall(b"POST /policyc/filter HTTP/1.1\r\nHost: x\r\nContent-Len")  # and nothing more
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": ["extra"]})
            if status != 200:
                problems.append(f"a slow client kept others from being answered: {status} {body[:120]}")
            slow.settimeout(5)
            started = time.time()
            try:  # closed, or refused with 400 (cpp-httplib's answer to a request it could not read in time)
                reply = slow.recv(1024)
                dropped = reply == b"" or reply.startswith(b"HTTP/1.1 400")
            except (socket.timeout, ConnectionResetError):
                dropped = False
            slow.close()
            if not dropped or time.time() - started > 4:
                problems.append("a client that stops mid-headers was not refused after --read-timeout")
            dropped = socket.create_connection(("127.0.0.1", serve.port))  # the client goes away mid-body
            dropped.sendall(b"POST /policyc/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"Pod\": {")
            dropped.close()
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": ["extra"]})
            if status != 200 or json.loads(body).get("NodeNames") != ["extra"]:
                problems.append(f"after a connection dropped mid-body: {status} {body[:120]}")
            headers = "".join(f"X-Many-{i}: v\r\n" for i in range(150))
            many = socket.create_connection(("127.0.0.1", serve.port), timeout=5)
            many.sendall(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
            reply = many.recv(1024)
            many.close()
            if not reply.startswith(b"HTTP/1.1 431"):
                problems.append(f"150 header fields: {reply[:60]}")
            time.sleep(1.5)  # the connections above are closed on the server's side too
            idle = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(3)]  # --max-connections 3
            time.sleep(0.2)
            status, body = serve.call("GET", "/healthz", timeout=5)
            if status != 503:
                problems.append(f"a connection past --max-connections: {status} {body[:80]}")
            for c in idle:
                c.close()
            deadline = time.time() + 5
            while time.time() < deadline and serve.call("GET", "/healthz")[0] != 200:
                time.sleep(0.1)
            for path, want in [("/healthz", 200), ("/readyz", 200)]:
                if serve.call("GET", path)[0] != want:
                    problems.append(f"{path} is not {want}")
            status, body = serve.call("GET", "/metrics")
            for needle in ['policyc_decisions_total{verb="filter"}', "policyc_extender_request_duration_seconds_bucket",
                           'verb="filter",code="200"']:
                if needle not in body:
                    problems.append(f"/metrics lacks {needle}")
        finally:
            if serve.stop() != 0:
                problems.append("serve did not exit 0 on SIGTERM")
    return problems


def all_reasons(policyc):
    """A node failing two plugins: its first reason by default, both with --all-reasons, as check has them."""
    problems = []
    pod = example_pod()
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "ip-10-0-1-17.ec2.internal"}
    with tempfile.TemporaryDirectory() as tmp:
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(pod, f)
        p = subprocess.run([policyc, "check", "--cluster", "examples/cluster.yaml", "--pod", pod_file, "-o", "json"],
                           capture_output=True, text=True)
        want = {n["name"]: [r["reason"] for r in n["reasons"]] for n in json.loads(p.stdout)["nodes"] if not n["feasible"]}
    two = [name for name, reasons in want.items() if len(reasons) >= 2]
    if not two:
        return [f"the test's pod fails no node for two reasons: {want}"]
    for flags, words in (([], lambda r: r[0]), (["--all-reasons"], lambda r: ", ".join(dict.fromkeys(r)))):
        with serving(policyc, ["--cluster", "examples/cluster.yaml"] + flags, problems) as serve:
            status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": sorted(want), "Nodes": None})
            got = json.loads(body)
            failed = {**(got["FailedNodes"] or {}), **(got["FailedAndUnresolvableNodes"] or {})}
            for name in two:
                if failed.get(name) != words(want[name]):
                    problems.append(f"{flags}: {name} is `{failed.get(name)}`, check has {want[name]}")
    return problems


def as_kube_sends(policyc):
    """Requests shaped as kube-scheduler's Go client marshals them, answers read as HTTPExtender reads
    them (host-reference.md 1.3-1.6): `null` for the form not used, an empty list of names, preempt's
    NodeNameToMetaVictims (nodeCacheCapable) and NodeNameToVictims (whole pods) alike."""
    problems = []
    pod = example_pod()
    fits, tainted = "ip-10-0-1-17.ec2.internal", "ip-10-0-2-91.ec2.internal"  # the GPU taint: no eviction helps
    with serving(policyc, ["--cluster", "examples/cluster.yaml"], problems) as serve:
        status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "Nodes": None, "NodeNames": []})
        got = json.loads(body)
        if status != 200 or got.get("Error") or (got.get("NodeNames") or []) != []:
            problems.append(f"filter with no names: {status} {body[:200]}")
        victims = {"Pods": [{"UID": "uid-1"}, {"UID": "uid-2"}], "NumPDBViolations": 1}
        status, body = serve.call("POST", "/policyc/preempt", {
            "Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": {fits: victims, tainted: victims}})
        got = json.loads(body) if status == 200 else {}
        meta = got.get("NodeNameToMetaVictims") or {}
        if status != 200 or got.get("Error"):
            problems.append(f"preempt (meta victims): {status} {body[:200]}")
        elif set(meta) != {fits} or meta[fits] != victims:
            problems.append(f"preempt (meta victims): kept {meta}, want {fits} with its victims as sent")
        whole = {"Pods": [{"metadata": {"name": "batch-1", "namespace": "default", "uid": "uid-3"}}],
                 "NumPDBViolations": 0}
        status, body = serve.call("POST", "/policyc/preempt", {
            "Pod": pod, "NodeNameToVictims": {fits: whole, tainted: whole}, "NodeNameToMetaVictims": None})
        got = json.loads(body) if status == 200 else {}
        meta = got.get("NodeNameToMetaVictims") or {}
        if status != 200 or set(meta) != {fits} or meta[fits] != {"Pods": [{"UID": "uid-3"}], "NumPDBViolations": 0}:
            problems.append(f"preempt (whole pods): {status} {body[:200]}")
        for verb in ("preempt", "prioritize"):  # what HTTPExtender takes for an error: a status other than 200
            status, body = serve.call("POST", f"/policyc/{verb}", b'{"Pod": ')
            if status == 200:
                problems.append(f"a malformed {verb} was answered 200: {body[:120]}")
    return problems


def real_dumps(policyc):
    """The real dumps of ../shared/fixtures/real (EKS, tainted arm64 EKS, AKS, DOKS GPU nodes) with a real
    Pending pod and the example pod: each failed node's first reason as check has it, and prioritize's
    levels in the order of check's totals, ties only where the totals tie."""
    problems = []
    real = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/fixtures/real")
    with open(os.path.join(real, "podlist-pending-node-affinity.json")) as f:
        pending = json.load(f)["items"][0]
    for nodes, pods in [("nodelist-eks-al2023-cluster-info-dump.json", "podlist-eks-kube-system-cluster-info-dump.json"),
                        ("nodelist-eks-arm64-tainted-honeycomb.json", "podlist-kubeadm-calico-honeycomb.json"),
                        ("list-aks-3-nodes-edgexr.json", None), ("nodelist-microk8s-doks-kurl-gpu-t4.json", None)]:
        flags = ["--cluster", os.path.join(real, nodes)] + (["--cluster", os.path.join(real, pods)] if pods else [])
        for pod in (pending, example_pod()):
            with tempfile.TemporaryDirectory() as tmp:
                pod_file = os.path.join(tmp, "pod.json")
                with open(pod_file, "w") as f:
                    json.dump(pod, f)
                p = subprocess.run([policyc, "check"] + flags + ["--pod", pod_file, "-o", "json"], capture_output=True,
                                   text=True)
            want = json.loads(p.stdout)["nodes"]
            at = f"{nodes}, {pod['metadata']['name']}"
            with serving(policyc, flags, problems) as serve:
                status, body = serve.call("POST", "/policyc/filter",
                                          {"Pod": pod, "NodeNames": [n["name"] for n in want], "Nodes": None})
                got = json.loads(body)
                failed = {**(got["FailedNodes"] or {}), **(got["FailedAndUnresolvableNodes"] or {})}
                for n in want:
                    if not n["feasible"] and failed.get(n["name"]) != n["reasons"][0]["reason"]:
                        problems.append(f"{at}: {n['name']} `{failed.get(n['name'])}`, check {n['reasons'][0]['reason']}")
                totals = {n["name"]: n["score"] for n in want if n["feasible"]}
                if not totals:
                    continue
                status, body = serve.call("POST", "/policyc/prioritize", {"Pod": pod, "NodeNames": sorted(totals)})
                scores = {h["Host"]: h["Score"] for h in json.loads(body)}
                for a in totals:
                    for b in totals:
                        if (totals[a] > totals[b]) != (scores[a] > scores[b]) and totals[a] != totals[b]:
                            problems.append(f"{at}: {a} {totals[a]}->{scores[a]}, {b} {totals[b]}->{scores[b]}")
    return problems


def tls(policyc):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
                       check=True, capture_output=True)
        for client_ca in (False, True):
            flags = ["--cluster", "examples/cluster.yaml", "--tls-cert", cert, "--tls-key", key]
            serve = Serve(policyc, flags + (["--client-ca", cert] if client_ca else []))
            try:
                plain = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=5)
                try:
                    plain.request("GET", "/healthz")
                    plain.getresponse()
                    problems.append("plain HTTP was answered on the TLS port")
                except (OSError, http.client.HTTPException):
                    pass
                serve.context = ssl.create_default_context(cafile=cert)
                if client_ca:
                    try:
                        serve.call("GET", "/healthz", timeout=5)
                        problems.append("--client-ca: a client without a certificate was answered")
                    except (OSError, ssl.SSLError, http.client.HTTPException):
                        pass
                    serve.context.load_cert_chain(cert, key)
                status, body = serve.call("GET", "/healthz", timeout=5)
                if status != 200:
                    problems.append(f"HTTPS /healthz: {status}")
            finally:
                if serve.stop() != 0:
                    problems.append("serve did not exit 0 on SIGTERM")
    return problems


def port_in_use(policyc):
    """A second serve on the port of a running one is refused (exit 2,
    "address already in use"), and the first keeps answering alone."""
    problems = []
    with serving(policyc, ["--cluster", "examples/cluster.yaml"], problems) as first:
        second = subprocess.run([policyc, "serve", "--cluster", "examples/cluster.yaml",
                                 "--listen", f"127.0.0.1:{first.port}"], capture_output=True, text=True, timeout=60)
        if second.returncode != 2 or "address already in use" not in second.stderr:
            problems.append(f"a second serve on port {first.port}: exit {second.returncode}, {second.stderr.strip()!r}; "
                            "expected exit 2 saying the address is already in use")
        status, _ = first.call("GET", "/healthz")
        if status != 200:
            problems.append(f"the first serve answered /healthz with {status} after the second was refused")
    return problems


def log_lines(policyc):
    """The log is JSON lines: one object a line, no blank line between them,
    and a request's duration in ms with at most three decimals."""
    problems = []
    with serving(policyc, ["--cluster", "examples/cluster.yaml", "--log-requests"], problems) as serve:
        serve.call("POST", "/policyc/filter", {"Pod": example_pod(), "NodeNames": ["ip-10-0-1-17.ec2.internal"]})
        deadline = time.time() + 10
        while time.time() < deadline and not any('"request"' in line for line in serve.log):
            time.sleep(0.05)
        lines = list(serve.log)
    requests = 0
    for line in lines:
        if not line.strip():
            problems.append("the log has a blank line")
            break
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"a log line is not JSON: {line!r}")
            continue
        if record.get("msg") == "request":
            requests += 1
            ms = re.search(r'"ms":\s*(-?[0-9.eE+-]+)', line)
            if ms is None or ("." in ms.group(1) and len(ms.group(1).split(".")[1]) > 3):
                problems.append(f"a request's duration is not in ms to three decimals: {line.strip()}")
    if requests == 0:
        problems.append("--log-requests logged no request")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    ap.add_argument("--policies", default="policies")
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    passed = failed = 0
    for path in conformance.find_cases(args.dirs):
        case = conformance.load_case(path)
        problems = check_case(args.policyc, path, case, args.policies)
        if problems is None:
            continue
        if problems:
            failed += 1
            print(f"FAIL {case.get('name')} ({path}):")
            for p in problems:
                print(f"  {p}")
        else:
            passed += 1
    problems = faults(args.policyc) + all_reasons(args.policyc) + as_kube_sends(args.policyc) + real_dumps(args.policyc) + tls(args.policyc) + port_in_use(args.policyc) + log_lines(args.policyc)
    if problems:
        failed += 1
        print("FAIL faults:")
        for p in problems:
            print(f"  {p}")
    else:
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
