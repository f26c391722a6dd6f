// dtensor.scatter_add (the embedding's gradient) partitioned with no
// communication: a table sharded on its rows (vocabulary parallel) keeps
// the updates and indices whole and shifts the indices by the rank's first
// row, so that the other ranks' rows fall outside its piece (and are
// skipped); rows sharded (batch-sharded ids) give each rank a partial sum
// of the table; the feature dim sharded, each rank its columns.
// RUN: dtensor-opt %s --split-input-file --dtensor-propagate --dtensor-partition | FileCheck %s

// CHECK-LABEL: func.func @vocab(
// CHECK-SAME: %[[U:[^:]*]]: tensor<6x8xf32> {{.*}}, %[[T:[^:]*]]: tensor<8x8xf32> {{.*}}, %[[I:[^:]*]]: tensor<6xi64> {{.*}}) -> (tensor<8x8xf32>
// CHECK-NOT: dtensor.all_
// CHECK: %[[COORD:.*]] = dtensor.mesh_coord on @tp mesh_dims [0] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[COORD]], %c8
// CHECK: %[[SHIFT:.*]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: %[[LOCAL:.*]] = linalg.generic {{.*}} ins(%[[I]] : tensor<6xi64>)
// CHECK: arith.subi %{{.*}}, %[[SHIFT]] : i64
// CHECK: %[[R:.*]] = dtensor.scatter_add %[[U]] into %[[T]] at %[[LOCAL]] : tensor<6x8xf32> into tensor<8x8xf32>, tensor<6xi64>
// CHECK-NEXT: return %[[R]]
dtensor.mesh @tp shape [2]
func.func @vocab(
    %u: tensor<6x8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %t: tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %i: tensor<6xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %r = dtensor.scatter_add %u into %t at %i : tensor<6x8xf32> into tensor<16x8xf32>, tensor<6xi64>
  return %r : tensor<16x8xf32>
}


// -----

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[U:[^:]*]]: tensor<3x8xf32> {{.*}}, %[[I:[^:]*]]: tensor<3xi32> {{.*}}) -> (tensor<16x8xf32> {{.*}}[partial<sum>]>})
// CHECK-NEXT: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<16x8xf32>
// CHECK-NEXT: %[[R:.*]] = dtensor.scatter_add %[[U]] into %[[Z]] at %[[I]] : tensor<3x8xf32> into tensor<16x8xf32>, tensor<3xi32>
// CHECK-NEXT: return %[[R]]
dtensor.mesh @tp shape [2]
func.func @rows(
    %u: tensor<6x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %i: tensor<6xi32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>}) {
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %r = dtensor.scatter_add %u into %z at %i : tensor<6x8xf32> into tensor<16x8xf32>, tensor<6xi32>
  return %r : tensor<16x8xf32>
}


// -----

// CHECK-LABEL: func.func @features(
// CHECK-SAME: %[[U:[^:]*]]: tensor<6x4xf32> {{.*}}, %[[T:[^:]*]]: tensor<16x4xf32> {{.*}}, %[[I:[^:]*]]: tensor<6xi64> {{.*}}) -> (tensor<16x4xf32>
// CHECK-NEXT: %[[R:.*]] = dtensor.scatter_add %[[U]] into %[[T]] at %[[I]] : tensor<6x4xf32> into tensor<16x4xf32>, tensor<6xi64>
// CHECK-NEXT: return %[[R]]
dtensor.mesh @tp shape [2]
func.func @features(
    %u: tensor<6x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %t: tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %i: tensor<6xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %r = dtensor.scatter_add %u into %t at %i : tensor<6x8xf32> into tensor<16x8xf32>, tensor<6xi64>
  return %r : tensor<16x8xf32>
}
