// A causal dtensor.attention over queries held head-tail (two pieces per
// rank, context parallelism with load balancing) becomes one op per piece:
// each on its query rows (and mask rows), its positions starting at the
// piece's global offset (the head piece's start; the tail piece's start),
// each written into its rows of the result.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @cp shape [2] names ["cp"]

// CHECK-LABEL: func.func @causal
// CHECK-SAME:  %[[Q:[^:]*]]: tensor<2x4x?x16xf32>
// CHECK:       %[[BEGIN:.*]] = arith.minsi
// CHECK:       %[[HEAD:.*]] = arith.subi %{{.*}}, %[[BEGIN]] : index
// CHECK:       %[[TAIL:.*]] = arith.minsi
// CHECK:       %[[INIT:.*]] = tensor.empty(%{{.*}}) : tensor<2x4x?x8xf32>
// CHECK:       %[[REST:.*]] = arith.subi %{{.*}}, %[[HEAD]] : index
// CHECK:       %[[Q1:.*]] = tensor.extract_slice %[[Q]][0, 0, 0, 0] [2, 4, %[[HEAD]], 16]
// CHECK:       %[[O1:.*]] = tensor.extract_slice %[[INIT]][0, 0, 0, 0] [2, 4, %[[HEAD]], 8]
// CHECK:       %[[S1:.*]] = arith.index_cast %[[BEGIN]] : index to i64
// CHECK:       %[[P1:.*]] = linalg.fill ins(%[[S1]] : i64) outs(%{{.*}} : tensor<2xi64>)
// CHECK:       %[[A1:.*]] = dtensor.attention %[[Q1]], %{{.*}}, %{{.*}} positions(%[[P1]] : tensor<2xi64>) into %[[O1]] {causal
// CHECK:       %[[R1:.*]] = tensor.insert_slice %[[A1]] into %[[INIT]][0, 0, 0, 0]
// CHECK:       %[[Q2:.*]] = tensor.extract_slice %[[Q]][0, 0, %[[HEAD]], 0] [2, 4, %[[REST]], 16]
// CHECK:       %[[O2:.*]] = tensor.extract_slice %[[INIT]][0, 0, %[[HEAD]], 0] [2, 4, %[[REST]], 8]
// CHECK:       %[[S2:.*]] = arith.index_cast %[[TAIL]] : index to i64
// CHECK:       %[[P2:.*]] = linalg.fill ins(%[[S2]] : i64) outs(%{{.*}} : tensor<2xi64>)
// CHECK:       %[[A2:.*]] = dtensor.attention %[[Q2]], %{{.*}}, %{{.*}} positions(%[[P2]] : tensor<2xi64>) into %[[O2]] {causal
// CHECK:       %[[R2:.*]] = tensor.insert_slice %[[A2]] into %[[R1]][0, 0, %[[HEAD]], 0]
// CHECK:       return %[[R2]]
func.func @causal(
    %q: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "q"},
    %k: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "k"},
    %v: tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "v"})
    -> (tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "out"}) {
  %init = tensor.empty() : tensor<2x4x7x8xf32>
  %o = dtensor.attention %q, %k, %v into %init {causal, scale = 0.25 : f64,
      query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>,
      value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32> into tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// With a mask over the queries ([1, 1, L, S]), each piece reads its rows of
// the mask too.
// CHECK-LABEL: func.func @masked
// CHECK-SAME:  %[[M:[^:]*]]: tensor<1x1x?x7xf32>
// CHECK:       %[[HEAD:.*]] = arith.subi
// CHECK:       %[[M1:.*]] = tensor.extract_slice %[[M]][0, 0, 0, 0] [1, 1, %[[HEAD]], 7]
// CHECK:       dtensor.attention {{.*}} mask(%[[M1]] : tensor<1x1x?x7xf32>) positions
// CHECK:       %[[M2:.*]] = tensor.extract_slice %[[M]][0, 0, %[[HEAD]], 0]
// CHECK:       dtensor.attention {{.*}} mask(%[[M2]] : tensor<1x1x?x7xf32>) positions
func.func @masked(
    %q: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "q"},
    %k: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "k"},
    %v: tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "v"},
    %m: tensor<1x1x7x7xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "m"})
    -> (tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "out"}) {
  %init = tensor.empty() : tensor<2x4x7x8xf32>
  %o = dtensor.attention %q, %k, %v mask(%m : tensor<1x1x7x7xf32>) into %init {causal, scale = 0.25 : f64,
      query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>,
      value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32> into tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}
