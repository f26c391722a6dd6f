#!/usr/bin/env bash
# The main job at this stage of the project: set up and build, then run the
# compiler on the example Megatron MLP and print the result. The dtensor
# dialect, its verifier and canonicalization are what exists today:
# propagation, partitioning and the runtime that runs on ranks come later.
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
echo "== Per-rank view on 2 ranks (examples/mlp_local.mlir), verified:"
"$opt" "$root/examples/mlp_local.mlir"
