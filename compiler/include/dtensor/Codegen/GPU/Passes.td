//===- Passes.td - dtensor CUDA code generation passes -----*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_CODEGEN_GPU_PASSES_TD
#define DTENSOR_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // DTENSOR_CODEGEN_GPU_PASSES_TD
