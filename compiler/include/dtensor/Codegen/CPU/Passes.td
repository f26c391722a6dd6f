//===- Passes.td - dtensor CPU code generation passes ------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_CODEGEN_CPU_PASSES_TD
#define DTENSOR_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def CpuSharedReciprocals : Pass<"dtensor-cpu-shared-reciprocals",
                                "::mlir::func::FuncOp"> {
  let summary = "Divide once by a divisor that several divisions share";
  let description = [{
    In each block, when two or more f32 or f64 `arith.divf` ops divide by
    the same value `d`, one `r = 1 / d` is computed before the first of them
    and each `x / d` becomes `x * r` (its fast-math flags kept). A division
    costs several multiplications (vdivps on 8 lanes: a throughput of one
    per 5 cycles against two multiplications per cycle), and the gradients
    of sigmoid and SiLU divide three values by the same `1 + exp(-x)`:
    SiLU's backward loop, the largest elementwise loop of a Llama's
    training step, made three divisions per element.

    `x * (1 / d)` rounds twice where `x / d` rounds once: the results
    differ by at most 1.5 ulp, while `d`'s magnitude is within the range of
    normal numbers whose reciprocal is normal too (for f32, 1.2e-38 to
    8.5e37). Zero, infinite and NaN divisors give what the division gives
    (`1 / d` is then inf, 0 or NaN); a subnormal divisor, whose reciprocal
    overflows, gives inf where the quotient may be finite, and a divisor
    above that range loses precision in its subnormal reciprocal.
    Divisions by a constant are left to LLVM.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
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

def CpuNativeMinMax : Pass<"dtensor-cpu-native-min-max",
                           "::mlir::func::FuncOp"> {
  let summary = "Lower f32/f64 float min and max to LLVM's intrinsics";
  let description = [{
    Each `arith.maximumf`, `arith.minimumf`, `arith.maxnumf` and
    `arith.minnumf` on f32 or f64 (scalar or vector) becomes
    `llvm.intr.maximum`, `llvm.intr.minimum`, `llvm.intr.maxnum` or
    `llvm.intr.minnum`: the same semantics (NaN propagated, or ignored, and
    -0 < +0), which the conversion to LLVM would give them, but ahead of
    `arith-expand`, which otherwise spells them as compares and selects
    (needed there for ceil and floor divisions and bf16). LLVM's loop
    vectoriser recognises the intrinsics as min/max reductions; the
    compare-and-select form it does not, and a softmax's or a
    cross-entropy's row max over the vocabulary ran one element at a time,
    storing its accumulator on each. Fast-math flags are dropped (the
    result is the same without them); other element types are left to
    `arith-expand`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
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

def CpuParallelLoopNests : Pass<"dtensor-cpu-parallel-loop-nests",
                                "::mlir::ModuleOp"> {
  let summary = "Give each large parallel loop nest to the runtime's threads";
  let description = [{
    Every `scf.parallel` without results directly in the body of a function
    (as `convert-linalg-to-parallel-loops` makes them from linalg ops whose
    outer dims are parallel) whose work is at least `grain` becomes a call
    of a new private function
    `<function>_pnest<N>(begin, end, step, captured...)` that runs the nest
    with its split dim restricted to [begin, end): the first dim whose trip
    count is not 1 (a batch of one is common). The function carries
    `dtensor_parallel_nest = W`, W the work of one iteration of that dim
    (ops in the body times the trip counts of the other dims, a dynamic
    trip count counted as 16); the lowering to LLVM
    (`--dtensor-cpu-parallel-nests-to-runtime`) turns its calls into
    `dtensor_rt_parallel_for`, which splits [begin, end) over the runtime's
    worker threads when the total work at run time is at least the grain,
    and otherwise calls it once. A nest whose split dim has a static trip
    count and less work than `grain` stays where it is, as does a nest that
    calls a function (its callee need not be thread-safe). Values the nest
    uses from above become arguments, constants are cloned in.
  }];
  let options = [
    Option<"grain", "grain", "int64_t", /*default=*/"32768",
           "Work (body ops times iterations) below which a nest stays serial">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def CpuParallelNestsToRuntime : Pass<"dtensor-cpu-parallel-nests-to-runtime",
                                     "::mlir::ModuleOp"> {
  let summary = "Run the calls of parallel nests through dtensor_rt_parallel_for";
  let description = [{
    On the LLVM dialect: each call of an `llvm.func` marked
    `dtensor_parallel_nest = W` (by `--dtensor-cpu-parallel-loop-nests`),
    whose first two arguments are the range [begin, end) of its first loop
    dim, becomes `dtensor_rt_parallel_for(task, args, begin, end, step, W)`.
    `args` is a stack array of 8-byte slots holding the call's other
    arguments (the step is the third), and `task` a new function
    `<callee>_task(args, begin, end)` that loads them and calls the nest.
    A callee with an argument wider than 8 bytes keeps its direct call.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
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

#endif // DTENSOR_CODEGEN_CPU_PASSES_TD
