#!/usr/bin/env bash
# The host examples in examples/embed build and run against libpolicyc.so:
# the C one (built by CMake: build/examples/embed/c/embed_c) and the Go one
# (built here with Debian's golang-go, no module from outside). Each loads
# examples/cluster.yaml, finds the GPU training job Pending, applies the
# event of an A10G node joining, and must then place the job on that node;
# the Go one also decides from eight goroutines at once and sees a
# truncated event refused.
set -uo pipefail
cd "$(dirname "$0")/../.."
which="$1"
cluster=examples/cluster.yaml
pod=examples/pods/gpu-training.yaml
expect() {  # expect OUTPUT PATTERN...: every pattern appears, in order
  local out=$1; shift
  local rest=$out
  for pattern in "$@"; do
    if ! grep -qF -- "$pattern" <<<"$rest"; then
      echo "embed $which: expected \`$pattern\` in:"; echo "$out"; return 1
    fi
    rest=${rest#*"$pattern"}
  done
}
case "$which" in
  c)
    out=$(build/examples/embed/c/embed_c "$cluster" "$pod") || { echo "$out"; exit 1; }
    expect "$out" "loaded 6 nodes" "$pod stays Pending: 0/6 nodes are available" "after the event: 7 nodes" \
      "$pod -> ip-10-0-2-99.ec2.internal" || exit 1
    # A file that is not there: exit 2, saying which and why.
    err=$(build/examples/embed/c/embed_c /nonexistent.yaml "$pod" 2>&1 >/dev/null); status=$?
    if [ $status -ne 2 ] || ! grep -qF "cannot read /nonexistent.yaml: No such file or directory" <<<"$err"; then
      echo "embed c: a missing snapshot gave exit $status and: $err"; exit 1
    fi
    # The build line main.c's comment gives, by hand, against this build.
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    line=$(sed -n 's/^ \*   \(cc .*\)$/\1/p' examples/embed/c/main.c)
    [ -n "$line" ] || { echo "embed c: main.c gives no cc line"; exit 1; }
    (eval "${line/-o embed_c/-o $tmp/embed_c}") || { echo "embed c: \`$line\` failed"; exit 1; }
    out=$("$tmp/embed_c" "$cluster" "$pod") || { echo "$out"; exit 1; }
    expect "$out" "$pod -> ip-10-0-2-99.ec2.internal" || exit 1
    ;;
  go)
    command -v go >/dev/null || { echo "embed go: no go toolchain (scripts/setup.sh installs golang-go)"; exit 1; }
    export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off
    (cd examples/embed/go && go build -o ../../../build/embed_go .) || exit 1
    out=$(build/embed_go "$cluster" "$pod") || { echo "$out"; exit 1; }
    expect "$out" "6 nodes; 8 goroutines decided alike" "$pod stays Pending: 0/6 nodes are available" \
      "after a node joins: 7 nodes" "$pod -> ip-10-0-2-99.ec2.internal" "a truncated event is refused: " \
      "event:1:44: invalid JSON" || exit 1
    ;;
  *) echo "usage: embed_examples.sh c|go"; exit 2 ;;
esac
echo "embed $which: ok"
