"""One conformance case (../shared/conformance/FORMAT.md) written out for a
command that is not `run.py`'s: the C ABI test (tests/host) and the
extender test (tests/server) both hold their answers to `policyc check`'s.
"""
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "conformance"))
import run as conformance  # noqa: E402,F401  (the shared runner: its case finder and YAML writer)


class CaseFiles:
    """The case's cluster and pod as text and as files in `tmp`; `flags`
    give `check` and `serve` its cluster, plugins and policies; `config` is
    the same as the C ABI's engine configuration."""

    def __init__(self, path, case, policies_dir, tmp):
        dump = dict(Dumper=conformance._Dumper, sort_keys=False)
        self.cluster = case["cluster"] if isinstance(case["cluster"], str) else yaml.dump_all(case["cluster"], **dump)
        self.pod = case["pod"] if isinstance(case["pod"], str) else yaml.dump(case["pod"], **dump)
        self.cluster_file, self.pod_file = os.path.join(tmp, "cluster.yaml"), os.path.join(tmp, "pod.yaml")
        for name, text in ((self.cluster_file, self.cluster), (self.pod_file, self.pod)):
            with open(name, "w", encoding="utf-8") as f:
                f.write(text)
        self.flags = ["--cluster", self.cluster_file]
        self.config = {}
        if case.get("plugins"):
            self.flags += ["--plugins", ",".join(case["plugins"])]
            self.config["plugins"] = list(case["plugins"])
        for pol in case.get("policies") or []:
            src = next((os.path.join(d, pol) for d in (os.path.dirname(os.path.abspath(path)), policies_dir)
                        if d and os.path.isfile(os.path.join(d, pol))), None)
            if src is None:
                raise SystemExit(f"{path}: policy {pol} not found beside the case or in --policies")
            self.flags += ["--policy", src]
            with open(src, encoding="utf-8") as f:
                self.config.setdefault("policies", []).append({"name": os.path.basename(src), "source": f.read()})
