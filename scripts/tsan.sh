#!/usr/bin/env bash
# Builds the C ABI's and the extender's unit tests (tests/unit/host,
# tests/unit/server, and every library under them) with clang-14 under
# ThreadSanitizer in build/tsan and runs them: decisions on several threads
# while a writer applies events must show no data race.
#
#   ./scripts/tsan.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"

./scripts/configure_instrumented.sh tsan || exit 1
cmake --build build/tsan --target unit_host unit_server >/dev/null ||
  { cmake --build build/tsan --target unit_host unit_server 2>&1 | tail -30; exit 1; }
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build/tsan/tests/unit_host &&
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build/tsan/tests/unit_server
