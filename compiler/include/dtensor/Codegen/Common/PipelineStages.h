//===- PipelineStages.h - Stages the targets share --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef DTENSOR_CODEGEN_COMMON_PIPELINESTAGES_H
#define DTENSOR_CODEGEN_COMMON_PIPELINESTAGES_H

#include "mlir/Pass/PassManager.h"

#include <functional>

namespace dtensor::codegen {

struct BufferizationStageOptions {
  bool fuseElementwise = true;
  bool matmulToRuntime = true;
  /// f16 and bf16 matmuls are runtime calls too (cuBLASLt has them).
  bool halfPrecisionMatmuls = false;
  /// Adds passes that read the program once bufferized, its deallocations
  /// placed (the memory report's allocations); none when empty.
  std::function<void(mlir::OpPassManager &)> afterBufferization;
};

/// Per-rank tensors, for every target: gathers and elementwise ops as fused
/// linalg generics. A target may add its own tensor rewrites after these
/// (the CPU's vector math), before addBufferizationPasses.
void addTensorPreparationPasses(mlir::OpPassManager &pm,
                                const BufferizationStageOptions &options);

/// Per-rank tensors to buffers, for every target: collectives and matmuls as
/// runtime calls, entry results as out-params, deallocations explicit.
void addBufferizationPasses(mlir::OpPassManager &pm,
                            const BufferizationStageOptions &options);

/// The host's arith, memref, cf, func and ub ops to the LLVM dialect, for
/// every target; allocations go through the generic functions that
/// --dtensor-finalize-abi binds to the runtime's step buffers.
void addHostToLLVMPasses(mlir::OpPassManager &pm);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_COMMON_PIPELINESTAGES_H
