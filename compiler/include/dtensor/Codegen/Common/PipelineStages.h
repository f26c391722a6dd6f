//===- PipelineStages.h - Stages shared by the targets' pipelines -*- C++
//-*-===//

#ifndef DTENSOR_CODEGEN_PIPELINESTAGES_H
#define DTENSOR_CODEGEN_PIPELINESTAGES_H

#include "mlir/Pass/PassManager.h"

namespace dtensor::codegen {

struct BufferizationStageOptions {
  bool fuseElementwise = true;
  bool matmulToRuntime = true;
  /// f16 and bf16 matmuls are runtime calls too (cuBLASLt has them).
  bool halfPrecisionMatmuls = false;
  /// Math in the form the CPU's vector units want: exp without glibc's slow
  /// path, tanh as a vectorisable polynomial, sums reassociated so that they
  /// vectorise. The GPU's libdevice and one-thread-per-row kernels need
  /// none of it.
  bool cpuVectorMath = false;
};

/// Per-rank tensors to buffers, for every target: gathers and elementwise ops
/// as fused linalg generics, collectives and matmuls as runtime calls, entry
/// results as out-params, deallocations explicit.
void addBufferizationPasses(mlir::OpPassManager &pm,
                            const BufferizationStageOptions &options);

/// The host's arith, memref, cf, func and ub ops to the LLVM dialect, for
/// every target; allocations go through the generic functions that
/// --dtensor-finalize-abi binds to the runtime's step buffers.
void addHostToLLVMPasses(mlir::OpPassManager &pm);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_PIPELINESTAGES_H
