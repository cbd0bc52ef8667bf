#!/usr/bin/env python3
"""The snapshot cache (docs/cache.md) changes no answer. For each snapshot
and pod, in a scratch copy of the snapshot: `check` without the cache, then
with it (a miss that writes the cache: it must exist afterwards), then again
(a hit): stdout, stderr and the exit status must be the same all three
times; `inspect` likewise. `drain`, `check` of a bound pod and `serve
--cluster` read the bound pods and nodes whole from the objects cache
beside it: the same answers, and (an object renamed inside that cache,
its checksum made again) proof that a hit reads it and not the file. Then the cache must not be trusted when it should
not be: the file changed in place (same size), the cache damaged, the cache
of another format, an image damaged past its checksum (the checksum made
again) — each must give the answer of a fresh parse. The cache lives in
$XDG_CACHE_HOME/policyc (a scratch one here), never beside the snapshot; a
run that makes that folder says so once; a read-only snapshot folder is no
obstacle.

  python3 tests/cli/cache_same_answers.py --policyc build/policyc
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from extender_test import Serve  # noqa: E402

CASES = [
    ("examples/cluster.yaml", ["examples/pods/gpu-training.yaml", "examples/pods/web-one-per-node.yaml",
                               "examples/pods/web.yaml"]),
    ("tests/data/storage-cluster.yaml", ["tests/data/pod-mysql-bound-volume.yaml", "tests/data/pod-missing-claim.yaml"]),
    ("tests/data/pending-snapshot.yaml", ["--all-pending"]),
    ("tests/data/bom-cluster.json", ["examples/pods/web.yaml"]),
    ("tests/data/drain-cluster.yaml", ["tests/data/suggest/web-spread-hostname.yaml"]),
    # A load with a warning (K0222, cut short) is cached with it: a hit says it again, pointing into the file.
    ("tests/data/cut-short-snapshot.yaml", ["examples/pods/web.yaml"]),
]


def hash64(data, h=0x9E3779B97F4A7C15):
    """snapshot_cache.cpp's Hash."""
    mask = (1 << 64) - 1
    i = 0
    while i + 8 <= len(data):
        h = ((h ^ int.from_bytes(data[i:i + 8], "little")) * 0x100000001B3) & mask
        h ^= h >> 29
        i += 8
    for b in data[i:]:
        h = ((h ^ b) * 0x100000001B3) & mask
    return h ^ (h >> 31)


def varint(data, at):
    v = shift = 0
    while True:
        v |= (data[at] & 0x7F) << shift
        shift += 7
        at += 1
        if not data[at - 1] & 0x80:
            return v, at


def encode_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


KEY_FIELDS = 9  # snapshot_cache.cpp's kKeyFields: what a file is keyed with


def with_checksum(cache_bytes, payload):
    """The cache with its payload replaced and its checksum made again."""
    files, at = varint(cache_bytes, 12)
    for _ in range(KEY_FIELDS * files):
        _, at = varint(cache_bytes, at)
    return cache_bytes[:at] + encode_varint(len(payload)) + encode_varint(hash64(payload)) + payload


def payload_of(cache_bytes):
    files, at = varint(cache_bytes, 12)
    for _ in range(KEY_FIELDS * files + 2):
        _, at = varint(cache_bytes, at)
    return cache_bytes[at:]


CACHE_HOME = tempfile.mkdtemp(prefix="policyc-cache-test-")  # XDG_CACHE_HOME for every run
CACHE_DIR = os.path.join(CACHE_HOME, "policyc")


def run(policyc, args, cache=True, cache_home=CACHE_HOME):
    env = dict(os.environ, POLICYC_CACHE_MIN_BYTES="0", XDG_CACHE_HOME=cache_home)
    p = subprocess.run([policyc] + args + ([] if cache else ["--no-cache"]), capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def cache_file():
    """The one cache in the scratch cache folder, or None."""
    names = [n for n in os.listdir(CACHE_DIR) if n.endswith(".cache")] if os.path.isdir(CACHE_DIR) else []
    return os.path.join(CACHE_DIR, names[0]) if len(names) == 1 else None


def objects_file():
    """The one objects cache in the scratch cache folder, or None."""
    names = [n for n in os.listdir(CACHE_DIR) if n.endswith(".objects")] if os.path.isdir(CACHE_DIR) else []
    return os.path.join(CACHE_DIR, names[0]) if len(names) == 1 else None


def serve_answers(policyc, cluster, cache):
    """A `serve --cluster` through the cache (or not): its filter answers
    by node names and by node objects (those stand in for the state's own,
    which come back from the node objects it kept)."""
    env_before = dict(os.environ)
    os.environ.update(POLICYC_CACHE_MIN_BYTES="0", XDG_CACHE_HOME=CACHE_HOME)
    try:
        serve = Serve(policyc, ["--cluster", cluster] + ([] if cache else ["--no-cache"]))
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    import yaml
    with open("examples/pods/web.yaml") as f:
        pod = yaml.safe_load(f)
    with open(cluster) as f:
        nodes = [o for o in yaml.safe_load(f)["items"] if o.get("kind") == "Node"]
    names = [n["metadata"]["name"] for n in nodes]
    answers = [serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names}),
               serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": None, "Nodes": {"items": nodes}}),
               serve.call("POST", "/policyc/filter", {"Pod": pod, "NodeNames": names})]
    return answers, serve.stop()


def clear_cache():
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    os.makedirs(CACHE_DIR)  # made already: no run below says it made it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policyc", required=True)
    policyc = ap.parse_args().policyc
    passed = failed = 0

    def expect(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}")

    with tempfile.TemporaryDirectory() as tmp:
        for cluster, pods in CASES:
            copy = os.path.join(tmp, os.path.basename(cluster))
            shutil.copy(cluster, copy)
            for pod in pods:
                args = ["check", "--cluster", copy] + (["--all-pending"] if pod == "--all-pending" else ["--pod", pod])
                clear_cache()
                fresh = run(policyc, args, cache=False)
                miss = run(policyc, args)
                expect(cache_file() is not None, f"{cluster}: no cache written")
                beside = [n for n in os.listdir(tmp) if "cache" in n]
                expect(not beside, f"{cluster}: a cache was written beside the snapshot: {beside}")
                hit = run(policyc, args)
                expect(fresh == miss, f"{cluster} {pod}: the first cached run differs from a parse")
                expect(fresh == hit, f"{cluster} {pod}: the run from the cache differs from a parse")
            inspect = ["inspect", "--cluster", copy]
            expect(run(policyc, inspect, cache=False) == run(policyc, inspect), f"{cluster}: inspect from the cache differs")

        # drain, check of a bound pod and serve --cluster: the objects cache.
        copy = os.path.join(tmp, "drain-cluster.yaml")
        shutil.copy("tests/data/drain-cluster.yaml", copy)
        for args in (["drain", "--cluster", copy, "-o", "json"], ["drain", "--cluster", copy, "--node", "node-b"],
                     ["check", "--cluster", copy, "--pod", "shop/db-0", "-o", "json"]):
            clear_cache()
            fresh = run(policyc, args, cache=False)
            expect(objects_file() is None, f"{args[0]} --no-cache wrote an objects cache")
            miss = run(policyc, args)
            expect(objects_file() is not None and cache_file() is not None, f"{args}: no caches written")
            hit = run(policyc, args)
            expect(fresh == miss == hit and fresh[0] in (0, 1), f"{args} from the caches differs: {fresh} {hit}")
        # A hit reads the objects cache, not the file: a pod renamed there
        # (same length, checksum made again) is the pod drain names.
        args = ["drain", "--cluster", copy, "-o", "json"]
        objects = objects_file()
        good = open(objects, "rb").read()
        payload = payload_of(good)
        expect(payload.count(b"db-0") == 1, "the objects cache holds the pod shop/db-0 once")
        open(objects, "wb").write(with_checksum(good, payload.replace(b"db-0", b"dx-0")))
        renamed = run(policyc, args)
        expect("shop/dx-0" in renamed[1] and "shop/db-0" not in renamed[1],
               f"drain did not read its pods from the objects cache: {renamed[1]}")
        # Damaged past its checksum (remade): refused or read, never a crash.
        for at in range(0, len(payload), max(1, len(payload) // 25)):
            damaged = bytearray(payload)
            damaged[at] ^= 0x5A
            open(objects, "wb").write(with_checksum(good, bytes(damaged)))
            answer = run(policyc, args)
            expect(answer[0] in (0, 1) and "Sanitizer" not in answer[2],
                   f"an objects cache damaged at byte {at} crashed drain: {answer[2][-300:]}")
        open(objects, "wb").write(with_checksum(good, payload[: len(payload) // 2]))
        expect(run(policyc, args) == run(policyc, args, cache=False), "an objects cache cut in half was used")
        # ... and a damaged one (a byte flipped, checksum not remade) is not trusted.
        data = bytearray(good)
        data[len(data) // 2] ^= 0xFF
        open(objects, "wb").write(bytes(data))
        expect(run(policyc, args) == run(policyc, args, cache=False), "a damaged objects cache was used")
        # (its payload compared: the header's keys may now carry a content hash, the copy being new)
        expect(payload_of(open(objects, "rb").read()) == payload, "a damaged objects cache was not written again")
        clear_cache()
        fresh = serve_answers(policyc, copy, cache=False)
        miss = serve_answers(policyc, copy, cache=True)
        expect(objects_file() is not None, "serve --cluster wrote no objects cache")
        hit = serve_answers(policyc, copy, cache=True)
        expect(fresh == miss == hit and fresh[1] == 0 and all(a[0] == 200 for a in fresh[0]),
               f"serve --cluster from the caches answers differently: {fresh} {hit}")

        # `policyc test` loads a test's snapshot files through the cache too.
        test_args = ["test", "tests/policy/gpu-memory-fit-gfd.yaml", "--policies", "policies"]
        clear_cache()
        fresh = run(policyc, test_args, cache=False)
        expect(cache_file() is None, "policyc test --no-cache wrote a cache")
        miss = run(policyc, test_args)
        expect(cache_file() is not None, "policyc test wrote no cache of its snapshot")
        hit = run(policyc, test_args)
        expect(fresh == miss == hit and fresh[0] == 0, f"policyc test from the cache differs: {fresh} {hit}")

        # When not to trust it. The example snapshot, cached:
        copy = os.path.join(tmp, "cluster.yaml")
        shutil.copy("examples/cluster.yaml", copy)
        clear_cache()
        args = ["check", "--cluster", copy, "--pod", "examples/pods/web.yaml", "-o", "json"]
        run(policyc, args)
        cache = cache_file()
        original = open(copy).read()
        # 1. The file changed in place, same size: the cordoned node uncordoned.
        changed = original.replace("unschedulable: true", "unschedulable: no  ", 1)
        expect(len(changed) == len(original) and changed != original, "the test's edit keeps the size")
        open(copy, "w").write(changed)
        expect(run(policyc, args) == run(policyc, args, cache=False), "a changed file was answered from its old cache")
        # ... and with its old modification time put back (the hash of its head and tail tells).
        open(copy, "w").write(original)
        run(policyc, args)
        stat = os.stat(copy)  # what the cache was keyed with
        open(copy, "w").write(changed)
        os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        expect(os.stat(copy).st_mtime_ns == stat.st_mtime_ns, "the test put the old mtime back")
        os.utime(cache, None)
        expect(run(policyc, args) == run(policyc, args, cache=False), "a file changed under its old mtime was answered from its old cache")
        # ... and in the middle of a file larger than the head and tail hashed, not changed for a while
        # (so not racily clean: its times alone are trusted), its old mtime put back: the ctime tells.
        big = os.path.join(tmp, "big-cluster.yaml")
        padding = "".join(f"# padding line {i:06d} " + "x" * 40 + "\n" for i in range(3000))
        open(big, "w").write(padding + original + padding)
        old = os.stat(big)
        os.utime(big, ns=(old.st_atime_ns, old.st_mtime_ns - 10_000_000_000))  # written 10 s ago, as far as mtime says
        import time
        time.sleep(2.2)  # and its ctime older than the racy window
        big_args = ["check", "--cluster", big, "--pod", "examples/pods/web.yaml", "-o", "json"]
        clear_cache()
        run(policyc, big_args)
        stat = os.stat(big)
        middle = open(big).read().replace("unschedulable: true", "unschedulable: no  ", 1)
        expect(os.path.getsize(big) > 2 * 65536, "the test's big file is larger than the head and tail hashed")
        open(big, "w").write(middle)
        os.utime(big, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        expect(run(policyc, big_args) == run(policyc, big_args, cache=False),
               "a same-size edit in the middle, its mtime put back, was answered from the old cache")
        os.remove(big)
        clear_cache()
        run(policyc, args)
        cache = cache_file()
        # 2. The cache damaged: a byte of its payload flipped.
        run(policyc, args)
        data = bytearray(open(cache, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(cache, "wb").write(bytes(data))
        expect(run(policyc, args) == run(policyc, args, cache=False), "a damaged cache was used")
        # 3. Another format: the version word changed.
        run(policyc, args)
        data = bytearray(open(cache, "rb").read())
        data[8] ^= 0x7F
        open(cache, "wb").write(bytes(data))
        expect(run(policyc, args) == run(policyc, args, cache=False), "a cache of another format was used")
        # 4. Truncated.
        run(policyc, args)
        data = open(cache, "rb").read()
        open(cache, "wb").write(data[: len(data) - 10])
        expect(run(policyc, args) == run(policyc, args, cache=False), "a truncated cache was used")
        # 5. Damaged past its checksum (the checksum made again, as no
        # accident would): the image is checked as it is read, and refused.
        os.remove(cache)
        run(policyc, args)
        good = open(cache, "rb").read()
        payload = payload_of(good)
        parsed = run(policyc, args, cache=False)
        for at in range(0, len(payload), max(1, len(payload) // 40)):
            damaged = bytearray(payload)
            damaged[at] ^= 0x5A
            open(cache, "wb").write(with_checksum(good, bytes(damaged)))
            answer = run(policyc, args)
            # A byte that only changes a value (a name, a count the image
            # does not check) may be read; the rest must be refused: either
            # way no crash, and a refused image leaves a fresh cache.
            expect(answer[0] in (0, 1) and "Sanitizer" not in answer[2], f"an image damaged at byte {at} crashed policyc")
        open(cache, "wb").write(with_checksum(good, payload[: len(payload) // 2]))
        expect(run(policyc, args) == parsed, "an image cut in half (checksum made again) was used")
        expect(open(cache, "rb").read() == good, "a refused image was not written again")
        # 6. --no-cache writes none.
        os.remove(cache)
        run(policyc, args, cache=False)
        expect(cache_file() is None, "--no-cache wrote a cache")

        # The folder: said once, when a run makes it; a snapshot in a
        # read-only folder is cached all the same (nothing is written there).
        fresh_home = os.path.join(tmp, "home-cache")
        readonly = os.path.join(tmp, "readonly")
        os.makedirs(readonly)
        shutil.copy("examples/cluster.yaml", os.path.join(readonly, "cluster.yaml"))
        os.chmod(readonly, 0o555)
        ro_args = ["check", "--cluster", os.path.join(readonly, "cluster.yaml"), "--pod", "examples/pods/web.yaml"]
        first = run(policyc, ro_args, cache_home=fresh_home)
        second = run(policyc, ro_args, cache_home=fresh_home)
        os.chmod(readonly, 0o755)
        note = "policyc: keeping parsed snapshots in " + os.path.join(fresh_home, "policyc")
        expect(note in first[2], f"the first cached run did not say where the cache is: {first[2]!r}")
        expect(note not in second[2], "the cache folder was announced twice")
        expect(first[:2] == second[:2] == run(policyc, ro_args, cache=False)[:2],
               "a snapshot in a read-only folder was answered differently")
        expect(os.listdir(readonly) == ["cluster.yaml"], "a file was written beside a read-only snapshot")
        expect(len([n for n in os.listdir(os.path.join(fresh_home, "policyc")) if n.endswith(".cache")]) == 1,
               "no cache was written for a snapshot in a read-only folder")
    shutil.rmtree(CACHE_HOME, ignore_errors=True)
    print(f"snapshot cache: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
