#!/usr/bin/env python3
"""Hostile input against policyc, each probe with hard bounds on time and memory.

Every probe is an attack a tenant or a local process could make (issue 38);
each asserts an answer that could fail, never a wall-clock figure of
policyc's own speed, except the bounds a probe must stay within (a hang or a
crash is the failure): the command's exit, its answer, its peak RSS.

CEL (any tenant who may create a ResourceClaim writes it):
  * a `matches` that overflowed std::regex's stack, and a catastrophic
    backtracking pattern: answered, not a crash or a hang;
  * three nested comprehensions over 1,000 items: kube's cost limit ends the
    attempt with kube's words, and the loader says the API would refuse it;
  * the same claims through `policyc serve` (filter answers Error in time).
Growth (inputs whose cost once grew faster than their size):
  * 600 pod shapes each with a 1 MB label: RSS bounded (kept state in bytes);
  * a node with 100,000 taints, 20,000 tolerations against 30,000 taints:
    answered in bounded time, at most 8 toleration suggestions.
The smaller findings: cluster totals that wrapped negative, an empty
snapshot (exit 2, said), a YAML dump cut at a line boundary (said), a JSON
integer of 2^63 (a quantity), preempt echoing a negative count of broken
budgets, a node named twice written as a JSON key twice.
The API client (a compromised or broken API server, a bad kubeconfig):
  * a gzip bomb, a list whose `continue` never ends, a Status message with
    terminal escapes, a file:// server: each a clear error, bounded.
The server (any local process can open a socket):
  * 16 connections dripping their headers a byte a second, beside 20 good
    callers: every good call answered 200, /healthz on the probe listener in
    under 100 ms throughout, the drips cut off after --read-timeout;
  * 16 TLS connections that never send a ClientHello: a good client answered;
  * 200 keep-alive clients at once: every call answered 200;
  * connections that announce 60 MB bodies and send none: past 512 MiB in
    flight the next is refused 503, and good calls go on after them;
  * pipelined requests: every one answered, in order;
  * callers without the bearer token: 401 on the verbs and /metrics, the
    probe listener open; with --client-ca, the probe listener reachable;
  * SIGTERM with slow and idle clients: exit 0 within the grace; SIGHUP
    ignored;
  * node objects sent in a call stand in for that call only: a fake node
    and an untainted copy of a tainted one are gone after it, and six 10 MB
    calls of fake nodes leave the state's node count and RSS bounded.

  python3 tests/server/hostile_test.py --policyc build/policyc
"""
import argparse
import http.client
import json
import os
import re
import resource
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLAIM_FILE = "tests/data/dra-claim-cel-error.yaml"
CLUSTER = "tests/data/dra-cluster.yaml"
SELECTOR = 'device.attributes["gpu.nvidia.com"].type == "gpu"'
RSS_LIMIT_KB = 1 << 20  # 1 GiB for any one probe


def hostile_claims(tmp):
    """Claim manifests (a claim and its pod) with hostile selectors, by name."""
    with open(CLAIM_FILE) as f:
        src = f.read()
    items = "[" + ",".join(["1"] * 1000) + "]"
    selectors = {
        "stack": "'" + "ab" * 4000 + "'.matches('^((((((((((a|b))))))))))*$')",
        "backtrack": "'" + "a" * 4000 + "!'.matches('^(a+)+$')",
        "nested": f"{items}.all(a, {items}.all(b, {items}.all(c, a + b + c > 0)))",
    }
    out = {}
    for name, expr in selectors.items():
        path = os.path.join(tmp, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(src.replace("'" + SELECTOR + "'", "'" + expr.replace("'", "''") + "'"))
        out[name] = path
    return out


def run_bounded(cmd, timeout=60):
    """(exit code, stdout, stderr, peak RSS in KB) of a command run under `timeout`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run(["/usr/bin/time", "-f", "maxrss=%M"] + cmd, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"maxrss=(\d+)", p.stderr)
    return p.returncode, p.stdout, p.stderr, int(m.group(1)) if m else before


def cel_through_check(policyc, tmp):
    problems = []
    claims = hostile_claims(tmp)
    for name, path in claims.items():
        try:
            code, out, err, rss = run_bounded([policyc, "check", "--cluster", CLUSTER, "--pod", path, "-o", "json"])
        except subprocess.TimeoutExpired:
            problems.append(f"check with the `{name}` selector did not end in 60 s")
            continue
        if code not in (0, 1):
            problems.append(f"check with the `{name}` selector exited {code}: {err[-300:]}")
            continue
        if rss > RSS_LIMIT_KB:
            problems.append(f"check with the `{name}` selector took {rss} KB")
        answer = json.loads(out)
        if name == "nested" and "actual cost limit exceeded" not in answer.get("error", ""):
            problems.append(f"the nested comprehensions were not cancelled at kube's cost limit: {answer.get('error')!r}")
        if name == "stack" and answer.get("error"):
            problems.append(f"the stack-overflowing regex is an error, not an answer: {answer.get('error')!r}")
    # Loaded from a snapshot, the too-complex selector is named as the API would refuse it.
    with open(claims["nested"]) as f:
        claim_only = f.read().split("\n---\n")[0]
    snapshot = os.path.join(tmp, "nested-claim-snapshot.yaml")
    with open(snapshot, "w") as f:
        f.write(claim_only)
    code, out, err, _ = run_bounded([policyc, "check", "--cluster", CLUSTER, "--cluster", snapshot, "--pod",
                                     "tests/data/one-gpu-pod.yaml"])
    if "warning[S0312]" not in err or "too complex, exceeds cost limit" not in err:
        problems.append(f"a snapshot's too-complex selector was not said as kube's validation says it: {err[-400:]}")
    return problems


class Serve:
    """A `policyc serve` on free ports (the main one and the probe listener)."""

    def __init__(self, policyc, flags):
        self.proc = subprocess.Popen([policyc, "serve", "--listen", "127.0.0.1:0", "--probe-listen", "127.0.0.1:0"] + flags,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = self.probe = None
        while self.port is None or self.probe is None:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("serve did not start:\n" + "".join(self.log))
            self.log.append(line)
            m = re.search(r"serving the extender at https?://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            m = re.search(r"serving probes at http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.probe = int(m.group(1))
        threading.Thread(target=lambda: self.log.extend(iter(self.proc.stderr.readline, "")), daemon=True).start()

    def call(self, method, path, body=None, headers=None, port=None, context=None, timeout=30):
        port = port or self.port
        c = (http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context) if context
             else http.client.HTTPConnection("127.0.0.1", port, timeout=timeout))
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        c.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        out = r.status, r.read().decode("utf-8", "replace")
        c.close()
        return out

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self, timeout=15):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None


def web_pod():
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]}}


FILTER = {"Pod": web_pod(), "NodeNames": ["ip-10-0-1-17.ec2.internal"], "Nodes": None}


def cel_through_serve(policyc, tmp):
    problems = []
    claims = hostile_claims(tmp)
    with open(claims["nested"]) as f:
        claim, pod = f.read().split("\n---\n")
    snapshot = os.path.join(tmp, "claim.yaml")
    with open(snapshot, "w") as f:
        f.write(claim)
    import yaml
    pod = yaml.safe_load(pod)
    serve = Serve(policyc, ["--cluster", CLUSTER, "--cluster", snapshot])
    try:
        started = time.time()
        status, body = serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": ["gpu-a", "gpu-b"], "Nodes": None},
                                  timeout=60)
        if status != 200 or "actual cost limit exceeded" not in json.loads(body).get("Error", ""):
            problems.append(f"serve: the nested selector's filter: {status} {body[:200]}")
        if time.time() - started > 30:
            problems.append("serve: the nested selector's filter took over 30 s")
        status, _ = serve.call("GET", "/healthz", port=serve.probe, timeout=5)
        if status != 200:
            problems.append("serve: /healthz after the hostile selector")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def drip(port, stop, cut):
    """Sends a request's headers a byte a second until cut off or stopped."""
    s = socket.create_connection(("127.0.0.1", port))
    data = b"POST /policyc/filter HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    started = time.time()
    try:
        for b in data:
            if stop.is_set():
                break
            s.sendall(bytes([b]))
            time.sleep(1)
    except OSError:
        cut.append(time.time() - started)
    finally:
        s.close()


def slow_clients(policyc):
    """16 drip-feeding connections beside good callers; /healthz fast throughout."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--read-timeout", "3", "--max-connections", "64"])
    try:
        stop, cut = threading.Event(), []
        drips = [threading.Thread(target=drip, args=(serve.port, stop, cut)) for _ in range(16)]
        for t in drips:
            t.start()
        time.sleep(1.5)
        bad, slow_probes = [], []

        def good():
            for _ in range(5):
                status, body = serve.call("POST", "/policyc/filter", FILTER, timeout=10)
                if status != 200 or json.loads(body).get("NodeNames") != FILTER["NodeNames"]:
                    bad.append(f"{status} {body[:100]}")

        callers = [threading.Thread(target=good) for _ in range(20)]
        for t in callers:
            t.start()
        end = time.time() + 6
        while time.time() < end:
            t0 = time.time()
            status, _ = serve.call("GET", "/healthz", port=serve.probe, timeout=5)
            took = time.time() - t0
            if status != 200 or took > 0.1:
                slow_probes.append(f"{status} in {took * 1e3:.0f} ms")
            time.sleep(0.2)
        for t in callers:
            t.join()
        stop.set()
        for t in drips:
            t.join()
        if bad:
            problems.append(f"slowloris: {len(bad)} good calls not answered right, e.g. {bad[0]}")
        if slow_probes:
            problems.append(f"slowloris: /healthz slow or failing: {slow_probes[:3]}")
        if len(cut) < 16 or max(cut) > 8:
            problems.append(f"slowloris: drip-feeding connections not cut off after --read-timeout 3: {sorted(cut)}")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def many_keepalive(policyc):
    """200 keep-alive clients, 3 calls each: every call answered 200."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml"])
    try:
        failures = []

        def client():
            c = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
            try:
                for _ in range(3):
                    c.request("POST", "/policyc/filter", body=json.dumps(FILTER).encode(),
                              headers={"Content-Type": "application/json"})
                    r = c.getresponse()
                    body = r.read()
                    if r.status != 200 or json.loads(body).get("NodeNames") != FILTER["NodeNames"]:
                        failures.append(r.status)
            except (OSError, http.client.HTTPException) as e:
                failures.append(repr(e))
            finally:
                c.close()

        threads = [threading.Thread(target=client) for _ in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            problems.append(f"200 keep-alive clients: {len(failures)} calls failed, e.g. {failures[:3]}")
        # Pipelining: three requests in one write, three answers in order.
        body = json.dumps(FILTER).encode()
        one = b"POST /policyc/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + \
            str(len(body)).encode() + b"\r\n\r\n" + body
        s = socket.create_connection(("127.0.0.1", serve.port), timeout=10)
        s.sendall(one + one + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except socket.timeout:
            pass
        s.close()
        statuses = re.findall(rb"HTTP/1\.1 (\d+)", got)
        if statuses != [b"200", b"200", b"200"] or not got.endswith(b"ok\n"):
            problems.append(f"pipelined requests: answered {statuses}")
        if serve.rss_kb() > RSS_LIMIT_KB:
            problems.append(f"serve's RSS after 600 calls: {serve.rss_kb()} KB")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def authentication(policyc, tmp):
    problems = []
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret-token\n")
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--token-file", token])
    try:
        bearer = {"Authorization": "Bearer s3cret-token"}
        for path, body in (("/policyc/filter", FILTER), ("/policyc/bind", {"PodName": "x", "PodNamespace": "kube-system",
                                                                         "PodUID": "u", "Node": "nowhere"})):
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic czNjcmV0"}):
                status, _ = serve.call("POST", path, body, headers=headers)
                if status != 401:
                    problems.append(f"{path} with {headers or 'no token'}: {status}, expected 401")
        status, _ = serve.call("POST", "/policyc/filter", FILTER, headers=bearer)
        if status != 200:
            problems.append(f"filter with the token: {status}")
        if serve.call("GET", "/metrics")[0] != 401:
            problems.append("/metrics on the main listener without the token was answered")
        if serve.call("GET", "/metrics", headers=bearer)[0] != 200:
            problems.append("/metrics on the main listener with the token was refused")
        for path in ("/healthz", "/readyz", "/metrics"):
            if serve.call("GET", path, port=serve.probe)[0] != 200:
                problems.append(f"the probe listener's {path} asked for authentication")
        if serve.call("POST", "/policyc/filter", FILTER, port=serve.probe)[0] != 404:
            problems.append("the probe listener answered a verb")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def tls_clients(policyc, tmp):
    """With --client-ca: idle TCP connections that never say ClientHello do not block a good client;
    the probe listener answers kubelet without a certificate."""
    problems = []
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
                   check=True, capture_output=True)
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--tls-cert", cert, "--tls-key", key,
                            "--client-ca", cert])
    try:
        idle = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(16)]
        context = ssl.create_default_context(cafile=cert)
        context.load_cert_chain(cert, key)
        t0 = time.time()
        status, body = serve.call("POST", "/policyc/filter", FILTER, context=context, timeout=10)
        if status != 200 or time.time() - t0 > 5:
            problems.append(f"16 idle TLS connections: a good client got {status} after {time.time() - t0:.1f} s")
        for s in idle:
            s.close()
        if serve.call("GET", "/healthz", port=serve.probe, timeout=5)[0] != 200:
            problems.append("--client-ca: the probe listener did not answer without a certificate")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def shutdown(policyc):
    """SIGHUP is ignored; SIGTERM with a drip-feeding and an idle keep-alive client ends in the grace, exit 0."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--read-timeout", "30"])
    serve.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    if serve.proc.poll() is not None:
        return [f"SIGHUP ended serve (exit {serve.proc.returncode})"]
    if serve.call("GET", "/healthz")[0] != 200:
        problems.append("after SIGHUP /healthz did not answer")
    stop, cut = threading.Event(), []
    slow = threading.Thread(target=drip, args=(serve.port, stop, cut))
    slow.start()
    idle = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=10)
    idle.request("GET", "/healthz")
    idle.getresponse().read()
    time.sleep(0.5)
    t0 = time.time()
    code = serve.stop(timeout=20)
    took = time.time() - t0
    stop.set()
    slow.join()
    if code != 0 or took > 12:
        problems.append(f"SIGTERM with slow and idle clients: exit {code} after {took:.1f} s (grace 10 s)")
    if not any("SIGHUP ignored" in line for line in serve.log):
        problems.append("SIGHUP was not logged")
    return problems


def sent_nodes(policyc):
    """Node objects in a call are judged for that call only: a fake node or an untainted copy of a tainted
    one changes nothing after it; six 10 MB calls of fake nodes leave RSS bounded."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml"])
    try:
        tainted = "ip-10-0-2-91.ec2.internal"  # the GPU node, tainted
        before = serve.call("GET", "/metrics", port=serve.probe)[1]
        ghost = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ghost", "labels": {"kubernetes.io/hostname": "ghost"}},
                 "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
        untainted = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": tainted, "labels": {}},
                     "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
        status, body = serve.call("POST", "/policyc/filter", {"Pod": web_pod(), "NodeNames": None,
                                                               "Nodes": {"items": [ghost, untainted]}})
        passed = [n["metadata"]["name"] for n in (json.loads(body).get("Nodes") or {}).get("items", [])]
        if status != 200 or sorted(passed) != sorted(["ghost", tainted]):
            problems.append(f"the sent nodes were not judged as sent: {status} {body[:200]}")
        status, body = serve.call("POST", "/policyc/filter", {"Pod": web_pod(), "NodeNames": ["ghost", tainted], "Nodes": None})
        got = json.loads(body)
        if got.get("NodeNames"):
            problems.append(f"a node sent once stayed in the state: {got.get('NodeNames')}")
        rss = serve.rss_kb()
        for i in range(6):
            big = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"fake-{i}-{j}",
                    "labels": {f"k{k}": f"v{i}-{j}-{k}-" + "x" * 40 for k in range(80)}}} for j in range(1000)]
            status, _ = serve.call("POST", "/policyc/filter", {"Pod": web_pod(), "NodeNames": None, "Nodes": {"items": big}},
                                   timeout=120)
            if status != 200:
                problems.append(f"a 10 MB call of fake nodes: {status}")
        grew = serve.rss_kb() - rss
        if grew > 512 * 1024:
            problems.append(f"six 10 MB calls of fake nodes grew RSS by {grew} KB")
        after = serve.call("GET", "/metrics", port=serve.probe)[1]
        nodes = lambda text: re.search(r"policyc_cluster_nodes (\d+)", text).group(1)
        if nodes(before) != nodes(after):
            problems.append(f"the state's node count changed: {nodes(before)} -> {nodes(after)}")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


class HostileApi:
    """An API server on plain HTTP that answers every list with `mode`'s attack."""

    def __init__(self, mode):
        import gzip
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        bomb = gzip.compress(b"\0" * (300 << 20), compresslevel=9) if mode == "gzip-bomb" else b""
        self.calls = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                api.calls += 1
                if mode == "endless-continue":
                    body, code, extra = json.dumps({"kind": "NodeList", "metadata": {"resourceVersion": "1",
                                                    "continue": "again"}, "items": []}).encode(), 200, {}
                elif mode == "gzip-bomb":
                    body, code, extra = bomb, 200, {"Content-Encoding": "gzip"}
                else:  # a Status whose message would drive the terminal
                    body, code, extra = json.dumps({"kind": "Status", "status": "Failure", "code": 403,
                                                    "message": "nodes is forbidden\x1b[2J\x1b]0;owned\x07"}).encode(), 403, {}
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *args: None  # policyc hangs up on the bomb: expected
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.port = self.httpd.server_address[1]

    def close(self):
        self.httpd.shutdown()


def kubeconfig(tmp, server):
    path = os.path.join(tmp, "kubeconfig")
    with open(path, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: "{server}"}}}}]
users: [{{name: u, user: {{token: t0k3n}}}}]
""")
    return path


def api_client(policyc, tmp):
    """The API client's bounds: a gzip bomb, a list that never ends, a Status with terminal escapes, a file:// server."""
    problems = []
    for mode, want in (("gzip-bomb", "over 256 MiB"), ("endless-continue", "a list that does not end"),
                       ("escapes", "\\x1b[2J")):
        api = HostileApi(mode)
        try:
            cmd = [policyc, "check", "--kubeconfig", kubeconfig(tmp, f"http://127.0.0.1:{api.port}"), "--all-pending"]
            try:
                code, out, err, rss = run_bounded(cmd, timeout=120)
            except subprocess.TimeoutExpired:
                problems.append(f"the API client against `{mode}` did not end in 120 s")
                continue
            if code == 0 or want not in err or "\x1b" in err:
                problems.append(f"against `{mode}`: exit {code}, {err.strip()[-300:]!r}")
            if rss > RSS_LIMIT_KB:
                problems.append(f"against `{mode}`: {rss} KB")
            if mode == "endless-continue" and api.calls > 20001:
                problems.append(f"the endless list was asked {api.calls} times")
        finally:
            api.close()
    code, out, err, _ = run_bounded([policyc, "check", "--kubeconfig", kubeconfig(tmp, "file:///etc/passwd"), "--all-pending"])
    if code != 2 or "is not an https:// (or http://) address" not in err:
        problems.append(f"a file:// server: exit {code}, {err.strip()[-200:]!r}")
    return problems


def pod_shapes(policyc):
    """600 pod shapes each with a 1 MB label: what is kept per shape is bounded in bytes, not only in count."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml"])
    try:
        rss = serve.rss_kb()
        c = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
        for i in range(600):
            pod = web_pod()
            pod["metadata"]["name"] = f"p{i}"
            pod["metadata"]["labels"] = {"big": f"x{i}" + "y" * (1 << 20)}
            pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"big": f"x{i}" + "y" * 1000}}, "topologyKey": "kubernetes.io/hostname"}]}}
            c.request("POST", "/policyc/filter", body=json.dumps({"Pod": pod, "NodeNames": FILTER["NodeNames"]}).encode(),
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                problems.append(f"shape {i}: {r.status}")
                break
        c.close()
        grew = serve.rss_kb() - rss
        if grew > 512 * 1024:
            problems.append(f"600 pod shapes with a 1 MB label grew RSS by {grew // 1024} MB")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def taint_floods(policyc, tmp):
    """A node with 100,000 taints; 20,000 tolerations against 30,000 taints: answered, bounded."""
    problems = []
    taints = lambda n: [{"key": f"k{i}", "value": f"v{i}", "effect": "NoSchedule"} for i in range(n)]
    node = lambda n: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
                      "spec": {"taints": taints(n)}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "tolerations": [{"key": f"k{i}", "operator": "Equal", "value": "other", "effect": "NoSchedule"}
                                    for i in range(20000)]}}
    files = {}
    for name, obj in (("100k", {"apiVersion": "v1", "kind": "List", "items": [node(100000)]}),
                      ("30k", {"apiVersion": "v1", "kind": "List", "items": [node(30000)]}), ("pod", pod)):
        files[name] = os.path.join(tmp, f"taints-{name}.json")
        with open(files[name], "w") as f:
            json.dump(obj, f)
    for cluster, pod_file in ((files["100k"], "examples/pods/web.yaml"), (files["30k"], files["pod"])):
        try:
            code, out, err, rss = run_bounded([policyc, "check", "--no-cache", "--cluster", cluster, "--pod", pod_file], timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"check of {os.path.basename(pod_file)} against {os.path.basename(cluster)} did not end in 60 s")
            continue
        if code != 1 or "untolerated taint(s)" not in out or rss > RSS_LIMIT_KB:
            problems.append(f"{os.path.basename(cluster)}: exit {code}, {rss} KB, {out[:200]!r}")
        if out.count("tolerate the taint") > 8:
            problems.append(f"{os.path.basename(cluster)}: {out.count('tolerate the taint')} toleration suggestions")
    return problems


def bodies_in_flight(policyc):
    """Connections that announce 60 MB bodies and send none: past 512 MiB announced, the next is refused 503
    at its headers; once they go, a good call is answered."""
    problems = []
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml", "--read-timeout", "20"])
    try:
        held, statuses = [], []
        for i in range(10):
            s = socket.create_connection(("127.0.0.1", serve.port), timeout=5)
            s.sendall(b"POST /policyc/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 60000000\r\n\r\n{")
            held.append(s)
        time.sleep(0.5)
        for s in held:
            s.settimeout(0.2)
            try:
                statuses.append(s.recv(64).split(b" ")[1])
            except (socket.timeout, IndexError):
                statuses.append(b"waiting")
        if statuses.count(b"503") != 2 or statuses.count(b"waiting") != 8:
            problems.append(f"10 bodies of 60 MB announced: {statuses}, expected 8 held and 2 refused 503")
        for s in held:
            s.close()
        time.sleep(0.5)
        status, body = serve.call("POST", "/policyc/filter", FILTER)
        if status != 200:
            problems.append(f"after the announced bodies went: {status} {body[:100]}")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def smaller(policyc, tmp):
    """The smaller findings: totals that wrapped, an empty snapshot, a YAML dump cut at a line boundary,
    a JSON integer past int64, preempt's echoed UIDs and negative counts, a node named twice."""
    problems = []
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    node = lambda name, cpu: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                              "status": {"allocatable": {"cpu": cpu, "memory": "1Gi", "pods": "110"}}}
    huge = write("huge.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("a", "1e18"), node("b", "1e18")]}))
    out = subprocess.run([policyc, "inspect", "--cluster", huge], capture_output=True, text=True).stdout
    cpu = [l for l in out.splitlines() if l.strip().startswith("cpu")]
    if not cpu or "-" in cpu[0].split()[1]:
        problems.append(f"two nodes of cpu 1e18: the total is {cpu}")
    empty = write("empty.yaml", "# nothing here\n")
    p = subprocess.run([policyc, "check", "--cluster", empty, "--pod", "examples/pods/web.yaml"], capture_output=True, text=True)
    if p.returncode != 2 or "holds no Kubernetes object" not in p.stderr:
        problems.append(f"an empty snapshot: exit {p.returncode}, {p.stderr.strip()[:200]!r}")
    with open("examples/cluster.yaml") as f:
        lines = f.read().splitlines(keepends=True)
    dump = "apiVersion: v1\nitems:\n" + "".join(l for l in lines if l.startswith(("- ", "  ")))  # as kubectl orders a List
    cut = write("cut.yaml", dump[: dump.index("- apiVersion", len(dump) // 2)])
    p = subprocess.run([policyc, "check", "--cluster", cut, "--pod", "examples/pods/web.yaml"], capture_output=True, text=True)
    if "warning[K0222]" not in p.stderr or "cut short" not in p.stderr:
        problems.append(f"a YAML dump cut at a line boundary: {p.stderr.strip()[:300]!r}")
    big = write("bigint.json", '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", '
                '"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": 9223372036854775808, "pods": "110"}}}]}')
    p = subprocess.run([policyc, "check", "--cluster", big, "--pod", "examples/pods/web.yaml"], capture_output=True, text=True)
    if p.returncode not in (0, 1) or "error" in p.stderr:
        problems.append(f"a JSON integer of 2^63: exit {p.returncode}, {p.stderr.strip()[:200]!r}")
    serve = Serve(policyc, ["--cluster", "examples/cluster.yaml"])
    try:
        fits = "ip-10-0-1-17.ec2.internal"
        status, body = serve.call("POST", "/policyc/preempt", {"Pod": web_pod(), "NodeNameToVictims": None,
                                  "NodeNameToMetaVictims": {fits: {"Pods": [{"UID": "no-such-uid"}], "NumPDBViolations": -1}}})
        if '"NumPDBViolations": -' in body:
            problems.append(f"preempt echoed a negative count of broken budgets: {body[:200]}")
        status, body = serve.call("POST", "/policyc/filter",
                                  b'{"Pod": ' + json.dumps(web_pod()).encode() + b', "NodeNames": ["ghost", "ghost", "ip-10-0-2-91.ec2.internal", '
                                  b'"ip-10-0-2-91.ec2.internal"]}')
        if body.count('"ghost"') != 1 or body.count('"ip-10-0-2-91.ec2.internal"') != 1:
            problems.append(f"a node named twice is a key twice: {body[:300]}")
    finally:
        if serve.stop() != 0:
            problems.append("serve did not exit 0 on SIGTERM")
    return problems


def ipv6_listen(policyc):
    """--listen [::1]:0 serves (where this machine has IPv6 loopback)."""
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError:
        return []
    p = subprocess.Popen([policyc, "serve", "--cluster", "examples/cluster.yaml", "--listen", "[::1]:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=15)
    m = re.search(r"serving the extender at http://\[::1\]:(\d+)", line)
    return [] if m else [f"--listen [::1]:0 did not serve: {line.strip()}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    args = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        probes = [("CEL through check", lambda: cel_through_check(args.policyc, tmp)),
                  ("CEL through serve", lambda: cel_through_serve(args.policyc, tmp)),
                  ("slow clients", lambda: slow_clients(args.policyc)),
                  ("200 keep-alive clients and pipelining", lambda: many_keepalive(args.policyc)),
                  ("authentication", lambda: authentication(args.policyc, tmp)),
                  ("TLS clients that never say hello", lambda: tls_clients(args.policyc, tmp)),
                  ("shutdown and SIGHUP", lambda: shutdown(args.policyc)),
                  ("node objects sent change no state", lambda: sent_nodes(args.policyc)),
                  ("the API client's bounds", lambda: api_client(args.policyc, tmp)),
                  ("pod shapes with megabyte labels", lambda: pod_shapes(args.policyc)),
                  ("taint and toleration floods", lambda: taint_floods(args.policyc, tmp)),
                  ("the smaller findings", lambda: smaller(args.policyc, tmp)),
                  ("request bodies in flight", lambda: bodies_in_flight(args.policyc)),
                  ("IPv6 listen", lambda: ipv6_listen(args.policyc))]
        for name, probe in probes:
            problems = probe()
            if problems:
                failed += 1
                print(f"FAIL {name}:")
                for p in problems:
                    print(f"  {p}")
            else:
                passed += 1
                print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
