#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Benchmarks: builds what they need, then runs `python3 -m dtensor_bench`
# (python/dtensor_bench, with PYTHONPATH=<root>/python; the
# compiled examples side by side with PyTorch eager and with this machine's
# GEMM peak and memory bandwidth, plus the compile time of a 32-layer
# 7B-shaped plan). Writes bench-results/ (or --out DIR): results.json,
# results.md, results.png.
#
#   scripts/bench.sh                      # the full run (about 20 minutes)
#   scripts/bench.sh --quick              # tiny shapes, seconds
#   scripts/bench.sh --cases 'large' --no-compile-time
#   scripts/bench.sh --help               # every option
#
# PYTHON picks the interpreter (default /usr/bin/python3, Debian's, which has
# python3-numpy, python3-torch and python3-matplotlib; a pyenv or virtualenv
# python3 first on PATH usually has not). The PyTorch 2 DTensor peers run
# in scripts/torch-env.sh's environment (made on first use; --torch-python
# picks another, --no-dtensor-peers skips them).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib.sh"
build=$(dtensor_build_dir)
python=${PYTHON:-/usr/bin/python3}
# The benchmark packages (python/dtensor_bench, python/dtensor_testing); the
# processes the benchmarks start inherit it.
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"

for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    exec "$python" -m dtensor_bench --help
  fi
done

if ! "$python" -c 'import numpy, torch' 2>/dev/null; then
  echo "bench: $python lacks numpy or torch (python3-numpy, python3-torch);" \
    "scripts/setup.sh installs them, PYTHON=... picks another interpreter" >&2
  exit 1
fi

# Configure and build on the first run (setup.sh also installs missing
# packages), otherwise rebuild only the three tools the benchmarks run.
if [[ ! -f $build/build.ninja ]]; then
  "$root/scripts/setup.sh"
fi
echo "bench: building dtensor-compile, dtensor-run, dtensor-bench-ceilings" >&2
cmake --build "$build" --target dtensor-compile dtensor-run dtensor-bench-ceilings

exec "$python" -m dtensor_bench --build-dir "$build" "$@"
