#!/usr/bin/env bash
# Configures an instrumented build tree with clang-14, once (a tree that
# has its build.ninja is left as it is):
#
#   ./scripts/configure_instrumented.sh fuzz   # build/fuzz: ASan+UBSan and the libFuzzer targets
#   ./scripts/configure_instrumented.sh tsan   # build/tsan: ThreadSanitizer
#
# Both are optimized as the main build is (-O2) but keep line tables only
# for debug information (a sanitizer's report still names file and line;
# compiling is a tenth faster, and it is most of CI's time), and build no
# benchmarks (timings under a sanitizer mean nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  fuzz) dir=build/fuzz option=-DPOLICYC_FUZZ=ON ;;
  tsan) dir=build/tsan option=-DPOLICYC_TSAN=ON ;;
  *) echo "usage: $0 fuzz|tsan" >&2; exit 2 ;;
esac
[ -f "$dir/build.ninja" ] && exit 0
flags="-O2 -gline-tables-only -DNDEBUG"
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja "$option" -DPOLICYC_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" >/dev/null
