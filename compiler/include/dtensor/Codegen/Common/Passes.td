//===- Passes.td - passes both targets run -----------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_CODEGEN_COMMON_PASSES_TD
#define DTENSOR_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerGather : Pass<"dtensor-lower-gather", "::mlir::func::FuncOp"> {
  let summary = "Turn tensor.gather into a linalg.generic with range checks";
  let description = [{
    `tensor.gather` has no bufferization model. Each one becomes a
    `linalg.generic` over its result that reads the coordinates from the
    indices and the element from the source with `tensor.extract`. A
    coordinate outside `[0, size)` of its dim gives zero without reading the
    source: the model plan's rule for an embedding id out of range, which
    partitioning also follows for a table sharded on the gathered dim.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseElementwise : Pass<"dtensor-fuse-elementwise",
                              "::mlir::func::FuncOp"> {
  let summary = "Generalize and fuse elementwise linalg ops on tensors";
  let description = [{
    Decomposes `linalg.softmax`, generalizes the named linalg ops that are
    neither contractions nor fills to `linalg.generic`, and fuses
    elementwise producers into their consumers. Contractions (matmul and
    batch matmul in every form) and fills stay named, so that
    `--dtensor-matmul-to-runtime` can recognise them on buffers.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PrepareCollectives : Pass<"dtensor-prepare-collectives",
                                 "::mlir::ModuleOp"> {
  let summary = "Assign communication ids and lower local dtensor ops";
  let description = [{
    Prepares a per-rank module for one-shot bufferization, whose dtensor
    models turn each collective into runtime calls:

    - records the mesh ids (`dtensor.comm_meshes`, every `dtensor.mesh` in
      module order) and the group ids (`dtensor.comm_groups`, each distinct
      (mesh, mesh_dims) pair of a collective in order of first appearance)
      on the module;
    - `dtensor.chunk` becomes a `tensor.extract_slice` at the rank's nested
      torch.chunk offset and size;
    - `dtensor.start`/`dtensor.wait` are made synchronous: the collective
      runs at the start, the wait takes its results;
    - declares the typed `dtensor_rt_push_buffer` entries the collectives
      will call, and rejects element types the runtime does not carry.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def EntryOutParams : Pass<"dtensor-entry-out-params",
                             "::mlir::ModuleOp"> {
  let summary = "Turn the results of public functions into out-params";
  let description = [{
    Each public function with a body gets one memref argument per result,
    with the result's shape (dynamic dims included) and an identity layout;
    the returned tensors are materialized into them and the function returns
    nothing. The `dtensor.*` attributes of arguments and results (of every
    function) are dropped: they describe tensors, not the memrefs
    bufferization makes of them. Tensor arguments are marked not writable, so bufferization
    never overwrites a caller's buffer (weights are reused across steps).
    The function is marked for the C interface
    (`llvm.emit_c_interface`), which `--dtensor-finalize-abi` calls from
    the exported entry point; no other function gets one.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DropStateResults : Pass<"dtensor-drop-state-results",
                             "::mlir::ModuleOp"> {
  let summary = "After bufferization, drop the state results of entries";
  let description = [{
    `--dtensor-entry-out-params` leaves an entry returning the value of each
    state it updates, materialized into the state argument; after one-shot
    bufferization each such result is the argument's buffer itself (through
    casts at most). This pass drops those results, and the copies of a
    buffer onto itself that the materialization leaves when the update was
    computed in place, so that an entry returns nothing and updates its
    state in the runtime's buffer. A result of an entry (a public function
    with `llvm.emit_c_interface`) that is not one of its arguments is an
    error. Upstream `--drop-equivalent-buffer-results` leaves public
    functions alone, which entries are.
  }];
}

def LowerMeshCoords : Pass<"dtensor-lower-mesh-coords",
                              "::mlir::ModuleOp"> {
  let summary = "Lower dtensor.mesh_coord to dtensor_rt_mesh_coord calls";
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LowerOptimizationBarriers : Pass<"dtensor-lower-optimization-barriers",
                                     "::mlir::ModuleOp"> {
  let summary = "Replace each dtensor.optimization_barrier by its operand";
  let description = [{
    The barriers kept a recomputation (activation checkpointing) apart from
    the forward through the tensor-level passes; once elementwise fusion has
    run, bufferization needs no barrier, and each one's result is replaced
    by its operand.
  }];
}

def LowerStepSeed : Pass<"dtensor-lower-step-seed", "::mlir::ModuleOp"> {
  let summary = "Lower dtensor.step_seed to dtensor_rt_step_seed calls";
  let description = [{
    Each `dtensor.step_seed` becomes a call of `dtensor_rt_step_seed()`,
    which returns the seed the runtime derived for the step being run from
    the run's seed and its step count (docs/runtime.md). The result is an
    `i64` with the seed's 64 bits.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def MatmulToRuntime : Pass<"dtensor-matmul-to-runtime",
                              "::mlir::ModuleOp"> {
  let summary = "Replace f32/f64 matmuls on buffers by dtensor_rt_matmul";
  let description = [{
    Every linalg contraction on buffers whose operands each index a
    permutation of their dims (matmul, batch_matmul, their transposed forms
    and equivalent generics), on f32 or f64 throughout, becomes three
    `dtensor_rt_push_buffer` calls (A, B, C as (batch,) M x K, K x N and
    M x N views, transposed with `memref.transpose` where needed) and
    `dtensor_rt_matmul(dtype, beta)`. Several batch, M, N or K loops (a
    linear on `[B, S, in]` has M = B x S, attention on `[B, H, L, E]` has
    batch B x H) are merged into one dim with `memref.collapse_shape` when
    every operand holds them adjacent, in the same order, and collapsible
    without a copy; otherwise the op stays a loop nest.
    A `linalg.fill` of zero into C that nothing reads before the matmul is
    dropped and beta is 0; otherwise beta is 1. With `half-precision`
    (the CUDA target), f16 and bf16 matmuls become calls too, and those
    accumulating f16 or bf16 operands into an f32 result become
    `dtensor_rt_matmul_mixed(dtype, result_dtype, beta)` calls.
  }];
  let options = [
    Option<"halfPrecision", "half-precision", "bool", /*default=*/"false",
           "Also call the runtime for f16 and bf16 matmuls">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FreeAfterLastUse : Pass<"dtensor-free-after-last-use",
                                "::mlir::func::FuncOp"> {
  let summary = "Move each buffer's memref.dealloc after its last use";
  let description = [{
    MLIR's buffer deallocation pipeline frees a buffer at the end of the
    block that allocates it: in a training step, every step buffer is live
    until the step ends. This pass moves each `memref.dealloc` of a
    `memref.alloc` of the same block to right after the buffer's last use
    in that block, as `dtensor/Analysis/BufferLastUse.h` defines it (the
    memory report's `last_use_peak` uses the same definition):

    - a use through an alias counts: a view (`memref.subview`, `cast`,
      `reinterpret_cast`, `expand_shape`, `collapse_shape`, `reshape`,
      `transpose`, any `ViewLikeOpInterface`) or a region op's result that
      its region yields;
    - an op nested in a region uses it where its ancestor in the block is;
    - `dtensor_rt_push_buffer` only queues a buffer: the next runtime call
      that takes the queue (a matmul, collective, attention, custom call or
      kernel launch) is the use, and when that call's handle goes to
      `dtensor_rt_wait` (an asynchronous collective), the wait is too.

    A dealloc stays where it is when the buffer escapes (returned, passed
    to another block, stored, its address taken as a number, passed to a
    call other than the runtime's, or a result of an op that may alias it),
    when it is freed more than once, or when it is not a `memref.alloc` of
    the dealloc's block.
  }];
}

def FinalizeAbi : Pass<"dtensor-finalize-abi", "::mlir::ModuleOp"> {
  let summary = "Export entry points and bind runtime symbols (LLVM dialect)";
  let description = [{
    Runs on the LLVM dialect. For each function with a C interface,
    exports `void dtensor_entry_<name>(void **descriptors)`, which passes
    descriptor i to the function's C interface. Binds the typed
    push-buffer declarations (one per element type at the func level) to
    the one C symbol `dtensor_rt_push_buffer`, binds the generic allocation
    functions of the memref lowering (`_mlir_memref_to_llvm_alloc`,
    `_mlir_memref_to_llvm_free`) to the runtime's `dtensor_rt_alloc` and
    `dtensor_rt_free`, which keep the buffers of a step for the next one,
    gives every other defined
    function internal linkage (the entries are the only exports), and erases the `dtensor.mesh`
    ops, whose ids the module attributes keep.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// The CUDA target
//===----------------------------------------------------------------------===//

#endif // DTENSOR_CODEGEN_COMMON_PASSES_TD
