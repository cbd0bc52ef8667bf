#!/usr/bin/env bash
# The JIT-versus-interpreter differential test, longer than test.sh runs it:
# COUNT random policies over random tables (default 5000), each compiled at
# O0 and O2, from SEED (default: the time).
#
#   ./scripts/differential.sh [COUNT] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target unit_codegen >/dev/null
POLICYC_DIFFERENTIAL_COUNT="${1:-5000}" POLICYC_DIFFERENTIAL_SEED="${2:-$(date +%s)}" build/tests/unit_codegen
