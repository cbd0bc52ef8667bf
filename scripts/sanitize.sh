#!/usr/bin/env bash
# Builds everything once with clang-14 under AddressSanitizer and
# UndefinedBehaviorSanitizer (build/fuzz, the folder the fuzzers use) and
# runs the unit, golden, conformance and queue suites on it: any leak, overflow,
# use after free or undefined behaviour fails the suite it happened in.
#
#   ./scripts/sanitize.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"

./scripts/configure_instrumented.sh fuzz || exit 1
build_started=$SECONDS
cmake --build build/fuzz >/dev/null || { cmake --build build/fuzz 2>&1 | tail -30; exit 1; }
echo "== build/fuzz built in $((SECONDS - build_started)) s"

failed=0
run() {
  local name=$1 started=$SECONDS
  shift
  echo "== $name (ASan+UBSan)"
  if ! "$@"; then
    echo "== $name (ASan+UBSan): FAILED ($((SECONDS - started)) s)"
    failed=1
  else
    echo "== $name (ASan+UBSan): $((SECONDS - started)) s"
  fi
}
conformance=../shared/conformance
policyc=build/fuzz/policyc
run "unit tests" bash -c "set -o pipefail; ctest --test-dir build/fuzz -j2 --output-on-failure 2>&1 | tail -3"
run "golden tests" python3 tests/golden/run_golden.py --policyc $policyc --jobs 2
# The corpora that state 1.31's answers run as 1.31; DRA and our 1.34
# cases under the default (1.34).
for engine in "" " --engine jit --verify-jit"; do
  run "conformance$engine" python3 $conformance/run.py --policyc "$policyc --kubernetes-version 1.31$engine" \
    --policies policies --jobs 2 $conformance/cases tests/conformance $conformance/cases-default-profile
  run "conformance (1.34)$engine" python3 $conformance/run.py --policyc "$policyc$engine" --policies policies --jobs 2 \
    $conformance/cases-dra tests/conformance-1.34
done
# The shared runner exits 0 whatever the cases did: its summary line decides.
schedule_cases() {
  local out
  out=$(python3 $conformance/run_schedule.py "$@" 2>&1)
  echo "$out"
  echo "$out" | tail -1 | grep -Eq '^[0-9]+ passed, 0 failed$'
}
run "schedule cases" schedule_cases --policyc "$policyc --kubernetes-version 1.31 --verify-incremental" \
  --policies policies $conformance/schedule tests/conformance-schedule
run "schedule cases (1.34)" schedule_cases --policyc "$policyc --verify-incremental" --policies policies \
  tests/conformance-schedule-1.34
run "policyc serve: our cases, faults, TLS" python3 tests/server/extender_test.py --policyc $policyc --policies policies \
  tests/conformance
run "policyc serve: from a local Kubernetes API" python3 tests/server/api_watch_test.py --policyc $policyc
exit $failed
