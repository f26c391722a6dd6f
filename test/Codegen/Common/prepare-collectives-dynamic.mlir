// RUN: dtensor-opt %s --dtensor-prepare-collectives --canonicalize --cse | FileCheck %s

// A chunk of a dim whose size is known only at run time (a piece of an
// uneven shard split again): torch.chunk computed with arith ops on the
// run-time size.
dtensor.mesh @m2 shape [2, 2]

// CHECK-LABEL: func.func @dynamic_chunk
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
func.func @dynamic_chunk(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
  // CHECK-DAG: %[[N:.*]] = tensor.dim %[[X]], %[[C0]]
  // CHECK-DAG: %[[COORD:.*]] = dtensor.mesh_coord on @m2 mesh_dims [1] : index
  // CHECK: %[[CHUNK:.*]] = arith.ceildivui %[[N]], %[[C2]]
  // CHECK: %[[MUL:.*]] = arith.muli %[[COORD]], %[[CHUNK]]
  // CHECK: %[[BEGIN:.*]] = arith.minui %[[MUL]], %[[N]]
  // CHECK: %[[ADD:.*]] = arith.addi %[[BEGIN]], %[[CHUNK]]
  // CHECK: %[[END:.*]] = arith.minui %[[ADD]], %[[N]]
  // CHECK: %[[SIZE:.*]] = arith.subi %[[END]], %[[BEGIN]]
  // CHECK: tensor.extract_slice %[[X]][%[[BEGIN]], 0] [%[[SIZE]], 4] [1, 1]
  %c = dtensor.chunk %x on @m2 mesh_dims [1] dim 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}
