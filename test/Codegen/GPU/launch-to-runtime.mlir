// RUN: dtensor-opt %s --dtensor-gpu-launch-to-runtime --split-input-file --verify-diagnostics | FileCheck %s

// The binary's object becomes a constant global with a zero byte after it,
// the kernel's name another; the launch becomes a call of the runtime's
// launcher with the image's size (without the zero byte), the grid and
// block, no shared memory, and a pointer to each argument. The arguments
// go through storage allocated once in the function's entry block.
// CHECK-NOT: gpu.container_module
// CHECK-DAG: llvm.mlir.global internal constant @kmod_kern_name("kern\00") {addr_space = 0 : i32, alignment = 1 : i64}
// CHECK-DAG: llvm.mlir.global internal constant @kmod_image("PTX!\00") {addr_space = 0 : i32, alignment = 64 : i64}
// CHECK-NOT: gpu.binary
// CHECK-LABEL: llvm.func @host(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64, %[[F:.*]]: f32)
// CHECK: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[SLOTS:.*]] = llvm.alloca %[[THREE]] x i64 {alignment = 8 : i64}
// CHECK: %[[PARAMS:.*]] = llvm.alloca %[[THREE]] x !llvm.ptr {alignment = 8 : i64}
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[SLOTS]][0]
// CHECK: llvm.store %[[P]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[A0:.*]] = llvm.getelementptr %[[PARAMS]][0]
// CHECK: llvm.store %[[S0]], %[[A0]]
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[SLOTS]][1]
// CHECK: llvm.store %[[N]], %[[S1]] : i64, !llvm.ptr
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[SLOTS]][2]
// CHECK: llvm.store %[[F]], %[[S2]] : f32, !llvm.ptr
// CHECK-DAG: %[[IMAGE:.*]] = llvm.mlir.addressof @kmod_image
// CHECK-DAG: %[[SIZE:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[NAME:.*]] = llvm.mlir.addressof @kmod_kern_name
// CHECK-DAG: %[[SMEM:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[COUNT:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: llvm.call @dtensor_rt_gpu_launch(%[[IMAGE]], %[[SIZE]], %[[NAME]], %[[G:.*]], %[[ONE:.*]], %[[ONE]], %[[B:.*]], %[[ONE]], %[[ONE]], %[[SMEM]], %[[PARAMS]], %[[COUNT]])
// CHECK: llvm.call @dtensor_rt_gpu_launch({{.*}}, %[[PARAMS]], %{{.*}})
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.func @dtensor_rt_gpu_launch(!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, i64)
module attributes {gpu.container_module} {
  gpu.binary @kmod [#gpu.object<#nvvm.target<chip = "sm_90">, "PTX!">]
  llvm.func @host(%p: !llvm.ptr, %n: i64, %f: f32) {
    %one = llvm.mlir.constant(1 : index) : i64
    %grid = llvm.mlir.constant(4 : index) : i64
    %block = llvm.mlir.constant(256 : index) : i64
    gpu.launch_func @kmod::@kern blocks in (%grid, %one, %one) threads in (%block, %one, %one) : i64 args(%p : !llvm.ptr, %n : i64, %f : f32)
    gpu.launch_func @kmod::@kern blocks in (%grid, %one, %one) threads in (%block, %one, %one) : i64 args(%p : !llvm.ptr)
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{'gpu.binary' op must hold exactly one object, not 2}}
  gpu.binary @kmod [#gpu.object<#nvvm.target<chip = "sm_90">, "A">, #gpu.object<#nvvm.target<chip = "sm_80">, "B">]
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kmod [#gpu.object<#nvvm.target<chip = "sm_90">, "PTX!">]
  llvm.func @host(%p: !llvm.ptr) {
    %one = llvm.mlir.constant(1 : index) : i64
    %t = gpu.wait async
    // expected-error @below {{is asynchronous: dtensor programs launch on the program's stream, in order}}
    %u = gpu.launch_func async [%t] @kmod::@kern blocks in (%one, %one, %one) threads in (%one, %one, %one) : i64 args(%p : !llvm.ptr)
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kmod [#gpu.object<#nvvm.target<chip = "sm_90">, "PTX!">]
  func.func @host(%p: memref<4xf32>) {
    %one = arith.constant 1 : index
    // expected-error @below {{must be in an llvm.func: run it after the host is lowered to the LLVM dialect}}
    gpu.launch_func @kmod::@kern blocks in (%one, %one, %one) threads in (%one, %one, %one) args(%p : memref<4xf32>)
    return
  }
}
