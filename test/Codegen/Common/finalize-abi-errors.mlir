// RUN: dtensor-opt %s --dtensor-finalize-abi --split-input-file --verify-diagnostics

// A generic allocation function cannot be bound over an existing runtime
// symbol, nor when it has a body.
module {
  llvm.func @dtensor_rt_alloc(i64) -> !llvm.ptr
  // expected-error @+1 {{'llvm.func' op cannot be bound to dtensor_rt_alloc: the module already defines it}}
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
}

// -----

module {
  // expected-error @+1 {{'llvm.func' op must be a declaration}}
  llvm.func @_mlir_memref_to_llvm_free(%p: !llvm.ptr) {
    llvm.return
  }
}
