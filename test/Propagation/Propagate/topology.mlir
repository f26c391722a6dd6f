// The topology decides where a reduction runs. A product whose contraction
// dim is split over both mesh dims of a 2 x 2 mesh, with a replicated
// result: priced with every mesh dim alike (no topology, or one link class
// with the default parameters) the product runs as a partial sum over both
// dims and one all_reduce over both follows. When mesh dim 0 ("dp") crosses
// a slow Ethernet link, the small operands are gathered over dp instead and
// the large result is reduced over the fast tp dim only.
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=1" | FileCheck %s --check-prefix=UNIFORM
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=1 topology=%S/Inputs/topology-one-class.json" | FileCheck %s --check-prefix=UNIFORM
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=1 topology=%S/Inputs/topology-slow-dp.json" | FileCheck %s --check-prefix=SLOW
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=1 topology=%S/Inputs/topology-slow-dp.json explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dtensor-opt %s "--dtensor-distribute=topology=%S/Inputs/topology-slow-dp.json explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not dtensor-opt %s --dtensor-propagate="topology=%t.missing.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"links": {"ib": {"latency_us": 1, "bandwidth_gbps": 1}}, "mesh_dims": {"pp": "ib"}}' > %t.pp.json
// RUN: not dtensor-opt %s --dtensor-propagate="topology=%t.pp.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIM

dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

// UNIFORM-LABEL: func.func @contract
// UNIFORM:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@m, [partial<sum>, partial<sum>]>]}
// UNIFORM-NEXT:  dtensor.redistribute %[[Y]] from <@m, [partial<sum>, partial<sum>]> to <@m, [replicate, replicate]>
// UNIFORM-NOT:   dtensor.redistribute

// SLOW-LABEL: func.func @contract
// SLOW:       dtensor.redistribute %arg0 from <@m, [shard<1>, shard<1>]> to <@m, [replicate, shard<1>]>
// SLOW:       dtensor.redistribute %arg1 from <@m, [shard<0>, shard<0>]> to <@m, [replicate, shard<0>]>
// SLOW:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@m, [replicate, partial<sum>]>]}
// SLOW-NEXT:  dtensor.redistribute %[[Y]] from <@m, [replicate, partial<sum>]> to <@m, [replicate, replicate]>
// SLOW-NOT:   dtensor.redistribute

// The mesh's links, then each move with the links of the dims it changes.
// EXPLAIN: remark: explain: topology {{.*}}topology-slow-dp.json: dp: ethernet (50 us, 0.1 GB/s), tp: nvlink (5 us, 10 GB/s)
// EXPLAIN: remark: explain: operand #0 is redistributed from [S(1), S(1)] to [R, S(1)] ({{[0-9.e+]+}} us, mesh dim 0 on ethernet) for this op (linalg.matmul)
// EXPLAIN: remark: explain: operand #1 is redistributed from [S(0), S(0)] to [R, S(0)] ({{[0-9.e+]+}} us, mesh dim 0 on ethernet) for this op (linalg.matmul)
// EXPLAIN: remark: explain: operand #0 is redistributed from [R, P(sum)] to [R, R] ({{[0-9.e+]+}} us, mesh dim 1 on nvlink) for the function's result #0

// The pipeline's option reaches propagation and partitioning: at the
// default compute speed both operands are gathered, inside the host first.
// PIPELINE: remark: explain: topology {{.*}}topology-slow-dp.json: dp: ethernet (50 us, 0.1 GB/s), tp: nvlink (5 us, 10 GB/s)
// PIPELINE: remark: explain: redistribute of tensor<64x8xf32> from [S(1), S(1)] to [R, R] lowered to 2 steps:
// PIPELINE-NEXT: all_gather(mesh_dims=[1], dim=1) -> [S(1), R]  {{[0-9.]+}} us over nvlink
// PIPELINE-NEXT: all_gather(mesh_dims=[0], dim=1) -> [R, R]  {{[0-9.]+}} us over ethernet

// MISSING: error: dtensor-propagate: cannot open topology file {{.*}}missing.json

// NODIM: error: {{.*}}pp.json: mesh_dims.pp: the mesh has no dim "pp"; its dims are dp (0), tp (1)
func.func @contract(%a: tensor<64x8xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<1>]>},
                    %w: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, shard<0>]>})
    -> (tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<64x8xf32>, tensor<8x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
