// RUN: dtensor-opt %s --dtensor-finalize-abi --split-input-file | FileCheck %s

// The module attributes stay, the meshes go, and the typed push
// declarations are bound to the one C symbol.
// CHECK: module attributes {dtensor.comm_groups = [{mesh = @tp, mesh_dims = array<i64: 0>}], dtensor.comm_meshes = [@tp]}
// CHECK-NOT: dtensor.mesh
// CHECK-NOT: dtensor_rt_push_buffer__

module attributes {dtensor.comm_meshes = [@tp], dtensor.comm_groups = [{mesh = @tp, mesh_dims = array<i64: 0>}]} {
  dtensor.mesh @tp shape [2]
  llvm.func @dtensor_rt_push_buffer__f32(i64, !llvm.ptr)
  llvm.func @dtensor_rt_push_buffer__f64(i64, !llvm.ptr)

  // Everything but the entry points gets internal linkage.
  // CHECK-LABEL: llvm.func internal @step
  // CHECK: llvm.call @dtensor_rt_push_buffer(
  // CHECK: llvm.call @dtensor_rt_push_buffer(
  llvm.func @step(%p: !llvm.ptr) {
    %r = llvm.mlir.constant(1 : i64) : i64
    llvm.call @dtensor_rt_push_buffer__f32(%r, %p) : (i64, !llvm.ptr) -> ()
    llvm.call @dtensor_rt_push_buffer__f64(%r, %p) : (i64, !llvm.ptr) -> ()
    llvm.return
  }
  // CHECK-LABEL: llvm.func internal @_mlir_ciface_step
  // CHECK: llvm.func @dtensor_rt_push_buffer(i64, !llvm.ptr)
  llvm.func @_mlir_ciface_step(%a: !llvm.ptr, %out: !llvm.ptr) {
    llvm.call @step(%a) : (!llvm.ptr) -> ()
    llvm.return
  }

  // dtensor_entry_step(descriptors): descriptor i to argument i.
  // CHECK-LABEL: llvm.func @dtensor_entry_step
  // CHECK-SAME: (%[[D:.*]]: !llvm.ptr)
  // CHECK: %[[P0:.*]] = llvm.getelementptr %[[D]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  // CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[P1:.*]] = llvm.getelementptr %[[D]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  // CHECK: %[[A1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
  // CHECK: llvm.call @_mlir_ciface_step(%[[A0]], %[[A1]])
  // CHECK: llvm.return
}

// -----

// The memref lowering's generic allocation functions are bound to the
// runtime's buffer cache.
// CHECK-NOT: _mlir_memref_to_llvm
// CHECK: llvm.func @dtensor_rt_alloc(i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @dtensor_rt_free(!llvm.ptr)
// CHECK-LABEL: llvm.func internal @scratch
// CHECK: %[[B:.*]] = llvm.call @dtensor_rt_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.call @dtensor_rt_free(%[[B]]) : (!llvm.ptr) -> ()
// CHECK-NOT: _mlir_memref_to_llvm
module {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @scratch() {
    %n = llvm.mlir.constant(64 : i64) : i64
    %b = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.call @_mlir_memref_to_llvm_free(%b) : (!llvm.ptr) -> ()
    llvm.return
  }
}
