// Every collective gets its site number in program order over the module's
// functions, nested regions included; the module lists each site's kind,
// reduction, module, source position and bytes sent per call (the
// communication report's figures for that call; absent when not static).
// RUN: dtensor-opt %s --dtensor-number-collective-sites | FileCheck %s
// Running the pass twice renumbers from 0: the same output.
// RUN: dtensor-opt %s --dtensor-number-collective-sites --dtensor-number-collective-sites | FileCheck %s

// CHECK: module attributes {dtensor.collective_sites = [
// CHECK-SAME: {bytes_sent = 96 : i64, kind = "all_reduce", module = "layers.0.wo", position = "plan.json:7:9", reduction = "sum"},
// CHECK-SAME: {bytes_sent = 48 : i64, kind = "all_gather", position = "plan.json:8:9"},
// CHECK-SAME: {kind = "all_gather", module = "head"},
// CHECK-SAME: {bytes_sent = 48 : i64, kind = "reduce_scatter", position = "{{.*}}sites.mlir:46:8", reduction = "max"},
// CHECK-SAME: {bytes_sent = 0 : i64, kind = "broadcast", position = "{{.*}}sites.mlir:49:8"}]}

dtensor.mesh @tp shape [4]
dtensor.mesh @one shape [1]

// CHECK-LABEL: func.func @first
// CHECK: dtensor.all_reduce {{.*}} {dtensor.site = 0 : i64}
// CHECK: dtensor.all_gather {{.*}} {dtensor.site = 1 : i64}
// CHECK: dtensor.all_gather {{.*}} {dtensor.site = 2 : i64}
func.func @first(%x: tensor<16xf32>, %s: tensor<4xf32>, %d: tensor<?xf32>,
                 %n: index) -> (tensor<16xf32>, tensor<16xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // In a loop: the location names the module.
  %loop = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<16xf32>) {
    %r = dtensor.all_reduce sum %acc on @tp mesh_dims [0] : tensor<16xf32> loc("layers.0.wo"("plan.json":7:9))
    scf.yield %r : tensor<16xf32>
  }
  %a = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 0
      : tensor<4xf32> -> tensor<16xf32> loc("plan.json":8:9)
  // Dynamic sizes: no bytes.
  %b = dtensor.all_gather %d on @tp mesh_dims [0] gather_dim 0
      : tensor<?xf32> -> tensor<?xf32> loc("head")
  return %loop, %a, %b : tensor<16xf32>, tensor<16xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @second
// CHECK: dtensor.reduce_scatter {{.*}} {dtensor.site = 3 : i64}
// CHECK: dtensor.broadcast {{.*}} {dtensor.site = 4 : i64}
// CHECK: dtensor.chunk
// CHECK-NOT: dtensor.site
func.func @second(%x: tensor<16xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) {
  %t = dtensor.reduce_scatter max %x on @tp mesh_dims [0] scatter_dim 0
      : tensor<16xf32> -> tensor<4xf32>
  // A group of one rank sends nothing.
  %c = dtensor.broadcast %y on @one mesh_dims [0] root 0 : tensor<8xf32>
  // chunk is local: no site.
  %k = dtensor.chunk %x on @tp mesh_dims [0] dim 0 : tensor<16xf32> -> tensor<4xf32>
  return %t, %c, %k : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>
}
