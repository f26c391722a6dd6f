// After bufferization, an entry's results that are its state arguments'
// buffers (through casts) are dropped, with the copies of a buffer onto
// itself; any other result is an error.
// RUN: dtensor-opt %s --split-input-file --dtensor-drop-state-results -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[STATE:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: memref.copy %[[STATE]], %[[OUT]]
// CHECK-NOT: memref.copy
// CHECK: return{{$}}
func.func @accumulate(%x: memref<4xf32>, %s: memref<4xf32>, %out: memref<4xf32>) -> memref<4xf32> attributes {llvm.emit_c_interface} {
  linalg.add ins(%x, %s : memref<4xf32>, memref<4xf32>) outs(%s : memref<4xf32>)
  memref.copy %s, %out : memref<4xf32> to memref<4xf32>
  %c = memref.cast %s : memref<4xf32> to memref<?xf32>
  %back = memref.cast %c : memref<?xf32> to memref<4xf32>
  memref.copy %s, %back : memref<4xf32> to memref<4xf32>
  return %back : memref<4xf32>
}

// A private function keeps its results.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: -> memref<4xf32>
func.func private @helper(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 of an entry is not one of its arguments' buffers: only state updates may remain results after bufferization}}
func.func @fresh(%x: memref<4xf32>) -> memref<4xf32> attributes {llvm.emit_c_interface} {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
