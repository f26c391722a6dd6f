// Partitioning dtensor.attention_backward under its sharding rule (the
// forward's, with the queries blocked): heads sharded unevenly (3 heads on 2
// ranks, read through permuted dims) compute locally with no collective; under
// grouped-query attention the heads are blocked, so propagation moves the
// operands to a batch sharding instead (one all_to_all each, no gather of
// the whole); queries sharded along the sequence (their dK/dV would be
// partial sums) are moved to the batch too, the mask and the positions
// sharded with the batch (3 rows on 2 ranks, uneven). The gradients are
// linear in d_out: a Partial d_out gives Partial gradients, with no
// all-reduce.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

// CHECK-LABEL: func.func @heads(
// CHECK-NOT:     dtensor.all
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}} = dtensor.attention_backward {{.*}} : tensor<2x8x?x16xf32>, tensor<2x8x?x16xf32>, tensor<2x8x?x16xf32>, tensor<2x?x8x16xf32>, tensor<2x?x8x16xf32>, tensor<2x?x8xf32> into tensor<2x8x?x16xf32>, tensor<2x8x?x16xf32>, tensor<2x8x?x16xf32>
// CHECK-NOT:     dtensor.all
// CHECK:         return

// CHECK-LABEL: func.func @grouped(
// CHECK-COUNT-6: dtensor.all_to_all {{.*}} split_dim 0 concat_dim 1
// CHECK:         dtensor.attention_backward {{.*}} : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32> into tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>

// CHECK-LABEL: func.func @batch_queries(
// CHECK:         %[[Q:.*]] = dtensor.all_to_all %arg0 on @tp mesh_dims [0] split_dim 0 concat_dim 2 : tensor<3x2x4x16xf32> -> tensor<?x2x8x16xf32>
// CHECK-NOT:     dtensor.all
// CHECK:         dtensor.attention_backward %[[Q]], {{.*}} mask(%arg6 : tensor<?x1x8x8xf32>) positions(%arg7 : tensor<?xi64>) {{.*}} : tensor<?x2x8x16xf32>,
// CHECK-NOT:     dtensor.all
// CHECK:         return

// CHECK-LABEL: func.func @partial_dout(
// CHECK-NOT:     dtensor.all
// CHECK:         dtensor.attention_backward %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 into
// CHECK-NOT:     dtensor.all
// CHECK:         return

dtensor.mesh @tp shape [2] names ["tp"]

#d = array<i64: 0, 1, 2, 3>
#t = array<i64: 0, 2, 1, 3>
func.func @heads(
    %q: tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %k: tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %v: tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %o: tensor<2x3x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %do: tensor<2x3x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %lse: tensor<2x3x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
        tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
        tensor<2x8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %eq = tensor.empty() : tensor<2x8x3x16xf32>
  %ek = tensor.empty() : tensor<2x8x3x16xf32>
  %ev = tensor.empty() : tensor<2x8x3x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #t, key_dims = #t, value_dims = #t, result_dims = #d} : tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8xf32> into tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32> -> tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>
  return %dq, %dk, %dv : tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>, tensor<2x8x3x16xf32>
}
func.func @grouped(
    %q: tensor<2x4x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %k: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %v: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %o: tensor<2x4x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %do: tensor<2x4x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %lse: tensor<2x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %eq = tensor.empty() : tensor<2x4x8x16xf32>
  %ek = tensor.empty() : tensor<2x2x8x16xf32>
  %ev = tensor.empty() : tensor<2x2x8x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

func.func @batch_queries(
    %q: tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %k: tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %v: tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %o: tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %do: tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %lse: tensor<3x2x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %m: tensor<3x1x8x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %p: tensor<3xi64> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, tensor<3x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %eq = tensor.empty() : tensor<3x2x8x16xf32>
  %ek = tensor.empty() : tensor<3x2x8x16xf32>
  %ev = tensor.empty() : tensor<3x2x8x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse mask(%m : tensor<3x1x8x8xf32>) positions(%p : tensor<3xi64>) into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8xf32> into tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32> -> tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>
  return %dq, %dk, %dv : tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>
}

func.func @partial_dout(
    %q: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %k: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %v: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %o: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %do: tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>},
    %lse: tensor<2x2x8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>}, tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>}, tensor<2x2x8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>}) {
  %eq = tensor.empty() : tensor<2x2x8x16xf32>
  %ek = tensor.empty() : tensor<2x2x8x16xf32>
  %ev = tensor.empty() : tensor<2x2x8x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8xf32> into tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %dq, %dk, %dv : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
