// Module names come from op locations: the innermost NameLoc, a call site's
// callee before its caller, a fused location's parts in order; an op without
// one takes the name of the nearest enclosing op that has one, else
// `<unnamed>`. Modules are listed in order of their first collective, and a
// module's rows in order of their first call.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @tp shape [2]

// Every call sends 8 f32 once (broadcast, 32 B) or 2*(2-1) chunks of 4 f32
// (all_reduce, 32 B).
// CHECK:func @blocks
// CHECK-NEXT:  module              collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  layers.0.attn       all_reduce  sum        @tp   [0]        2      2      64
// CHECK-NEXT:  layers.0.attn       broadcast   -          @tp   [0]        2      1      32
// CHECK-NEXT:  layers.0.mlp.fc2    all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  <unnamed>           all_reduce  sum        @tp   [0]        2      3      96
// CHECK-NEXT:  layers.1.mlp        all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  layers.1.mlp.fc1    all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  layers.2.attn.proj  all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  layers.3            all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  layers.4.mlp.fc2    all_reduce  sum        @tp   [0]        2      1      32
// CHECK-NEXT:  layers.5.mlp        all_reduce  max        @tp   [0]        2      1      32
// CHECK-NEXT:  total                                                              13     416
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @blocks(%x: tensor<8xf32>) {
  %0 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("layers.0.attn")
  %1 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("layers.0.mlp.fc2"("model.py":10:4))
  // Back in layers.0.attn: joins its group, after a new kind.
  %2 = dtensor.broadcast %x on @tp mesh_dims [0] root 0 : tensor<8xf32> loc("layers.0.attn")
  %3 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("layers.0.attn"("model.py":3:1))
  // No name: a file location, an unknown location, an empty name.
  %4 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("model.py":20:1)
  %5 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc(unknown)
  %6 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("")
  // Fused: the first part with a name.
  %7 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc(fused["layers.1.mlp"("a.py":1:1), "layers.9"])
  %8 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc(fused["a.py":2:1, "layers.1.mlp.fc1"])
  // Call site: the callee's name, else the caller's.
  %9 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc(callsite("layers.2.attn.proj" at "layers.2"))
  %10 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc(callsite("f.py":1:1 at "layers.3"))
  // Nested names: the innermost.
  %11 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32> loc("layers.4"("layers.4.mlp.fc2"("m.py":4:4)))
  // Unnamed, inside an op that has a name.
  %12 = scf.execute_region -> tensor<8xf32> {
    %r = dtensor.all_reduce max %x on @tp mesh_dims [0] : tensor<8xf32> loc("m.py":5:5)
    scf.yield %r : tensor<8xf32>
  } loc("layers.5.mlp")
  return
}
