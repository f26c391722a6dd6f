//===- Pipeline.cpp - The CUDA lowering pipeline --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/GPU/GpuCodegen.h"
#include "dtensor/Codegen/Common/Passes.h"
#include "dtensor/Codegen/GPU/Passes.h"

#include "dtensor/Codegen/Common/PipelineStages.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;

namespace dtensor::codegen {

void buildGpuLoweringPipeline(OpPassManager &pm,
                              const GpuLoweringOptions &options) {
  BufferizationStageOptions stage;
  stage.fuseElementwise = options.fuseElementwise;
  stage.matmulToRuntime = options.matmulToRuntime;
  stage.halfPrecisionMatmuls = true;
  stage.afterBufferization = options.afterBufferization;
  addTensorPreparationPasses(pm, stage);
  addBufferizationPasses(pm, stage);

  // Kernels: every loop nest runs on the device.
  pm.addNestedPass<func::FuncOp>(createGpuLinalgToParallelLoops());
  GpuMapParallelLoopsOptions map;
  map.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoops(map));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Host and device alike: explicit address arithmetic and branches.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));

  // Device: NVVM, math through libdevice.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host: the CPU target's lowering, then the launches' operands.
  pm.addPass(createConvertMathToLLVMPass());
  addHostToLLVMPasses(pm);
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  // Device code into the host module, launched through the runtime.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createGpuLaunchToRuntime());
  pm.addPass(createFinalizeAbi());
  pm.addPass(createCanonicalizerPass());
}

std::string findCudaToolkit() {
  auto hasPtxas = [](llvm::StringRef root) {
    llvm::SmallString<256> ptxas(root);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    return !root.empty() && llvm::sys::fs::can_execute(ptxas);
  };
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("CUDA_PATH"))
    if (hasPtxas(*env))
      return *env;
  for (llvm::StringRef root : {llvm::StringRef(DTENSOR_CUDA_TOOLKIT_DIR),
                               llvm::StringRef("/usr/local/cuda")})
    if (hasPtxas(root))
      return root.str();
  return "";
}

void registerGpuTargetInterfaces(DialectRegistry &registry) {
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

namespace {
struct GpuLoweringPipelineOptions
    : PassPipelineOptions<GpuLoweringPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture, e.g. sm_90"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("NVPTX features, e.g. +ptx80"),
                               llvm::cl::init("")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (default: $CUDA_PATH, the one found "
                     "at configure time, /usr/local/cuda)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded device code: fatbin, bin (cubin) or isa (PTX)"),
      llvm::cl::init("fatbin")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of the kernels"),
                            llvm::cl::init(256)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise linalg ops before bufferization"),
      llvm::cl::init(true)};
};
} // namespace

void registerGpuCodegenPasses() {
  registerCodegenGPUPasses();
  PassPipelineRegistration<GpuLoweringPipelineOptions>(
      "dtensor-gpu-lowering",
      "Lower a per-rank module to host LLVM dialect with embedded CUDA "
      "kernels",
      [](OpPassManager &pm, const GpuLoweringPipelineOptions &options) {
        GpuLoweringOptions lowering;
        lowering.chip = options.chip;
        lowering.features = options.features;
        lowering.toolkit = options.toolkit.empty()
                               ? findCudaToolkit()
                               : std::string(options.toolkit);
        lowering.format = options.format;
        lowering.blockSize = options.blockSize;
        lowering.fuseElementwise = options.fuseElementwise;
        buildGpuLoweringPipeline(pm, lowering);
      });
}

} // namespace dtensor::codegen
