// dtensor.local_map round trip: custom form, and custom form re-parsed from
// the generic form. Per-rank body types: static where every rank holds the
// same size, dynamic where ranks differ (10 rows on 3 ranks: 4, 4, 2).
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s
// RUN: dtensor-opt %s --mlir-print-op-generic | dtensor-opt | FileCheck %s

dtensor.mesh @tp shape [4]
dtensor.mesh @m3 shape [3]

// CHECK-LABEL: func.func @row_parallel
// CHECK: dtensor.local_map(%{{.*}}, %{{.*}}) in [#dtensor.layout<@tp, [shard<1>]>, #dtensor.layout<@tp, [shard<0>]>] out [#dtensor.layout<@tp, [partial<sum>]>] {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x4xf32>):
// CHECK: dtensor.yield %{{.*}} : tensor<8x4xf32>
// CHECK-NEXT: } : (tensor<8x64xf32>, tensor<64x4xf32>) -> tensor<8x4xf32>
func.func @row_parallel(%x: tensor<8x64xf32>, %w: tensor<64x4xf32>) -> tensor<8x4xf32> {
  %y = dtensor.local_map (%x, %w)
      in [#dtensor.layout<@tp, [shard<1>]>, #dtensor.layout<@tp, [shard<0>]>]
      out [#dtensor.layout<@tp, [partial<sum>]>] {
  ^bb0(%lx: tensor<8x16xf32>, %lw: tensor<16x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %p = linalg.matmul ins(%lx, %lw : tensor<8x16xf32>, tensor<16x4xf32>)
                       outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    dtensor.yield %p : tensor<8x4xf32>
  } : (tensor<8x64xf32>, tensor<64x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @uneven
// CHECK: dtensor.local_map(%{{.*}}) in [#dtensor.layout<@m3, [shard<0>]>] out [#dtensor.layout<@m3, [shard<0>]>, #dtensor.layout<@m3, [replicate]>] redistribute_inputs {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x8xf32>):
// CHECK: } : (tensor<10x8xf32>) -> (tensor<10x8xf32>, tensor<8xf32>)
func.func @uneven(%x: tensor<10x8xf32>) -> (tensor<10x8xf32>, tensor<8xf32>) {
  %y, %c = dtensor.local_map (%x) in [#dtensor.layout<@m3, [shard<0>]>]
      out [#dtensor.layout<@m3, [shard<0>]>, #dtensor.layout<@m3, [replicate]>]
      redistribute_inputs {
  ^bb0(%lx: tensor<?x8xf32>):
    %i = dtensor.mesh_coord on @m3 mesh_dims [0] : index
    %cst = arith.constant dense<1.0> : tensor<8xf32>
    dtensor.yield %lx, %cst : tensor<?x8xf32>, tensor<8xf32>
  } : (tensor<10x8xf32>) -> (tensor<10x8xf32>, tensor<8xf32>)
  return %y, %c : tensor<10x8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @no_inputs
// CHECK: dtensor.local_map() in [] out [#dtensor.layout<@tp, [shard<0>]>] {
func.func @no_inputs() -> tensor<8xf32> {
  %y = dtensor.local_map () in [] out [#dtensor.layout<@tp, [shard<0>]>] {
    %c = arith.constant dense<2.0> : tensor<2xf32>
    dtensor.yield %c : tensor<2xf32>
  } : () -> tensor<8xf32>
  return %y : tensor<8xf32>
}
