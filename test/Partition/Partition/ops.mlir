// The local form of ops whose sizes, offsets or indices depend on the rank.
// RUN: dtensor-opt %s --dtensor-partition | FileCheck %s
// Partitioning a partitioned module changes nothing.
// RUN: dtensor-opt %s --dtensor-partition > %t.mlir
// RUN: dtensor-opt %t.mlir --dtensor-partition | diff %t.mlir -
dtensor.mesh @m3 shape [3]


// Factories and constants take the rank's piece. 10 rows over 3 ranks are
// 4, 4, 2: the size is computed from the mesh coordinate, torch.chunk's
// clamping included.
// CHECK-LABEL: func.func @factories() -> (tensor<?x4xf32> {{.*}}, tensor<2x4xf32> {{.*}}, tensor<4x1xf32> {{.*}}, tensor<?x4xf32>
// CHECK-NEXT:  %[[COORD:.*]] = dtensor.mesh_coord on @m3 mesh_dims [0] : index
// CHECK-NEXT:  %[[N:.*]] = arith.constant 10 : index
// CHECK-NEXT:  %[[CHUNK:.*]] = arith.constant 4 : index
// CHECK-NEXT:  %[[START:.*]] = arith.muli %[[COORD]], %[[CHUNK]] : index
// CHECK-NEXT:  %[[BEGIN:.*]] = arith.minsi %[[START]], %[[N]] : index
// CHECK-NEXT:  %[[STOP:.*]] = arith.addi %[[BEGIN]], %[[CHUNK]] : index
// CHECK-NEXT:  %[[END:.*]] = arith.minsi %[[STOP]], %[[N]] : index
// CHECK-NEXT:  %[[SIZE:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK-NEXT:  %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<?x4xf32>
// An even split of a splat is a smaller splat.
// CHECK-NEXT:  %[[SPLAT:.*]] = arith.constant dense<1.000000e+00> : tensor<2x4xf32>
// Other constants are sliced at the rank's offset (one column each here).
// CHECK-NEXT:  %[[DENSE:.*]] = arith.constant dense<{{.*}}> : tensor<4x3xf32>
// CHECK-NEXT:  %[[COLS:.*]] = tensor.extract_slice %[[DENSE]][0, %[[COORD]]] [4, 1] [1, 1] : tensor<4x3xf32> to tensor<4x1xf32>
// CHECK-NEXT:  %[[UNEVEN:.*]] = arith.constant dense<2.000000e+00> : tensor<10x4xf32>
// CHECK-NEXT:  %[[ROWS:.*]] = tensor.extract_slice %[[UNEVEN]][%[[BEGIN]], 0] [%[[SIZE]], 4] [1, 1] : tensor<10x4xf32> to tensor<?x4xf32>
// CHECK-NEXT:  return %[[E]], %[[SPLAT]], %[[COLS]], %[[ROWS]]
func.func @factories() -> (tensor<10x4xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}, tensor<6x4xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}, tensor<4x3xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<1>]>}, tensor<10x4xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  %e = tensor.empty() {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} : tensor<10x4xf32>
  %c = arith.constant {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} dense<1.0> : tensor<6x4xf32>
  %d = arith.constant {dtensor.layouts = [#dtensor.layout<@m3, [shard<1>]>]} dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<4x3xf32>
  %u = arith.constant {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} dense<2.0> : tensor<10x4xf32>
  return %e, %c, %d, %u : tensor<10x4xf32>, tensor<6x4xf32>, tensor<4x3xf32>, tensor<10x4xf32>
}


// Reshapes take the rank's size of the sharded dim; tensor.dim asks for the
// global size.
// CHECK-LABEL: func.func @shapes(%arg0: tensor<?x64xf32>
// CHECK:       %[[SIZE:.*]] = arith.subi
// CHECK-NEXT:  %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%[[SIZE]], 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
// CHECK:       %[[DIM:.*]] = arith.constant 10 : index
// CHECK:       %[[SIZE64:.*]] = arith.index_cast %[[SIZE]] : index to i64
// CHECK-NEXT:  %[[C4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:  %[[C16:.*]] = arith.constant 16 : i64
// CHECK-NEXT:  %[[SHAPE:.*]] = tensor.from_elements %[[SIZE64]], %[[C4]], %[[C16]] : tensor<3xi64>
// CHECK-NEXT:  %[[R:.*]] = tensor.reshape %arg0(%[[SHAPE]]) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
// CHECK-NEXT:  return %[[X]], %[[DIM]], %[[R]]
func.func @shapes(%x: tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x4x16xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}, index, tensor<10x4x16xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [10, 4, 16] {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} : tensor<10x64xf32> into tensor<10x4x16xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<10x64xf32>
  %shape = arith.constant {dtensor.layouts = [#dtensor.layout<@m3, [replicate]>]} dense<[10, 4, 16]> : tensor<3xi64>
  %r = tensor.reshape %x(%shape) {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} : (tensor<10x64xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  return %0, %d, %r : tensor<10x4x16xf32>, index, tensor<10x4x16xf32>
}


#id = affine_map<(d0, d1) -> (d0, d1)>

// Loop indices stay global positions: the row loop runs over the rank's rows,
// so its linalg.index gets the rank's first row added.
// CHECK-LABEL: func.func @causal_mask(%arg0: tensor<?x10xf32>
// CHECK:       %[[BEGIN:.*]] = arith.minsi
// CHECK:       linalg.generic {{.*}} ins(%arg0 : tensor<?x10xf32>) outs(%arg0 : tensor<?x10xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.addi %[[I]], %[[BEGIN]] : index
// CHECK-NEXT:    %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:    arith.cmpi ugt, %[[J]], %[[ROW]] : index
func.func @causal_mask(%x: tensor<10x10xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x10xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  %ninf = arith.constant -1.0e30 : f32
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<10x10xf32>) outs(%x : tensor<10x10xf32>) attrs = {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi ugt, %j, %i : index
    %v = arith.select %future, %ninf, %in : f32
    linalg.yield %v : f32
  } -> tensor<10x10xf32>
  return %m : tensor<10x10xf32>
}


// Callers and callees agree on the per-rank signature.
// CHECK-LABEL: func.func private @callee(%arg0: tensor<?x64xf32> {dtensor.global_shape = array<i64: 10, 64>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<?x64xf32> {dtensor.global_shape = array<i64: 10, 64>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>})
func.func private @callee(%x: tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  return %x : tensor<10x64xf32>
}


// A declaration with layouts gets the per-rank signature too.
// CHECK-LABEL: func.func private @external(tensor<?x64xf32> {dtensor.global_shape = array<i64: 10, 64>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x64xf32> {dtensor.global_shape = array<i64: 10, 64>, dtensor.layout = #dtensor.layout<@m3, [replicate]>})
func.func private @external(tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [replicate]>})

// CHECK-LABEL: func.func @caller(%arg0: tensor<?x64xf32>
// CHECK-NEXT:  %[[C:.*]] = call @callee(%arg0) : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT:  call @external(%[[C]]) : (tensor<?x64xf32>) -> tensor<10x64xf32>
func.func @caller(%x: tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  %0 = func.call @callee(%x) {dtensor.layouts = [#dtensor.layout<@m3, [shard<0>]>]} : (tensor<10x64xf32>) -> tensor<10x64xf32>
  %1 = func.call @external(%0) {dtensor.layouts = [#dtensor.layout<@m3, [replicate]>]} : (tensor<10x64xf32>) -> tensor<10x64xf32>
  %2 = dtensor.redistribute %1 from <@m3, [replicate]> to <@m3, [shard<0>]> : tensor<10x64xf32>
  return %2 : tensor<10x64xf32>
}
