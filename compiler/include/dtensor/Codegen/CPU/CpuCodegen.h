//===- CpuCodegen.h - Per-rank program to a shared object -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CPU back end: lowers a per-rank module (tensors, linalg and dtensor
// collectives) to the LLVM dialect, calling the runtime ABI of
// dtensor/rt_abi.h for collectives and matmuls, and emits it as a shared
// object exporting one `dtensor_entry_<name>` per public function.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_CODEGEN_CPU_CPUCODEGEN_H
#define DTENSOR_CODEGEN_CPU_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace dtensor::codegen {

struct CpuLoweringOptions {
  /// Fuse elementwise linalg ops into their consumers before bufferization.
  bool fuseElementwise = true;
  /// Turn f32/f64 matmuls and batch matmuls into dtensor_rt_matmul calls;
  /// otherwise they become loops like every other linalg op.
  bool matmulToRuntime = true;
  /// Lower loop nests through the CUDA target's kernel mapping and run the
  /// kernels as loops (--dtensor-gpu-emulate-launches): a test of that
  /// mapping without a GPU.
  bool emulateGpuKernels = false;
  /// Run large parallel loop nests on the runtime's worker threads
  /// (--dtensor-cpu-parallel-loop-nests); `parallelGrain` is its grain.
  bool parallelLoops = true;
  int64_t parallelGrain = 32768;
  /// Adds passes that read the program once bufferized, its deallocations
  /// placed (the memory report's allocations); none when empty.
  std::function<void(mlir::OpPassManager &)> afterBufferization;
};

/// Per-rank module (tensors + dtensor collectives) -> LLVM dialect, ready for
/// translation.
void buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                              const CpuLoweringOptions &options);

/// Registers the CPU passes and the pipeline `dtensor-cpu-lowering` for
/// dtensor-opt.
void registerCpuCodegenPasses();

struct CpuTargetOptions {
  /// "" = the host CPU (llvm::sys::getHostCPUName and the host features).
  std::string cpu;
  /// Comma-separated "+feature,-feature" list; with cpu = "", added to the
  /// host features.
  std::string features;
  unsigned optLevel = 3;
};

/// Translates an LLVM-dialect module to LLVM IR, optimises it at optLevel for
/// the target, emits a native object and links it into a shared object at
/// `path` with the system `cc`. Errors are emitted as diagnostics on the
/// module; nothing is left at `path` on failure.
mlir::LogicalResult emitCpuSharedObject(mlir::ModuleOp module,
                                        const CpuTargetOptions &options,
                                        llvm::StringRef path);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_CPU_CPUCODEGEN_H
