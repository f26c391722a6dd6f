//===- Passes.td - dtensor CPU code generation passes ------*- tablegen -*-===//

#ifndef DTENSOR_CODEGEN_PASSES_TD
#define DTENSOR_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def CpuFuseElementwise : Pass<"dtensor-cpu-fuse-elementwise",
                              "::mlir::func::FuncOp"> {
  let summary = "Generalize and fuse elementwise linalg ops on tensors";
  let description = [{
    Decomposes `linalg.softmax`, generalizes the named linalg ops that are
    neither contractions nor fills to `linalg.generic`, and fuses
    elementwise producers into their consumers. Contractions (matmul and
    batch matmul in every form) and fills stay named, so that
    `--dtensor-cpu-matmul-to-runtime` can recognise them on buffers.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def CpuLowerGather : Pass<"dtensor-cpu-lower-gather", "::mlir::func::FuncOp"> {
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

def CpuClampExp : Pass<"dtensor-cpu-clamp-exp", "::mlir::func::FuncOp"> {
  let summary = "Flush exp's denormal results to zero without a slow path";
  let description = [{
    Each scalar f32 or f64 `math.exp(x)` becomes
    `x < lo ? 0 : x > hi ? +inf : exp(minimumf(maximumf(x, lo), hi))`, with
    `lo` = -87 for f32 (-708 for f64), whose exp is just above the smallest
    normal number, and `hi` = 89 (710), above which exp overflows. Results
    below exp(lo) -- denormals, less than 1.7e-38 for f32 -- become 0, as
    with flush-to-zero arithmetic; all others, NaN included, are unchanged.
    glibc's vector exp computes every lane outside its normal range one at
    a time with the scalar function, which also takes a slow path that sets
    errno; the causal mask of attention sends half the scores there as
    -inf. The argument is clamped with `maximumf` and `minimumf` rather
    than a select: LLVM rewrites `exp(select(c, k, x))` as
    `select(c, exp(k), exp(x))`, which brings the slow path back.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def CpuApproximateTanh : Pass<"dtensor-cpu-approximate-tanh",
                              "::mlir::func::FuncOp"> {
  let summary = "Replace f32 tanh by a rational approximation that vectorises";
  let description = [{
    Each scalar f32 `math.tanh` (as in loops from linalg) becomes upstream
    MLIR's rational approximation (`populatePolynomialApproximateTanhPattern`):
    the argument clamped to [-7.9988, 7.9988], then an odd polynomial of
    degree 13 over an even one of degree 6, or the argument itself where
    |x| < 0.0004. It is plain arithmetic (mul, fma, div, select), so LLVM
    vectorises the loops around it, whereas glibc's vector math library has
    no tanh and each element called the scalar `tanhf`: 62% of the step of
    an MLP with GELU's tanh form on 256 tokens.

    Accuracy against numpy's f64 tanh (f32 ulps of the exact result), over
    2^23 arguments evenly spread over the f32 numbers of magnitude 1e-30 to
    12, both signs: at most 4.4 ulp (99.9% within 3 ulp), relative error
    2.9e-7, absolute error 2.6e-7 (glibc's tanhf: within 2 ulp);
    tanh(±inf) = ±1 and NaN stays NaN. Other types are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def CpuReassociateSums : Pass<"dtensor-cpu-reassociate-sums",
                              "::mlir::func::FuncOp"> {
  let summary = "Let float sums of linalg reductions be reassociated";
  let description = [{
    In each `linalg.generic` with a reduction loop, the `arith.addf` that
    adds to an output's accumulator (the value yielded for that output, one
    of whose operands is the output's block argument) gets the `reassoc`
    fast-math flag. LLVM's loop vectoriser then sums a row in several
    partial sums, one per vector lane, added up at the end; without the
    flag a float reduction whose loop is innermost (a softmax's row sum,
    a norm's sum of squares) stays scalar. The order of the additions, not
    their number, changes: results differ from the sequential sum by
    rounding only (the usual bound of a sum of n terms, n ulp of the sum of
    magnitudes, is unchanged). Other fast-math flags and other combiners
    are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def CpuPrepareCollectives : Pass<"dtensor-cpu-prepare-collectives",
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

def CpuEntryOutParams : Pass<"dtensor-cpu-entry-out-params",
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
    (`llvm.emit_c_interface`), which `--dtensor-cpu-finalize-abi` calls from
    the exported entry point; no other function gets one.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CpuLowerMeshCoords : Pass<"dtensor-cpu-lower-mesh-coords",
                              "::mlir::ModuleOp"> {
  let summary = "Lower dtensor.mesh_coord to dtensor_rt_mesh_coord calls";
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def CpuMatmulToRuntime : Pass<"dtensor-cpu-matmul-to-runtime",
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

def CpuStridedCopiesToLoops : Pass<"dtensor-cpu-strided-copies-to-loops"> {
  let summary = "Turn copies between strided memrefs into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls a support library function
    (`memrefCopy`) unless both sides are contiguous. Compiled programs link
    only the dtensor runtime, so such copies become `linalg.copy`, which the
    rest of the pipeline turns into loops. Contiguous copies stay
    `memref.copy` (a memcpy).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def CpuOutlineLoopNests : Pass<"dtensor-cpu-outline-loop-nests",
                               "::mlir::ModuleOp"> {
  let summary = "Give each top-level loop nest a function of its own";
  let description = [{
    Every `scf.for` directly in the body of a function with a body becomes
    a call of a new private function `<function>_loop<N>` that holds the
    nest. The values the nest uses from above are the new function's
    arguments, except constants, which are cloned into it; the loop's
    results are its results. The new functions carry LLVM's `noinline`
    (`passthrough = ["noinline"]`, which the LLVM lowering keeps).

    LLVM's loop passes (scalar evolution's loop guards, induction variable
    users, loop strength reduction) look at the code around each loop of a
    function, so one function of hundreds of loop nests -- the per-rank
    program of a deep model -- costs time that grows with the square of its
    size. Functions of one nest each keep it linear, and identical nests
    can then be merged (`--dtensor-cpu-merge-identical-functions`).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def CpuMergeIdenticalFunctions : Pass<"dtensor-cpu-merge-identical-functions",
                                      "::mlir::ModuleOp"> {
  let summary = "Keep one of each set of identical private functions";
  let description = [{
    Private functions with the same type and the same body (locations
    aside) are merged: calls of every copy call the first, and the copies
    are erased. The layers of a model repeat the same loop nests on buffers
    of the same shapes, so after `--dtensor-cpu-outline-loop-nests` a
    32-layer program compiles little more code than a one-layer one.
  }];
}

def CpuFinalizeAbi : Pass<"dtensor-cpu-finalize-abi", "::mlir::ModuleOp"> {
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

def GpuLinalgToParallelLoops : Pass<"dtensor-gpu-linalg-to-parallel-loops",
                                    "::mlir::func::FuncOp"> {
  let summary = "Lower linalg ops and copies on buffers to scf.parallel nests";
  let description = [{
    Every `memref.copy` becomes a `linalg.copy` (the host cannot copy device
    buffers with memcpy). Every linalg op on buffers becomes an `scf.parallel` over its parallel
    dims holding `scf.for` loops over its reduction dims, as
    `--convert-linalg-to-parallel-loops` does; an op with no parallel dim
    (a 0-d op, or a full reduction) gets a one-iteration `scf.parallel`
    around it, so that every op ends up in a parallel loop that
    `--dtensor-gpu-map-parallel-loops` can turn into a kernel.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuMapParallelLoops : Pass<"dtensor-gpu-map-parallel-loops",
                               "::mlir::func::FuncOp"> {
  let summary = "Turn each outermost scf.parallel into a gpu.launch";
  let description = [{
    Each outermost `scf.parallel` of a host function becomes a `gpu.launch`
    with one thread per iteration: its iteration space is flattened, the
    launch has `ceil(n / block-size)` blocks of `block-size` threads, and
    each thread with a linear id below `n` recovers its induction variables
    and runs the loop body. `scf.parallel` loops nested inside become
    sequential `scf.for` loops. `memref.get_global` ops the body uses are
    cloned into it, so that kernel outlining copies the globals into the
    GPU module.

    Afterwards no host code may touch device memory: a `memref.load`,
    `memref.store`, `memref.copy`, `memref.alloca` or `memref.get_global`
    left outside a kernel is an error.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuEmulateLaunches : Pass<"dtensor-gpu-emulate-launches",
                              "::mlir::func::FuncOp"> {
  let summary = "Run each gpu.launch as sequential loops (testing aid)";
  let description = [{
    Each `gpu.launch` becomes six nested `scf.for` loops over its blocks and
    threads (z, y, x of the grid, then of the block), with the launch's body
    inside and the block and thread ids bound to the loops' induction
    variables. The kernels of `--dtensor-gpu-map-parallel-loops` use no
    barrier and no shared memory, so they compute the same results this
    way: the CPU target compiles through the CUDA target's kernel mapping
    with `dtensor-compile --emulate-gpu-kernels`, which tests that mapping
    end to end on machines without a GPU. A launch with a barrier, async
    tokens, clusters or memory attributions is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuLaunchToRuntime : Pass<"dtensor-gpu-launch-to-runtime",
                              "::mlir::ModuleOp"> {
  let summary = "Embed GPU binaries and launch kernels through the runtime";
  let description = [{
    Runs after `--gpu-module-to-binary`, on a host already in the LLVM
    dialect. Each `gpu.binary` becomes an internal constant global holding
    its object (a fatbin, cubin or PTX text) followed by a zero byte, and
    each `gpu.launch_func` a call of the runtime's
    `dtensor_rt_gpu_launch(image, image_bytes, kernel, grid x/y/z,
    block x/y/z, shared_bytes, params, param_count)` with a pointer to each
    kernel argument, so that kernels run on the program's stream. A binary
    must hold exactly one object; async launches and launches with clusters
    are errors.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // DTENSOR_CODEGEN_PASSES_TD
