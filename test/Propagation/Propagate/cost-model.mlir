// The cost model's parameters decide between plans. A row-parallel product
// of two small operands with a large output: at the default compute speed,
// gathering the operands and multiplying replicated is cheaper than an
// all-reduce of the output; when compute is slow, splitting the work pays
// for the all-reduce (P->R).
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s --check-prefix=DEFAULT
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=0.01" | FileCheck %s --check-prefix=SLOW
// The compute rate can be the machine's, from a topology file
// (compute_gflops); compute-gflops overrides it, and explain says which
// rate was used and where it comes from.
// RUN: dtensor-opt %s --dtensor-propagate="topology=%S/Inputs/topology-slow-compute.json" | FileCheck %s --check-prefix=SLOW
// RUN: dtensor-opt %s --dtensor-propagate="topology=%S/Inputs/topology-slow-compute.json compute-gflops=100" | FileCheck %s --check-prefix=DEFAULT
// RUN: dtensor-opt %s --dtensor-propagate="topology=%S/Inputs/topology-slow-compute.json explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FROM-FILE
// RUN: dtensor-opt %s --dtensor-propagate="topology=%S/Inputs/topology-slow-compute.json compute-gflops=2.5 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FROM-OPTION
// RUN: dtensor-opt %s --dtensor-propagate="explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASSUMED
// RUN: dtensor-opt %s "--dtensor-distribute=compute-gflops=0.01" | FileCheck %s --check-prefix=PIPELINE
// RUN: not dtensor-opt %s --dtensor-propagate="compute-gflops=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// FROM-FILE: remark: explain: compute priced at 0.01 GFLOP/s per rank (compute_gflops of topology {{.*}}topology-slow-compute.json)
// FROM-OPTION: remark: explain: compute priced at 2.5 GFLOP/s per rank (compute-gflops)
// ASSUMED: remark: explain: compute priced at 100 GFLOP/s per rank (assumed; compute-gflops or a topology file's compute_gflops sets it)
// PIPELINE: dtensor.all_reduce
// NEGATIVE: error: dtensor-propagate: call-us and latency-us must be >= 0, bandwidth-gbps and compute-gflops > 0 (or compute-gflops 0 for the topology file's compute_gflops, else the assumed 100)

dtensor.mesh @tp shape [2]

// DEFAULT-LABEL: func.func @outer
// DEFAULT:       dtensor.redistribute %arg0 from <@tp, [shard<1>]> to <@tp, [replicate]>
// DEFAULT:       dtensor.redistribute %arg1 from <@tp, [shard<0>]> to <@tp, [replicate]>
// DEFAULT:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// DEFAULT-NOT:   dtensor.redistribute

// SLOW-LABEL: func.func @outer
// SLOW:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// SLOW-NEXT:  dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// SLOW-NOT:   dtensor.redistribute
func.func @outer(%a: tensor<64x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                 %w: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<64x8xf32>, tensor<8x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
