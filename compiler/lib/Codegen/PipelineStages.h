//===- PipelineStages.h - Stages shared by the targets' pipelines -*- C++ -*-===//

#ifndef DTENSOR_CODEGEN_PIPELINESTAGES_H
#define DTENSOR_CODEGEN_PIPELINESTAGES_H

#include "mlir/Pass/PassManager.h"

namespace dtensor::codegen {

struct BufferizationStageOptions {
  bool fuseElementwise = true;
  bool matmulToRuntime = true;
  /// f16 and bf16 matmuls are runtime calls too (cuBLASLt has them).
  bool halfPrecisionMatmuls = false;
  /// exp without glibc's slow path (a CPU concern).
  bool clampExp = false;
};

/// Per-rank tensors to buffers, for every target: gathers and elementwise ops
/// as fused linalg generics, collectives and matmuls as runtime calls, entry
/// results as out-params, deallocations explicit.
void addBufferizationPasses(mlir::OpPassManager &pm,
                            const BufferizationStageOptions &options);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_PIPELINESTAGES_H
