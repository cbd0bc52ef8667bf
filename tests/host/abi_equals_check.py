#!/usr/bin/env python3
"""The C ABI answers as `policyc check` does. For every conformance case in
the directories given, libpolicyc.so (through ctypes, as a host would call
it) makes the engine the case asks for (its plugins and policies), loads its
cluster, decides its pod and explains the decision; the JSON document must
equal `policyc check --output json`'s. An input that check refuses (exit 2)
must be refused by the ABI with an error status and a message; one it
accepts must be accepted.

  python3 tests/host/abi_equals_check.py --policyc build/policyc --lib build/libpolicyc.so \\
      --policies policies ../shared/conformance/cases ...
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from conformance_case import CaseFiles, conformance  # noqa: E402

ABI_VERSION = (1 << 16) | 0


class Abi:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        vp, sz, u32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32
        self.lib = lib
        for name, args, res in [
            ("policyc_abi_version", [], u32),
            ("policyc_last_error", [], ctypes.c_char_p),
            ("policyc_engine_new", [u32, ctypes.c_char_p, sz, ctypes.POINTER(vp)], ctypes.c_int),
            ("policyc_engine_free", [vp], None),
            ("policyc_cluster_new", [ctypes.POINTER(vp)], ctypes.c_int),
            ("policyc_cluster_free", [vp], None),
            ("policyc_cluster_load", [vp, ctypes.c_char_p, sz], ctypes.c_int),
            ("policyc_cluster_view", [vp, ctypes.POINTER(vp)], ctypes.c_int),
            ("policyc_view_free", [vp], None),
            ("policyc_decide", [vp, vp, ctypes.c_char_p, sz, vp, ctypes.POINTER(vp)], ctypes.c_int),
            ("policyc_result_explain_json", [vp, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(sz)], ctypes.c_int),
            ("policyc_result_free", [vp], None),
        ]:
            f = getattr(lib, name)
            f.argtypes, f.restype = args, res

    def error(self):
        return (self.lib.policyc_last_error() or b"").decode("utf-8", "replace")

    def check(self, config, cluster_text, pod_text):
        """(refused, message) or (False, the explanation as parsed JSON)."""
        lib = self.lib
        engine, cluster, view, result = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        try:
            cfg = json.dumps(config).encode()
            if lib.policyc_engine_new(ABI_VERSION, cfg, len(cfg), ctypes.byref(engine)) != 0:
                return True, self.error()
            if lib.policyc_cluster_new(ctypes.byref(cluster)) != 0:
                return True, self.error()
            if lib.policyc_cluster_load(cluster, cluster_text, len(cluster_text)) != 0:
                return True, self.error()
            if lib.policyc_cluster_view(cluster, ctypes.byref(view)) != 0:
                return True, self.error()
            if lib.policyc_decide(engine, view, pod_text, len(pod_text), None, ctypes.byref(result)) != 0:
                return True, self.error()
            text, size = ctypes.c_char_p(), ctypes.c_size_t()
            if lib.policyc_result_explain_json(result, ctypes.byref(text), ctypes.byref(size)) != 0:
                return True, self.error()
            return False, json.loads(ctypes.string_at(text, size.value).decode("utf-8"))
        finally:
            lib.policyc_result_free(result)
            lib.policyc_view_free(view)
            lib.policyc_cluster_free(cluster)
            lib.policyc_engine_free(engine)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--policies", default="policies")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    abi = Abi(args.lib)
    if abi.lib.policyc_abi_version() != ABI_VERSION:
        raise SystemExit(f"the library's ABI is {abi.lib.policyc_abi_version():#x}, this test's {ABI_VERSION:#x}")
    passed = failed = 0
    for path in conformance.find_cases(args.dirs):
        case = conformance.load_case(path)
        with tempfile.TemporaryDirectory() as tmp:
            files = CaseFiles(path, case, args.policies, tmp)
            # check's suggestions are check's own (the ABI answers the placement).
            p = subprocess.run([args.policyc, "check"] + files.flags + ["--pod", files.pod_file, "--output", "json",
                                                                          "--no-suggest"],
                               capture_output=True)
            refused, got = abi.check(files.config, files.cluster.encode("utf-8"), files.pod.encode("utf-8"))
        problem = None
        if p.returncode == 2:
            if not refused:
                problem = "check refuses the input, the ABI accepts it"
            elif not got.strip():
                problem = "the ABI refuses without a message"
        elif p.returncode not in (0, 1):
            problem = f"check exits {p.returncode}"
        elif refused:
            problem = f"the ABI refuses what check accepts: {got.strip().splitlines()[0] if got.strip() else ''}"
        elif got != json.loads(p.stdout):
            problem = "the documents differ:\n  check: " + p.stdout.decode()[:300] + "\n  ABI:   " + json.dumps(got)[:300]
        if problem:
            failed += 1
            print(f"FAIL {case.get('name')} ({path}): {problem}")
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
