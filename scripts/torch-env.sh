#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Creates (or checks) the virtual environment with a current PyTorch that the
# oracle tests (test/Oracle) and the benchmark's peer columns use, with the
# OpenAI client of test/Server/openai-client.test: exactly the packages of
# scripts/torch-requirements.txt, installed with --no-deps.
# Safe to run again: an environment whose stamp matches the requirements and
# that imports is kept. A test and benchmark dependency only; the compiler
# and runtime never use it.
#
#   scripts/torch-env.sh            # install if needed; prints nothing else
#   scripts/torch-env.sh --python   # ... then prints the interpreter's path
#
# DTENSOR_TORCH_VENV: where it lives (default
# ${XDG_CACHE_HOME:-~/.cache}/dtensor/torch-venv, shared by every checkout).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
requirements=$root/scripts/torch-requirements.txt
venv=${DTENSOR_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/dtensor/torch-venv}
print_python=0
case "${1:-}" in
  --python) print_python=1 ;;
  "") ;;
  -h | --help)
    sed -n '3,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "torch-env: unknown argument '$1' (use --python or --help)" >&2
    exit 2
    ;;
esac

stamp=$(sha256sum "$requirements" | cut -c1-64)
probe='import numpy, safetensors, torch, torch.distributed as dist
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import parallelize_module
assert dist.is_gloo_available(), "torch has no gloo backend"'

ready() {
  [[ -x $venv/bin/python && -f $venv/dtensor-stamp ]] &&
    [[ $(cat "$venv/dtensor-stamp") == "$stamp" ]] &&
    "$venv/bin/python" -c "$probe" 2>/dev/null
}

if ! ready; then
  if [[ ! -x /usr/bin/python3 ]] || ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
    echo "torch-env: needs Debian's python3 and python3-venv (scripts/setup.sh installs them)" >&2
    exit 1
  fi
  echo "torch-env: installing PyTorch into $venv (scripts/torch-requirements.txt)" >&2
  start=$SECONDS
  # Build next to the target, then move it into place: an interrupted
  # install never leaves a half-written environment behind.
  mkdir -p "$(dirname "$venv")"
  tmp="$venv.partial.$$"
  trap 'rm -rf "$tmp"' EXIT
  rm -rf "$tmp"
  /usr/bin/python3 -m venv "$tmp"
  "$tmp/bin/python" -m pip install --quiet --no-deps --no-input \
    -r "$requirements" >&2
  echo "$stamp" >"$tmp/dtensor-stamp"
  rm -rf "$venv"
  mv "$tmp" "$venv"
  trap - EXIT
  # A venv's scripts name their own folder; it moved, so use the
  # interpreter directly (python -m pip) and check the result.
  if ! "$venv/bin/python" -c "$probe" >&2; then
    echo "torch-env: the environment at $venv does not import torch" >&2
    exit 1
  fi
  echo "torch-env: installed in $((SECONDS - start)) s" >&2
fi

if ((print_python)); then
  echo "$venv/bin/python"
fi
