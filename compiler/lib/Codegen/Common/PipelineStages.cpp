//===- PipelineStages.cpp - Stages shared by the targets' pipelines -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/PipelineStages.h"

#include "dtensor/Codegen/Common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace dtensor::codegen {

void addTensorPreparationPasses(OpPassManager &pm,
                                const BufferizationStageOptions &options) {
  // Gathers and elementwise ops as fused linalg generics.
  pm.addNestedPass<func::FuncOp>(createLowerGather());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  if (options.fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createFuseElementwise());
}

void addBufferizationPasses(OpPassManager &pm,
                            const BufferizationStageOptions &options) {
  // Collectives prepared, entry results as out-params.
  pm.addPass(createPrepareCollectives());
  pm.addPass(createEntryOutParams());
  pm.addPass(createCanonicalizerPass());
  // Recomputations were kept apart from the forward up to here.
  pm.addPass(createLowerOptimizationBarriers());

  // Buffers: collectives become runtime calls as they bufferize.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // State updates were materialized into their arguments' buffers: the
  // entries' remaining results are those buffers.
  pm.addPass(createDropStateResults());
  pm.addPass(createLowerMeshCoords());
  pm.addPass(createLowerStepSeed());
  if (options.matmulToRuntime) {
    MatmulToRuntimeOptions matmul;
    matmul.halfPrecision = options.halfPrecisionMatmuls;
    pm.addPass(createMatmulToRuntime(matmul));
  }
  // Frees placed at the end of each block, then moved to the buffers' last
  // uses: a step holds at once only the buffers it needs at once.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createFreeAfterLastUse());
  if (options.afterBufferization)
    options.afterBufferization(pm);
}

void addHostToLLVMPasses(OpPassManager &pm) {
  pm.addPass(createArithToLLVMConversionPass());
  // Allocations through generic functions, bound to the runtime's buffer
  // cache by --dtensor-finalize-abi.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
}

} // namespace dtensor::codegen
