#!/usr/bin/env bash
# The main job at this stage of the project: set up and build, then run the
# compiler on the example Megatron MLP and print the result: propagation,
# partitioning into the per-rank program, collective fusion and the
# communication report. The
# backends and the runtime that runs it on ranks come later.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib.sh"
build=$(dtensor_build_dir)

"$root/scripts/setup.sh"
opt="$build/bin/dtensor-opt"

echo
echo "== Global view (examples/mlp_global.mlir), verified and canonicalized:"
"$opt" "$root/examples/mlp_global.mlir" --canonicalize
echo
echo "== Sharding propagation of the global view: the layout of every value"
"$opt" "$root/examples/mlp_global.mlir" --dtensor-propagate --dtensor-print-layouts -o /dev/null
echo
echo "== Partitioned: the program each of the 2 ranks runs, its all_reduce"
echo "   issued asynchronously by --dtensor-fuse-collectives"
"$opt" "$root/examples/mlp_global.mlir" --dtensor-propagate --dtensor-partition \
  --dtensor-fuse-collectives
echo
echo "== Its collectives"
"$opt" "$root/examples/mlp_global.mlir" --dtensor-propagate --dtensor-partition \
  --dtensor-comm-report -o /dev/null
