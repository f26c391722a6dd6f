#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the Debian packages the build needs (when run as root), then
# configures and builds dtensor. Safe to run again: it installs only what is
# missing and rebuilds only what changed.
#
#   scripts/setup.sh            # build into ./build (preset "default")
#   DTENSOR_PRESET=cpu-only scripts/setup.sh   # never look for CUDA
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${DTENSOR_PRESET:-default}

packages=(
  cmake ninja-build ccache g++ python3 pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  nlohmann-json3-dev libgtest-dev libcpp-httplib-dev libcli11-dev
  # The tokenizers of dtensor-server (runtime/tooling/Tokenizer.h).
  libpcre2-dev libsentencepiece-dev libutf8proc-dev
  openmpi-bin libopenmpi-dev libopenblas0-pthread
  # Several hosts on this machine (scripts/netns-hosts.sh): ip netns, unshare.
  iproute2 util-linux
  python3-numpy python3-jsonschema python3-torch python3-matplotlib python3-venv
  # The fuzz build (scripts/fuzz.sh, which scripts/test.sh runs briefly):
  # clang and its libFuzzer and sanitizer runtimes.
  clang-22 libclang-rt-22-dev
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

cd "$root"
# ccache keys on paths relative to the checkout, so that clones in other
# folders (CI's fresh clone) reuse each other's objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
cmake --preset "$preset"
cmake --build --preset "$preset"
