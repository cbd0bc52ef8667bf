#!/usr/bin/env bash
# Builds if needed and runs the test suites, one summary line per runner and
# the seconds each took (docs/testing.md says which to run when):
#
#   ./scripts/test.sh              every suite: what CI runs (.ci/run)
#   ./scripts/test.sh --quick      the quick tier: unit tests, goldens, docs and
#                                  the public conformance corpus under one engine
#   ./scripts/test.sh SUITE...     the suites named (`--list` names them; a name
#                                  ending in `*` is every suite it starts)
#   ./scripts/test.sh --list       each suite's name, tier and what it checks
#
# POLICYC_SANITIZE=0 leaves the instrumented builds (ASan+UBSan, TSan) out of
# a whole run, POLICYC_FUZZ_SECONDS=0 the fuzz smoke; never out of CI.
set -uo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"

conformance=../shared/conformance
v131="--kubernetes-version 1.31"

# --- the suites: `suite NAME TIER TITLE COMMAND...` ------------------------
# TIER is `quick` (also in --quick) or `full`. The corpora that state
# kube-scheduler 1.31's answers (the shared ones, tests/conformance) run as
# 1.31 (--kubernetes-version); tests/conformance-1.34, DRA and the default
# profile's 1.34 cases under the default.
names=()
declare -A tier title command
suite() {
  local name=$1
  names+=("$name")
  tier[$name]=$2
  title[$name]=$3
  shift 3
  command[$name]=$(printf '%q ' "$@")
}

# The shared queue runner exits 0 whatever the cases did: its summary line decides.
schedule_cases() {
  local out
  out=$(python3 "$conformance/run_schedule.py" "$@" 2>&1)
  echo "$out"
  echo "$out" | tail -1 | grep -Eq '^[0-9]+ passed, 0 failed$'
}

suite unit quick "unit tests" ctest --test-dir build --output-on-failure -j2
suite golden quick "golden tests" python3 tests/golden/run_golden.py --policyc build/policyc --jobs 2
suite docs quick "every doc example runs and prints what it shows; no link leaves the repository" \
  python3 tests/docs/examples_run.py --policyc build/policyc
suite conformance quick "conformance (public corpus)" \
  python3 "$conformance/run.py" --policyc "build/policyc $v131" --policies policies --jobs 2
suite layers quick "layers: no file includes, no library links, a layer above its own; no plugin named outside its row" python3 scripts/check_layers.py
suite yaml-json full "-o yaml prints what -o json does" python3 tests/cli/yaml_matches_json.py --policyc build/policyc
suite output-cluster full "schedule --output-cluster reads back as the run left it" \
  python3 tests/cli/output_cluster_roundtrip.py --policyc build/policyc
suite suggestions full "every check suggestion holds when made to the files" \
  python3 tests/cli/suggestions_verified.py --policyc build/policyc
suite drain full "every drain plan holds when replayed on the files" python3 tests/cli/drain_verified.py --policyc build/policyc
suite commands full "the command table: help, completion and usage agree" \
  python3 tests/cli/command_table.py --policyc build/policyc
suite fmt full "fmt keeps every policy the same program, idempotently" python3 tests/cli/fmt_roundtrip.py --policyc build/policyc
suite formatted full "stdlib, policies and examples are formatted" build/policyc fmt --check stdlib policies examples
suite cache full "the snapshot cache changes no answer, and is not trusted when it should not be" \
  python3 tests/cli/cache_same_answers.py --policyc build/policyc
suite diagnostics-doc full "diagnostics reference is current" python3 scripts/gen_diagnostics_doc.py --check
suite language-doc full "language reference tables are current" python3 scripts/gen_language_tables.py --check
# Conformance: each corpus must pass whole; then on unoptimised IR (the
# passes must not change any answer) and with native kernels for every
# plugin the JIT compiles, each checked against the interpreter on every
# node (--verify-jit aborts on a difference).
for variant in "" " --disable-pass=all" " --engine jit --verify-jit"; do
  case $variant in
    "") suffix="" ;;
    *disable-pass*) suffix="-passes-off" ;;
    *) suffix="-jit" ;;
  esac
  [ -n "$suffix" ] && suite "conformance$suffix" full "conformance (public corpus)$variant" \
    python3 "$conformance/run.py" --policyc "build/policyc $v131$variant" --policies policies --jobs 2
  suite "conformance-ours$suffix" full "conformance (tests/conformance)$variant" \
    python3 "$conformance/run.py" --policyc "build/policyc $v131$variant" --policies policies --jobs 2 tests/conformance
  suite "conformance-1.34$suffix" full "conformance (1.34, the default: tests/conformance-1.34)$variant" \
    python3 "$conformance/run.py" --policyc "build/policyc$variant" --policies policies --jobs 2 tests/conformance-1.34
  # The rest of the default profile (NodePorts, the volume plugins,
  # ImageLocality, DaemonSet pods) and Dynamic Resource Allocation.
  suite "default-profile$suffix" full "conformance (default profile)$variant" \
    python3 "$conformance/run.py" --policyc "build/policyc $v131$variant" --policies policies --jobs 2 \
    "$conformance/cases-default-profile"
  suite "dra$suffix" full "conformance (DRA)$variant" \
    python3 "$conformance/run.py" --policyc "build/policyc$variant" --policies policies --jobs 2 "$conformance/cases-dra"
done
# The same corpora as test files of `policyc test` (in-process, every case),
# and the project's policy tests with rule coverage.
suite test-corpora full "policyc test: the conformance corpora as test files" build/policyc test $v131 \
  "$conformance/cases" "$conformance/cases-default-profile" tests/conformance --policies policies
suite test-1.34 full "policyc test: the 1.34 cases as test files" build/policyc test "$conformance/cases-dra" \
  tests/conformance-1.34 --policies policies
suite policy-tests full "policyc test: policy tests (tests/policy)" build/policyc test tests/policy --policies policies --coverage
# `policyc schedule`'s queue cases (the shared ones state 1.31's answers;
# tests/conformance-schedule-1.34 what 1.34 adds): incremental decisions each
# checked against a full one as it is made, every pod decided from scratch,
# and native kernels checked against the interpreter.
for variant in " --verify-incremental" " --no-incremental" " --engine jit --verify-jit"; do
  case $variant in
    *verify-incremental*) suffix="" ;;
    *no-incremental*) suffix="-from-scratch" ;;
    *) suffix="-jit" ;;
  esac
  suite "schedule$suffix" full "schedule cases$variant" schedule_cases --policyc "build/policyc $v131$variant" \
    --policies policies "$conformance/schedule" tests/conformance-schedule
  suite "schedule-1.34$suffix" full "schedule cases (1.34)$variant" schedule_cases --policyc "build/policyc$variant" \
    --policies policies tests/conformance-schedule-1.34
done
# kube-scheduler's own benchmark workloads (benchmarks/scheduler_perf.py),
# small: every pod placed as the workload intends (one per node under
# anti-affinity, skew within maxSkew, volume and device limits kept, ...),
# each shared template's decision checked against the pod's own plan.
suite scheduler-perf full "kube's scheduler_perf workloads, small: placements as each workload intends" \
  python3 benchmarks/scheduler_perf.py --scale small --baseline --policyc "build/policyc --verify-incremental"
# The C ABI (libpolicyc.so, include/policyc.h): its answers equal check's on
# every conformance case, and the C and Go hosts of examples/embed build and run.
suite abi full "C ABI answers as check does" python3 tests/host/abi_equals_check.py --policyc build/policyc \
  --lib build/libpolicyc.so --policies policies "$conformance/cases" "$conformance/cases-default-profile" tests/conformance
suite serve full "policyc serve: the extender protocol and its faults" python3 tests/server/extender_test.py \
  --policyc build/policyc --policies policies "$conformance/cases" tests/conformance
suite hostile full "hostile input: CEL, slow and idle clients, floods, callers without a token, shutdown" \
  python3 tests/server/hostile_test.py --policyc build/policyc
suite api-watch full "policyc serve: list and watch from the Kubernetes API, bind" \
  python3 tests/server/api_watch_test.py --policyc build/policyc
suite check-live full "policyc check against the live cluster (kubeconfig, context, a fake API)" \
  python3 tests/server/check_live_test.py --policyc build/policyc
suite kubeclient full "policyc serve as kube-scheduler's HTTPExtender drives it (Go)" tests/server/kubeclient/run.sh
suite embed-c full "C host example" tests/host/embed_examples.sh c
suite embed-go full "Go host example" tests/host/embed_examples.sh go
# The unit, golden and conformance suites again on a build instrumented with
# ASan and UBSan (clang-14, which setup.sh installs), the C ABI under TSan,
# and a short fuzz smoke run.
suite sanitizers full "sanitizers" ./scripts/sanitize.sh
suite tsan full "C ABI under ThreadSanitizer" ./scripts/tsan.sh
suite fuzz full "fuzz smoke" ./scripts/fuzz.sh "${POLICYC_FUZZ_SECONDS:-10}"

# --- which to run ----------------------------------------------------------
selected=()
case "${1:-}" in
  --list)
    for n in "${names[@]}"; do printf '%-28s %-6s %s\n' "$n" "${tier[$n]}" "${title[$n]}"; done
    exit 0
    ;;
  --help | -h)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --quick)
    [ $# -gt 1 ] && { echo "test.sh: --quick takes no suite names" >&2; exit 2; }
    for n in "${names[@]}"; do [ "${tier[$n]}" = quick ] && selected+=("$n"); done
    ;;
  "")
    for n in "${names[@]}"; do
      case $n in
        sanitizers | tsan) [ "${POLICYC_SANITIZE:-1}" = 0 ] && continue ;;
        fuzz) { [ "${POLICYC_FUZZ_SECONDS:-10}" = 0 ] || ! command -v clang++-14 >/dev/null; } && continue ;;
      esac
      selected+=("$n")
    done
    ;;
  -*)
    echo "test.sh: unknown option \`$1\` (--quick, --list, or suite names)" >&2
    exit 2
    ;;
  *)
    for want in "$@"; do
      found=0
      for n in "${names[@]}"; do
        # shellcheck disable=SC2053  # a trailing * matches by prefix
        if [[ $n == $want ]]; then selected+=("$n"); found=1; fi
      done
      [ $found = 1 ] || { echo "test.sh: no suite \`$want\` (./scripts/test.sh --list names them)" >&2; exit 2; }
    done
    ;;
esac

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo || exit 1
fi
cmake --build build || exit 1

failed=()
started=$SECONDS
for n in "${selected[@]}"; do
  echo "== ${title[$n]} [$n]"
  at=$SECONDS
  if eval "${command[$n]}"; then
    echo "== ${title[$n]} [$n]: $((SECONDS - at)) s"
  else
    echo "== ${title[$n]} [$n]: FAILED ($((SECONDS - at)) s)"
    failed+=("$n")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "test.sh: ${#failed[@]} of ${#selected[@]} suites FAILED in $((SECONDS - started)) s: ${failed[*]}"
  echo "test.sh: rerun one with ./scripts/test.sh ${failed[0]}"
  exit 1
fi
echo "test.sh: all ${#selected[@]} suites passed in $((SECONDS - started)) s"
