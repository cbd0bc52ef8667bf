#!/usr/bin/env bash
# Installs every package policyc needs, builds it, and runs it on the bundled
# example. Idempotent; run as root on a fresh Debian 12 machine.
#
#   ./scripts/setup.sh            install, build, show the example
#   POLICYC_SKIP_APT=1 ./scripts/setup.sh   build only
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ pkg-config ccache python3 python3-yaml
  uuid-dev default-jre-headless antlr4 libantlr4-runtime-dev
  llvm-19-dev libzstd-dev libyaml-dev libyaml-cpp-dev libsimdjson-dev libfmt-dev
  doctest-dev libbenchmark-dev clang-14 libclang-rt-14-dev
  golang-go libcpp-httplib-dev libcurl4-openssl-dev openssl libboost-dev libre2-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${POLICYC_SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/policyc-ccache}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build build

# On the PATH as `policyc` and as `kubectl-policyc` (kubectl's plugin
# convention: `kubectl policyc check ...`), and as `kubectl_complete-policyc`
# (kubectl's plugin completion: `kubectl policyc <TAB>`), as links to this
# build; a non-root user gets them in ~/.local/bin. POLICYC_NO_LINKS=1 leaves
# them out.
if [ "${POLICYC_NO_LINKS:-0}" != 1 ]; then
  bindir=/usr/local/bin
  [ -w "$bindir" ] || { bindir="$HOME/.local/bin"; mkdir -p "$bindir"; }
  for name in policyc kubectl-policyc kubectl_complete-policyc; do ln -sf "$PWD/build/policyc" "$bindir/$name"; done
  echo "setup: linked $bindir/policyc, kubectl-policyc and kubectl_complete-policyc to build/policyc" \
       "(shell completion: source <(policyc completion bash))"
fi

echo
echo "setup: built build/policyc. Why is the GPU training job in examples/ Pending?"
echo "\$ build/policyc check --cluster examples/cluster.yaml --pod examples/pods/gpu-training.yaml --node ip-10-0-2-91.ec2.internal"
# Exit status 1 means "fits nowhere": the answer, not a failure of setup.
build/policyc check --cluster examples/cluster.yaml --pod examples/pods/gpu-training.yaml \
  --node ip-10-0-2-91.ec2.internal || [ $? -eq 1 ]
