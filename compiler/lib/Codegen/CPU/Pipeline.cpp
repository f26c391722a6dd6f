//===- Pipeline.cpp - The CPU lowering pipeline ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/CPU/CpuCodegen.h"
#include "dtensor/Codegen/CPU/Passes.h"
#include "dtensor/Codegen/Common/Passes.h"
#include "dtensor/Codegen/GPU/Passes.h"

#include "dtensor/Codegen/Common/PipelineStages.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace dtensor::codegen {

void buildCpuLoweringPipeline(OpPassManager &pm,
                              const CpuLoweringOptions &options) {
  BufferizationStageOptions stage;
  stage.fuseElementwise = options.fuseElementwise;
  stage.matmulToRuntime = options.matmulToRuntime;
  stage.afterBufferization = options.afterBufferization;
  addTensorPreparationPasses(pm, stage);
  // Math in the form the CPU's vector units want: exp without glibc's slow
  // path, tanh as a vectorisable polynomial, sums reassociated so that they
  // vectorise, one division for several by the same divisor.
  pm.addNestedPass<func::FuncOp>(createCpuClampExp());
  pm.addNestedPass<func::FuncOp>(createCpuApproximateTanh());
  pm.addNestedPass<func::FuncOp>(createCpuReassociateSums());
  pm.addNestedPass<func::FuncOp>(createCpuSharedReciprocals());
  addBufferizationPasses(pm, stage);
  if (options.emulateGpuKernels) {
    pm.addNestedPass<func::FuncOp>(createGpuLinalgToParallelLoops());
    pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoops());
    pm.addNestedPass<func::FuncOp>(createGpuEmulateLaunches());
  }
  pm.addPass(createCpuStridedCopiesToLoops());

  // Loops, then the LLVM dialect. Parallel dims stay scf.parallel until the
  // large nests have moved into functions the runtime's threads share; all
  // other nests then become sequential.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  if (options.parallelLoops) {
    CpuParallelLoopNestsOptions parallel;
    parallel.grain = options.parallelGrain;
    pm.addPass(createCpuParallelLoopNests(parallel));
  }
  pm.addPass(createParallelForToNestedForsPass());
  // One function per loop nest, each distinct nest once: LLVM's loop
  // passes take time quadratic in a function's size.
  pm.addPass(createCpuOutlineLoopNests());
  pm.addPass(createCpuMergeIdenticalFunctions());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // f32/f64 min and max as LLVM's intrinsics, which its loop vectoriser
  // takes as reductions; arith-expand would make them compares and selects.
  pm.addNestedPass<func::FuncOp>(createCpuNativeMinMax());
  // bf16 conversions as integer arithmetic: the system's libgcc may lack
  // __truncsfbf2.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  addHostToLLVMPasses(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.parallelLoops)
    pm.addPass(createCpuParallelNestsToRuntime());
  pm.addPass(createFinalizeAbi());
  pm.addPass(createCanonicalizerPass());
}

namespace {
struct CpuLoweringPipelineOptions
    : PassPipelineOptions<CpuLoweringPipelineOptions> {
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise linalg ops before bufferization"),
      llvm::cl::init(true)};
  Option<bool> matmulToRuntime{
      *this, "matmul-to-runtime",
      llvm::cl::desc("Call dtensor_rt_matmul for f32/f64 matmuls"),
      llvm::cl::init(true)};
  Option<bool> emulateGpuKernels{
      *this, "emulate-gpu-kernels",
      llvm::cl::desc("Map loop nests to kernels as the CUDA target does, "
                     "then run the kernels as loops"),
      llvm::cl::init(false)};
  Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run large parallel loop nests on the runtime's worker "
                     "threads"),
      llvm::cl::init(true)};
  Option<int64_t> parallelGrain{
      *this, "parallel-grain",
      llvm::cl::desc("Work (body ops times iterations) below which a "
                     "parallel nest stays serial"),
      llvm::cl::init(32768)};
};
} // namespace

void registerCpuCodegenPasses() {
  registerCodegenCPUPasses();
  PassPipelineRegistration<CpuLoweringPipelineOptions>(
      "dtensor-cpu-lowering",
      "Lower a per-rank module to the LLVM dialect for the CPU runtime",
      [](OpPassManager &pm, const CpuLoweringPipelineOptions &options) {
        CpuLoweringOptions lowering;
        lowering.fuseElementwise = options.fuseElementwise;
        lowering.matmulToRuntime = options.matmulToRuntime;
        lowering.emulateGpuKernels = options.emulateGpuKernels;
        lowering.parallelLoops = options.parallelLoops;
        lowering.parallelGrain = options.parallelGrain;
        buildCpuLoweringPipeline(pm, lowering);
      });
}

} // namespace dtensor::codegen
