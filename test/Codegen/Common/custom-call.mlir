// dtensor.custom_call bufferizes into runtime calls: each input's buffer and
// then the output's is queued, and dtensor_rt_custom_call names the op by
// its position in the module's dtensor.custom_ops (recorded, sorted, when
// the module has none). The kernel overwrites its output, so the init is
// never copied.
// RUN: dtensor-opt %s --split-input-file --dtensor-prepare-collectives --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --verify-diagnostics | FileCheck %s
// The whole CPU pipeline lowers it to calls of the two runtime functions.
// RUN: dtensor-opt %s --split-input-file --dtensor-cpu-lowering --verify-diagnostics | FileCheck %s --check-prefix=CPU

// CHECK: module attributes {{{.*}}dtensor.custom_ops = ["norm", "swiglu"]}
// CHECK-LABEL: func.func @two_ops(
// CHECK-SAME: %[[G:[^:]*]]: memref<8x64xf32>, %[[U:[^:]*]]: memref<8x64xf32>, %[[W:[^:]*]]: memref<64xf32>)
// CHECK-NOT: memref.copy
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}}: memref<8x64xf32>
// CHECK: %[[GC:.*]] = memref.cast %[[G]] : memref<8x64xf32> to memref<*xf32>
// CHECK: call @dtensor_rt_push_buffer__f32(%[[GC]])
// CHECK: %[[UC:.*]] = memref.cast %[[U]]
// CHECK: call @dtensor_rt_push_buffer__f32(%[[UC]])
// CHECK: %[[OC:.*]] = memref.cast %[[OUT]]
// CHECK: call @dtensor_rt_push_buffer__f32(%[[OC]])
// CHECK: %[[ID:.*]] = arith.constant 1 : i64
// CHECK: %[[N:.*]] = arith.constant 2 : i64
// CHECK: call @dtensor_rt_custom_call(%[[ID]], %[[N]]) : (i64, i64) -> ()
// CHECK: arith.constant 0 : i64
// CHECK: call @dtensor_rt_custom_call(
// CHECK: func.func private @dtensor_rt_custom_call(i64, i64)
// CPU: llvm.call @dtensor_rt_custom_call
// CPU: llvm.func @dtensor_rt_custom_call(i64, i64)
func.func @two_ops(%g: tensor<8x64xf32>, %u: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %z = dtensor.custom_call "norm" symbol "example_rms_norm" (%y, %w) into %e2
      : (tensor<8x64xf32>, tensor<64xf32>) into tensor<8x64xf32>
  return %z : tensor<8x64xf32>
}

// -----

// A recorded list is kept: the ids are the driver's (and the manifest's).
// CHECK: module attributes {{{.*}}dtensor.custom_ops = ["a", "swiglu", "z"]}
// CHECK-LABEL: func.func @recorded(
// CHECK: %[[ID:.*]] = arith.constant 1 : i64
// CHECK: call @dtensor_rt_custom_call(%[[ID]],
module attributes {dtensor.custom_ops = ["a", "swiglu", "z"]} {
  func.func @recorded(%g: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %y = dtensor.custom_call "swiglu" symbol "s" (%g) into %e : (tensor<4xf32>) into tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {dtensor.custom_ops = ["a"]} {
  func.func @missing(%g: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    // expected-error @+2 {{'dtensor.custom_call' op custom op 'swiglu' is missing from the module's dtensor.custom_ops}}
    // expected-error @+1 {{failed to bufferize op}}
    %y = dtensor.custom_call "swiglu" symbol "s" (%g) into %e : (tensor<4xf32>) into tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
