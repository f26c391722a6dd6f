// A dtensor.local_map is a boundary with fixed layouts: its inputs get their
// input layouts (redistributed when the op may redistribute them), its
// results their output layouts, and its body is never given layouts.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file | FileCheck %s

dtensor.mesh @tp shape [4]

// The user's Partial output is reduced where the function returns it
// replicated; x and w arrive in the layouts the local map takes.
// CHECK-LABEL: func.func @row_parallel
// CHECK-NOT: dtensor.redistribute
// CHECK: %[[Y:.*]] = dtensor.local_map(%{{.*}}, %{{.*}}) in
// CHECK: linalg.matmul
// CHECK-NOT: dtensor.layouts
// CHECK: dtensor.yield
// CHECK-NEXT: } {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK: %[[R:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK: return %[[R]]
func.func @row_parallel(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<64x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
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

// -----

dtensor.mesh @tp shape [4]

// With redistribute_inputs, a replicated x is chunked to Shard(1).
// CHECK-LABEL: func.func @redistributed
// CHECK: %[[X:.*]] = dtensor.redistribute %arg0 from <@tp, [replicate]> to <@tp, [shard<1>]>
// CHECK: dtensor.local_map(%[[X]], %arg1) in
func.func @redistributed(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %w: tensor<64x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>}) {
  %y = dtensor.local_map (%x, %w)
      in [#dtensor.layout<@tp, [shard<1>]>, #dtensor.layout<@tp, [shard<0>]>]
      out [#dtensor.layout<@tp, [partial<sum>]>] redistribute_inputs {
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

// -----

dtensor.mesh @tp shape [4]

// An unconstrained producer follows the local map's input layout: the
// exp is computed sharded, nothing is redistributed before the local map.
// CHECK-LABEL: func.func @steers_producer
// CHECK: linalg.generic
// CHECK-SAME: dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]
// CHECK-NOT: dtensor.redistribute
// CHECK: dtensor.local_map
func.func @steers_producer(
    %x: tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %e = tensor.empty() : tensor<16x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x8xf32>
  %y = dtensor.local_map (%a) in [#dtensor.layout<@tp, [shard<0>]>]
      out [#dtensor.layout<@tp, [shard<0>]>] {
  ^bb0(%la: tensor<4x8xf32>):
    dtensor.yield %la : tensor<4x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}
