// --dtensor-partition=explain: each lowered redistribute gets a remark at its
// location naming the steps the planner chose, the layout after each, their
// estimated times and the total; a no-op redistribute has none.
// RUN: dtensor-opt %s --dtensor-partition=explain -o /dev/null 2>&1 | FileCheck %s --match-full-lines
// Without explain: no remarks.
// RUN: dtensor-opt %s --dtensor-partition -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark
dtensor.mesh @m1 shape [2]
dtensor.mesh @m22 shape [2, 2]

// CHECK:{{.*}}explain.mlir:14:8: remark: explain: redistribute of tensor<8x6xf32> from [P(avg)] to [R] lowered to 1 step:
// CHECK-NEXT:  all_reduce(avg, mesh_dims=[0]) -> [R]  {{[0-9.]+}} us
// CHECK-NEXT:  total {{[0-9.]+}} us
func.func @p_to_r(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<avg>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [replicate]>}) {
  %0 = dtensor.redistribute %x from <@m1, [partial<avg>]> to <@m1, [replicate]> : tensor<8x6xf32> loc("explain.mlir":14:8)
  return %0 : tensor<8x6xf32>
}

// Two steps on a 2-D mesh, each with the layout it leads to.
// CHECK:{{.*}}explain.mlir:24:8: remark: explain: redistribute of tensor<8x6xf32> from [S(0), P(sum)] to [R, R] lowered to 2 steps:
// CHECK-NEXT:  {{.*}} -> {{\[.*\]}}  {{[0-9.]+}} us
// CHECK-NEXT:  {{.*}} -> [R, R]  {{[0-9.]+}} us
// CHECK-NEXT:  total {{[0-9.]+}} us
func.func @two_steps(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, partial<sum>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, replicate]>}) {
  %0 = dtensor.redistribute %x from <@m22, [shard<0>, partial<sum>]> to <@m22, [replicate, replicate]> : tensor<8x6xf32> loc("explain.mlir":24:8)
  return %0 : tensor<8x6xf32>
}
