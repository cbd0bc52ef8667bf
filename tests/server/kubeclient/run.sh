#!/usr/bin/env bash
# Builds tests/server/kubeclient (the Go standard library alone) and runs it
# against build/policyc: `policyc serve` driven as kube-scheduler drives it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
command -v go >/dev/null || { echo "kubeclient: no go toolchain (scripts/setup.sh installs golang-go)"; exit 1; }
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off
(cd tests/server/kubeclient && go vet . && go build -o ../../../build/kubeclient .)
build/kubeclient -policyc build/policyc
