#!/usr/bin/env python3
"""`policyc check` against the live cluster, as kubectl talks to one.

A local API (fake_apiserver.py: HTTPS, a bearer token, pages of 4) holds the
example cluster and a Pending GPU pod. Without --cluster, `check` lists it
as `serve` does, from the kubeconfig's current context, from --context, or
from $KUBECONFIG; its answers must equal `check` on a dump of the same
objects:

1. `--pod NAMESPACE/NAME` and `--pod NAME -n NAMESPACE` of the Pending pod;
2. `--all-pending`;
3. a bound pod by name (answered as if Pending, taken off its node);
4. `--context` picks another context; $KUBECONFIG is read when no flag is;
5. a pod the API does not have, a wrong token (401), a context that does
   not exist: exit 2 with the reason.

  python3 tests/server/check_live_test.py --policyc build/policyc
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_watch_test import kubeconfig  # noqa: E402
from fake_apiserver import FakeApi  # noqa: E402


def run(policyc, args, env=None):
    p = subprocess.run([policyc] + args, capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    policyc = os.path.abspath(ap.parse_args().policyc)
    passed = failed = 0

    def expect(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}")

    with open("examples/cluster.yaml") as f:
        objects = yaml.safe_load(f)["items"]
    with open("examples/pods/gpu-training.yaml") as f:
        job = yaml.safe_load(f)
    pending = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "finetune-llama-x7k2p", "namespace": job["metadata"]["namespace"],
                            "labels": job["spec"]["template"]["metadata"]["labels"]},
               "spec": job["spec"]["template"]["spec"], "status": {"phase": "Pending"}}
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
                       check=True, capture_output=True)
        api = FakeApi(objects + [pending], "s3cret", cert, key)
        try:
            config = os.path.join(tmp, "kubeconfig")
            kubeconfig(config, api.port, cert, "s3cret")
            dump = os.path.join(tmp, "dump.yaml")
            # The dump as `kubectl get` writes it: nodes in name order, as the API lists them.
            nodes = sorted((o for o in objects if o.get("kind") == "Node"), key=lambda o: o["metadata"]["name"])
            rest = [o for o in objects if o.get("kind") != "Node"]
            with open(dump, "w") as f:
                yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes + rest + [pending]}, f)
            ns, name = pending["metadata"]["namespace"], pending["metadata"]["name"]
            live = ["--kubeconfig", config]

            # 1. The Pending pod, named both ways, as on the dump.
            want = run(policyc, ["check", "--cluster", dump, "--pod", f"{ns}/{name}"])
            expect(want[0] == 1 and "0/6 nodes are available" in want[1], f"the dump's answer is not the expected one: {want}")
            got = run(policyc, ["check"] + live + ["--pod", f"{ns}/{name}"])
            expect(got[:2] == want[:2], f"--pod NS/NAME on the live cluster differs from the dump:\n{got}\n{want}")
            got = run(policyc, ["check"] + live + ["--pod", name, "-n", ns])
            expect(got[:2] == want[:2], f"--pod NAME -n NS on the live cluster differs from the dump:\n{got}")
            # 2. --all-pending.
            want = run(policyc, ["check", "--cluster", dump, "--all-pending"])
            got = run(policyc, ["check"] + live + ["--all-pending"])
            expect(got[:2] == want[:2] and name in got[1], f"--all-pending on the live cluster differs:\n{got}\n{want}")
            # 3. A bound pod by name.
            bound = next(o for o in objects if o.get("kind") == "Pod" and o.get("spec", {}).get("nodeName"))
            bns, bname = bound["metadata"].get("namespace", "default"), bound["metadata"]["name"]
            want = run(policyc, ["check", "--cluster", dump, "--pod", f"{bns}/{bname}"])
            got = run(policyc, ["check"] + live + ["--pod", f"{bns}/{bname}"])
            expect(got[:2] == want[:2] and "is bound to" in got[1], f"a bound pod on the live cluster:\n{got}\n{want}")
            # 4. --context and $KUBECONFIG.
            with open(config) as f:
                doc = yaml.safe_load(f)
            doc["contexts"].append({"name": "other", "context": {"cluster": "fake", "user": "u"}})
            doc["current-context"] = "nowhere"
            two = os.path.join(tmp, "two-contexts")
            with open(two, "w") as f:
                yaml.safe_dump(doc, f)
            got = run(policyc, ["check", "--kubeconfig", two, "--context", "other", "--pod", f"{ns}/{name}"])
            expect(got[0] == 1 and "0/6 nodes are available" in got[1], f"--context other: {got}")
            env = dict(os.environ, KUBECONFIG=config, HOME=tmp)
            got = run(policyc, ["check", "--pod", f"{ns}/{name}"], env=env)
            expect(got[0] == 1 and "0/6 nodes are available" in got[1], f"$KUBECONFIG was not read: {got}")
            # 5. Refusals.
            got = run(policyc, ["check"] + live + ["--pod", f"{ns}/no-such-pod"])
            expect(got[0] == 2 and "has no pod" in got[2] and api_origin(got[2]), f"a pod the API lacks: {got}")
            got = run(policyc, ["check", "--kubeconfig", two, "--pod", f"{ns}/{name}"])
            expect(got[0] == 2 and "no context named `nowhere`" in got[2], f"a current context that does not exist: {got}")
            bad = os.path.join(tmp, "bad-token")
            kubeconfig(bad, api.port, cert, "wrong")
            got = run(policyc, ["check", "--kubeconfig", bad, "--pod", f"{ns}/{name}"])
            expect(got[0] == 2 and "401" in got[2], f"a wrong token: {got}")
            got = run(policyc, ["check", "--cluster", dump, "--kubeconfig", config, "--pod", f"{ns}/{name}"])
            expect(got[0] == 2 and "one way" in got[2], f"--cluster with --kubeconfig: {got}")
        finally:
            api.close()
    print(f"check on the live cluster: {passed} passed, {failed} failed")
    return 1 if failed else 0


def api_origin(stderr):
    return "the cluster at https://127.0.0.1:" in stderr


if __name__ == "__main__":
    sys.exit(main())
