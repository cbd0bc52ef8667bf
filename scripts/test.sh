#!/usr/bin/env bash
# Builds if needed and runs every test suite, one summary line per runner:
# unit tests (doctest via ctest), golden tests (diagnostics, CLI output,
# syntax and sema), the docs check, Kubernetes conformance, and a short fuzz
# smoke run when clang's libFuzzer is there.
set -uo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo || exit 1
fi
cmake --build build || exit 1

failed=0
run() {
  local name=$1; shift
  echo "== $name"
  if ! "$@"; then
    echo "== $name: FAILED"
    failed=1
  fi
}

run "unit tests" ctest --test-dir build --output-on-failure -j2
run "golden tests" python3 tests/golden/run_golden.py --policyc build/policyc
run "-o yaml prints what -o json does" python3 tests/cli/yaml_matches_json.py --policyc build/policyc
run "schedule --output-cluster reads back as the run left it" python3 tests/cli/output_cluster_roundtrip.py \
  --policyc build/policyc
run "every check suggestion holds when made to the files" python3 tests/cli/suggestions_verified.py \
  --policyc build/policyc
run "every drain plan holds when replayed on the files" python3 tests/cli/drain_verified.py --policyc build/policyc
run "the command table: help, completion and usage agree" python3 tests/cli/command_table.py --policyc build/policyc
run "fmt keeps every policy the same program, idempotently" python3 tests/cli/fmt_roundtrip.py --policyc build/policyc
run "stdlib, policies and examples are formatted" build/policyc fmt --check stdlib policies examples
run "the snapshot cache changes no answer, and is not trusted when it should not be" python3 tests/cli/cache_same_answers.py \
  --policyc build/policyc
run "every doc example runs and prints what it shows; no link leaves the repository" python3 tests/docs/examples_run.py \
  --policyc build/policyc
run "layers: no file includes, no library links, a layer above its own" python3 scripts/check_layers.py
run "diagnostics reference is current" python3 scripts/gen_diagnostics_doc.py --check
run "language reference tables are current" python3 scripts/gen_language_tables.py --check

# Kubernetes conformance: the whole public corpus and our own cases
# (tests/conformance), each must pass whole; then the same cases on
# unoptimised IR: the passes must not change any answer. Those corpora
# state kube-scheduler 1.31's answers, so they run as 1.31
# (--kubernetes-version); tests/conformance-1.34 holds what 1.34, the
# default, answers otherwise.
conformance=../shared/conformance
v131="--kubernetes-version 1.31"
run "conformance (public corpus)" python3 "$conformance/run.py" --policyc "build/policyc $v131" --policies policies --jobs 2
run "conformance (tests/conformance)" python3 "$conformance/run.py" --policyc "build/policyc $v131" --policies policies \
  --jobs 2 tests/conformance
run "conformance (1.34, the default: tests/conformance-1.34)" python3 "$conformance/run.py" --policyc build/policyc \
  --policies policies --jobs 2 tests/conformance-1.34
run "conformance (public corpus), passes off" python3 "$conformance/run.py" \
  --policyc "build/policyc $v131 --disable-pass=all" --policies policies --jobs 2
run "conformance (tests/conformance), passes off" python3 "$conformance/run.py" \
  --policyc "build/policyc $v131 --disable-pass=all" --policies policies --jobs 2 tests/conformance
run "conformance (tests/conformance-1.34), passes off" python3 "$conformance/run.py" \
  --policyc "build/policyc --disable-pass=all" --policies policies --jobs 2 tests/conformance-1.34
# The same corpora as test files of `policyc test` (in-process, every case),
# and the project's policy tests with rule coverage.
run "policyc test: the conformance corpora as test files" build/policyc test $v131 "$conformance/cases" \
  "$conformance/cases-default-profile" tests/conformance --policies policies
run "policyc test: the 1.34 cases as test files" build/policyc test "$conformance/cases-dra" tests/conformance-1.34 \
  --policies policies
run "policyc test: policy tests (tests/policy)" build/policyc test tests/policy --policies policies --coverage
# And with native kernels for every plugin the JIT compiles, each checked
# against the interpreter on every node (--verify-jit aborts on a difference).
run "conformance (public corpus), JIT verified" python3 "$conformance/run.py" \
  --policyc "build/policyc $v131 --engine jit --verify-jit" --policies policies --jobs 2
run "conformance (tests/conformance), JIT verified" python3 "$conformance/run.py" \
  --policyc "build/policyc $v131 --engine jit --verify-jit" --policies policies --jobs 2 tests/conformance
run "conformance (tests/conformance-1.34), JIT verified" python3 "$conformance/run.py" \
  --policyc "build/policyc --engine jit --verify-jit" --policies policies --jobs 2 tests/conformance-1.34
# The rest of the default profile (../shared/conformance/cases-default-
# profile: NodePorts, the volume plugins, ImageLocality, DaemonSet pods) and
# Dynamic Resource Allocation (cases-dra, 1.34's semantics, the default),
# under every engine.
for engine in "" " --disable-pass=all" " --engine jit --verify-jit"; do
  run "conformance (default profile)$engine" python3 "$conformance/run.py" \
    --policyc "build/policyc $v131$engine" --policies policies --jobs 2 "$conformance/cases-default-profile"
  run "conformance (DRA)$engine" python3 "$conformance/run.py" \
    --policyc "build/policyc$engine" --policies policies --jobs 2 "$conformance/cases-dra"
done
# `policyc schedule`'s queue cases (../shared/conformance/schedule and our
# own, tests/conformance-schedule), under both engines: incremental decisions
# each checked against a full one as it is made, every pod decided from
# scratch, and native kernels checked against the interpreter (which checks
# the incremental decisions too).
# The shared runner exits 0 whatever the cases did: its summary line decides.
schedule_cases() {
  local out
  out=$(python3 "$conformance/run_schedule.py" "$@" 2>&1)
  echo "$out"
  echo "$out" | tail -1 | grep -Eq '^[0-9]+ passed, 0 failed$'
}
# The shared queue cases state 1.31's answers; tests/conformance-schedule-1.34
# what 1.34 adds (DynamicResources' PostFilter message, claims deallocated).
for engine in " --verify-incremental" " --no-incremental" " --engine jit --verify-jit"; do
  run "schedule cases$engine" schedule_cases --policyc "build/policyc $v131$engine" \
    --policies policies "$conformance/schedule" tests/conformance-schedule
  run "schedule cases (1.34)$engine" schedule_cases --policyc "build/policyc$engine" \
    --policies policies tests/conformance-schedule-1.34
done
# The C ABI (libpolicyc.so, include/policyc.h): its answers equal check's on
# every conformance case, and the C and Go hosts of examples/embed build and
# run.
run "C ABI answers as check does" python3 tests/host/abi_equals_check.py --policyc build/policyc \
  --lib build/libpolicyc.so --policies policies "$conformance/cases" "$conformance/cases-default-profile" \
  tests/conformance
run "policyc serve: the extender protocol and its faults" python3 tests/server/extender_test.py \
  --policyc build/policyc --policies policies "$conformance/cases" tests/conformance
run "hostile input: CEL, slow and idle clients, floods, callers without a token, shutdown" python3 tests/server/hostile_test.py \
  --policyc build/policyc
run "policyc serve: list and watch from the Kubernetes API, bind" python3 tests/server/api_watch_test.py \
  --policyc build/policyc
run "policyc check against the live cluster (kubeconfig, context, a fake API)" python3 tests/server/check_live_test.py \
  --policyc build/policyc
run "policyc serve as kube-scheduler's HTTPExtender drives it (Go)" tests/server/kubeclient/run.sh
run "C host example" tests/host/embed_examples.sh c
run "Go host example" tests/host/embed_examples.sh go
# The unit, golden and conformance suites again on a build instrumented with
# ASan and UBSan (clang-14, which setup.sh installs; POLICYC_SANITIZE=0
# leaves this out of a quick local run, never out of CI).
if [ "${POLICYC_SANITIZE:-1}" != 0 ]; then
  run "sanitizers" ./scripts/sanitize.sh
  run "C ABI under ThreadSanitizer" ./scripts/tsan.sh
fi
if [ "${POLICYC_FUZZ_SECONDS:-10}" != 0 ] && command -v clang++-14 >/dev/null; then
  run "fuzz smoke" ./scripts/fuzz.sh "${POLICYC_FUZZ_SECONDS:-10}"
fi

if [ $failed -ne 0 ]; then
  echo "test.sh: some suites FAILED"
  exit 1
fi
echo "test.sh: all suites passed"
