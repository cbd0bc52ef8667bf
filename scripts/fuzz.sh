#!/usr/bin/env bash
# Builds the instrumented build (clang-14, ASan + UBSan; see sanitize.sh) and
# runs each libFuzzer target for
# SECONDS (default 60), seeded from the tests, the examples, policies and
# shared/: the YAML and JSON loaders, the quantity parser, the policy parser,
# the whole `policyc check` command (a fuzzed policy, pod and profile
# against the example cluster, then `lint`, `schedule` and `drain`),
# `policyc test` on a fuzzed test file, the snapshot cache's reader, a CEL selector (parsed, estimated and
# evaluated under the cost limit), the C ABI's entry points, the bodies
# `policyc serve` reads, and what it reads about and from the Kubernetes API.
# A crash leaves its input in build/fuzz/crashes/; add it as a test.
#
#   ./scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"

./scripts/configure_instrumented.sh fuzz || exit 1
cmake --build build/fuzz >/dev/null

work=build/fuzz/corpus
mkdir -p "$work"/{yaml,json,quantity,policy,check,capi,extender,kube,test,cache,cel} build/fuzz/crashes
# Seeds: every YAML/JSON input the project has; quantities from a fixed list.
find tests examples policies ../shared -type f \( -name '*.yaml' -o -name '*.yml' \) -size -200k -exec cp -t "$work/yaml" {} + 2>/dev/null || true
find tests examples ../shared -type f -name '*.json' -size -200k -exec cp -t "$work/json" {} + 2>/dev/null || true
find tests policies stdlib -type f -name '*.policy' -exec cp -t "$work/policy" {} + 2>/dev/null || true
# `test`: test files (the conformance cases are test files too).
i=0
for f in tests/policy/*.yaml tests/conformance/*/*.yaml tests/conformance-1.34/*/*.yaml ../shared/conformance/cases/*/*.yaml; do
  [ -f "$f" ] && cp "$f" "$work/test/seed$i" && i=$((i+1))
done
# `check`: a policy, a pod, a profile and a DRA CEL selector joined by NUL bytes.
cel=('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
     'device.attributes["gpu.example.com"].productName.startsWith("NVIDIA") && device.attributes["gpu.example.com"].index in [0, 1]'
     'cel.bind(g, device.attributes["gpu.example.com"], has(g.mig) ? g.mig : g.driverVersion.isGreaterThan(semver("550.0.0")))'
     '[1, 2, 3].exists(x, x == device.attributes["gpu.example.com"].index) || device.driver.matches("^gpu")')
i=0
for policy in policies/*.policy policies/*.yaml tests/data/*.policy; do
  for pod in examples/pods/*.yaml tests/data/pod-mysql-bound-volume.yaml tests/data/pod-scratch-local.yaml \
             tests/data/dra-two-big-gpus.yaml; do
    profile=$(ls examples/profiles/*.yaml | sed -n "$((i % $(ls examples/profiles/*.yaml | wc -l) + 1))p")
    { cat "$policy"; printf '\0'; cat "$pod"; printf '\0'; [ $((i % 2)) -eq 0 ] && cat "$profile";
      [ $((i % 3)) -eq 0 ] && printf '\0%s' "${cel[$((i % ${#cel[@]}))]}"; } > "$work/check/seed$i"
    i=$((i+1))
  done
done
# The C ABI: a byte choosing the entry point (0 configuration, 1 snapshot,
# 2 event, 3 pod to decide, 4 pod to assume), then its input.
i=0
for f in examples/cluster.yaml tests/data/*-cluster.yaml; do
  { printf '\001'; cat "$f"; } > "$work/capi/seed$i"; i=$((i+1))
done
for f in examples/pods/*.yaml tests/data/pod-*.yaml; do
  { printf '\003'; cat "$f"; } > "$work/capi/seed$i"; i=$((i+1))
  { printf '\004'; cat "$f"; } > "$work/capi/seed$i"; i=$((i+1))
done
printf '\002{"type": "ADDED", "object": {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "2"}}}}' > "$work/capi/seed$i"; i=$((i+1))
printf '\002{"type": "DELETED", "object": {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}}' > "$work/capi/seed$i"; i=$((i+1))
printf '\000{"engine": "interp", "plugins": ["NodeAffinity"], "policies": [{"name": "p.policy", "source": "policy P\\n  filter node.pods < 3\\n"}]}' > "$work/capi/seed$i"
# The extender's bodies: a byte for the verb (0 filter, 1 prioritize,
# 2 preempt), then ExtenderArgs or ExtenderPreemptionArgs.
i=0
for f in examples/pods/*.yaml; do
  pod=$(python3 -c 'import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$f")
  printf '\000{"Pod": %s, "NodeNames": ["a", "b", "c"], "Nodes": null}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
  printf '\000{"pod": %s, "nodes": {"items": [{"metadata": {"name": "a"}}]}}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
  printf '\001{"Pod": %s, "NodeNames": ["a", "b"]}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
  printf '\002{"Pod": %s, "NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 1}}}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
  printf '\002{"Pod": %s, "NodeNameToMetaVictims": {"b": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 0}}}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
  printf '\002{"Pod": %s, "NodeNameToVictims": {"b": {"Pods": [{"metadata": {"uid": "u1"}}]}}}' "$pod" > "$work/extender/seed$i"; i=$((i+1))
done
printf '\003{"PodName": "p", "PodNamespace": "default", "PodUID": "u", "Node": "a"}' > "$work/extender/seed$i"
# The Kubernetes API side: a byte (0 a kubeconfig, 1 a list or watch line's
# header), then the text.
printf '\000apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: "LS0tLS1CRUdJTg=="}}]\nusers: [{name: u, user: {token: abc}}]\n' > "$work/kube/seed0"
printf '\000apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "https://k"}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n' > "$work/kube/seed1"
printf '\001{"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}' > "$work/kube/seed2"
printf '\001{"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "12345"}}}' > "$work/kube/seed3"
printf '\001{"kind": "NodeList", "metadata": {"resourceVersion": "7", "continue": "abc"}, "items": []}' > "$work/kube/seed4"
i=0
for q in 0 100m 1 1.5 .5 5. 16Gi 1Ki 7807312Ki 129e6 1E 1e-3 -1 +2 9223372036854775807 0.0000000001Ki 1.5m 10E Ki; do
  printf '%s' "$q" > "$work/quantity/seed$i"; i=$((i+1))
done

# `cel`: selectors as tenants write them, the hostile ones included (a
# regex over a long string, nested comprehensions, cel.bind doubling).
i=0
for c in "${cel[@]}" 'device.driver == "gpu.example.com"' \
         "'abababababababab'.matches('^((((((((((a|b))))))))))*\$')" "'aaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a+)+\$')" \
         '[1,2,3,4,5,6,7,8].all(a, [1,2,3,4,5,6,7,8].all(b, [1,2,3,4,5,6,7,8].all(c, a + b + c > 0)))' \
         "cel.bind(v, 'ab', cel.bind(w, v + v + v + v, w + w + w + w)).size() > 0" \
         "'a1b22'.findAll('[0-9]*').size() == 3" 'device.attributes["gpu.example.com"].productName.find("A[0-9]+") != ""' \
         "cel.bind(v, 'abcdefgh', cel.bind(w, v.replace('', v), w.replace('', w, 3))).size() > 0" \
         "'ta©o©αT'.lastIndexOf('©', 3) == 2 && 'tacocat'.substring(1, 4).charAt(2) == 'c'" \
         "'a,b,,c'.split(',', -1).transformList(i, v, i % 2 == 0, v + v).join('|') != strings.quote('\\n')" \
         "{'a': 1, 'b': 2}.transformMapEntry(k, v, {k + k: v * v}).exists(k, v, v > 3) && [1, 2].existsOne(i, v, i == v)" \
         "'%s %d %.3f %e %x %b'.format([[1, {'a': b'x'}], 7, 2.5, 1e300, 'hi', true]).size() > 0"; do
  printf '%s' "$c" > "$work/cel/seed$i"; i=$((i+1))
done

# `cache`: payloads of real caches (a cache file less its header: table images), written for
# the example and test snapshots.
cachedir=$(mktemp -d)
i=0
for f in examples/cluster.yaml tests/data/*-cluster.yaml; do
  cp "$f" "$cachedir/s$i.yaml"
  rm -rf "$cachedir/xdg"
  XDG_CACHE_HOME="$cachedir/xdg" POLICYC_CACHE_MIN_BYTES=0 build/fuzz/policyc inspect --cluster "$cachedir/s$i.yaml" >/dev/null 2>&1 || true
  cache=$(ls "$cachedir"/xdg/policyc/*.cache 2>/dev/null | head -1)
  [ -n "$cache" ] && python3 -c '
import sys
data = open(sys.argv[1], "rb").read()[12:]
def varint(at):
    v, shift = 0, 0
    while True:
        v |= (data[at] & 0x7f) << shift
        shift += 7
        at += 1
        if not data[at - 1] & 0x80: return v, at
files, at = varint(0)
for _ in range(9 * files + 2):  # per file a key of 9 varints (snapshot_cache.cpp), then the length and the checksum
    _, at = varint(at)
open(sys.argv[2], "wb").write(data[at:])' "$cache" "$work/cache/seed$i"
  i=$((i+1))
done
rm -rf "$cachedir"

status=0
for target in yaml json quantity policy check capi extender kube test cache cel; do
  log=build/fuzz/fuzz_$target.log
  # A selector must end and stay small under the instrumented build too.
  bounds=""
  [ "$target" = cel ] && bounds="-timeout=60 -rss_limit_mb=2048"
  # shellcheck disable=SC2086
  if build/fuzz/tests/fuzz/fuzz_$target "$work/$target" -max_total_time="$seconds" -max_len=262144 $bounds \
       -artifact_prefix=build/fuzz/crashes/$target- -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
    echo "fuzz_$target: clean, $runs runs in ${seconds}s"
  else
    echo "fuzz_$target: FAILED (see $log and build/fuzz/crashes/)"
    tail -30 "$log"
    status=1
  fi
done
exit $status
