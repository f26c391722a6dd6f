#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job: set up and build, then compile the example Megatron MLP
# (examples/mlp_global.mlir) for 2 ranks and run it on 2 MPI ranks on the
# CPU, checking the gathered result against the single-device program.
# Along the way it shows what the compiler does: the layout of every value,
# the per-rank program, and its collectives.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib.sh"
build=$(dtensor_build_dir)

"$root/scripts/setup.sh"
opt="$build/bin/dtensor-opt"
example="$root/examples/mlp_global.mlir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo
echo "== Sharding propagation of the global view: the layout of every value"
"$opt" "$example" --dtensor-propagate --dtensor-print-layouts -o /dev/null
echo
echo "== Compiled for 2 ranks: the per-rank program (after collective fusion)"
echo "   and its communication report"
"$build/bin/dtensor-compile" "$example" -o "$work/mlp.dtc" --mesh 2 \
  --comm-report --dump-per-rank "$work/per-rank.mlir"
cat "$work/per-rank.mlir"
echo
echo "== The artifact"
ls -l "$work/mlp.dtc"
echo
echo "== Run on 2 MPI ranks, checked against the single-device program"
"$build/bin/dtensor-run" "$work/mlp.dtc" -n 2 --random-inputs 1 --check \
  --warmup 2 --iters 20
