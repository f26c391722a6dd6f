//===- GpuLaunchToRuntime.cpp - kernels launched by the runtime -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Upstream's lowering of gpu.launch_func creates, synchronises and destroys
// a stream around every launch and loads modules from global constructors.
// A dtensor program instead launches on the stream of the program being run,
// with no host synchronisation inside a step, and lets the runtime load each
// image once per program: the launches become dtensor_rt_gpu_launch calls.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_GPULAUNCHTORUNTIME
#include "dtensor/Codegen/GPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-gpu-launch-to-runtime"

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// A device code image embedded in the host module.
struct Image {
  LLVM::GlobalOp global;
  int64_t bytes;
};

/// An internal constant global holding `bytes` and a terminating zero byte
/// (PTX text must be NUL-terminated; binary formats ignore it).
LLVM::GlobalOp createByteGlobal(OpBuilder &builder, Location loc,
                                SymbolTable &symbols, StringRef name,
                                StringRef bytes, unsigned alignment) {
  MLIRContext *context = builder.getContext();
  std::string contents = bytes.str();
  contents.push_back('\0');
  auto type =
      LLVM::LLVMArrayType::get(IntegerType::get(context, 8), contents.size());
  auto global = LLVM::GlobalOp::create(
      builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, name,
      builder.getStringAttr(contents), alignment);
  symbols.insert(global);
  return global;
}

LLVM::LLVMFuncOp declareLaunch(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kGpuLaunchSymbol))
    return existing;
  MLIRContext *context = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = IntegerType::get(context, 64);
  Type i32 = IntegerType::get(context, 32);
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(context),
      {ptr, i64, ptr, i64, i64, i64, i64, i64, i64, i32, ptr, i64});
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(builder, module.getLoc(), kGpuLaunchSymbol,
                                  type);
}

/// Storage for the arguments of the function's launches: one 8-byte slot
/// per argument of the launch with the most, and the array of pointers to
/// them. The runtime copies the values at each launch, so launches share it.
struct ArgumentStorage {
  Value slots, params;
};

struct GpuLaunchToRuntime
    : dtensor::codegen::impl::GpuLaunchToRuntimeBase<GpuLaunchToRuntime> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SymbolTable symbols(module);
    OpBuilder builder(context);

    llvm::StringMap<Image> images;
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    for (gpu::BinaryOp binary : binaries) {
      if (binary.getObjects().size() != 1) {
        binary.emitOpError("must hold exactly one object, not ")
            << binary.getObjects().size();
        return signalPassFailure();
      }
      auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      StringRef bytes = object.getObject().getValue();
      builder.setInsertionPoint(binary);
      std::string name = (binary.getName() + "_image").str();
      LLVM::GlobalOp global =
          createByteGlobal(builder, binary.getLoc(), symbols, name, bytes, 64);
      images[binary.getName()] = {global, static_cast<int64_t>(bytes.size())};
      LLVM_DEBUG(llvm::dbgs()
                 << "embedding the image of @" << binary.getName() << " ("
                 << bytes.size() << " bytes) as @" << name << "\n");
    }

    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    if (launches.empty()) {
      LLVM_DEBUG(llvm::dbgs() << "no launches: dropping the binaries\n");
      for (gpu::BinaryOp binary : binaries)
        binary.erase();
      module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
      return;
    }
    LLVM::LLVMFuncOp launchFunction = declareLaunch(module);
    Type ptr = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    Type i32 = IntegerType::get(context, 32);

    llvm::DenseMap<Operation *, ArgumentStorage> storage;
    llvm::DenseMap<Operation *, size_t> mostArguments;
    for (gpu::LaunchFuncOp launch : launches) {
      auto host = launch->getParentOfType<LLVM::LLVMFuncOp>();
      if (!host) {
        launch.emitOpError("must be in an llvm.func: run it after the host "
                           "is lowered to the LLVM dialect");
        return signalPassFailure();
      }
      size_t &most = mostArguments[host];
      most = std::max(most, launch.getKernelOperands().size());
    }
    for (auto [host, most] : mostArguments) {
      auto function = cast<LLVM::LLVMFuncOp>(host);
      builder.setInsertionPointToStart(&function.getBody().front());
      Location loc = function.getLoc();
      Value count = LLVM::ConstantOp::create(builder, loc, i64,
                                             std::max<size_t>(most, 1));
      ArgumentStorage &args = storage[host];
      args.slots = LLVM::AllocaOp::create(builder, loc, ptr, i64, count, 8);
      args.params = LLVM::AllocaOp::create(builder, loc, ptr, ptr, count, 8);
    }

    llvm::StringMap<LLVM::GlobalOp> kernelNames;
    for (gpu::LaunchFuncOp launch : launches) {
      Location loc = launch.getLoc();
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty()) {
        launch.emitOpError("is asynchronous: dtensor programs launch on the "
                           "program's stream, in order");
        return signalPassFailure();
      }
      if (launch.hasClusterSize()) {
        launch.emitOpError("has a cluster size, which the runtime's "
                           "launcher does not take");
        return signalPassFailure();
      }
      auto image = images.find(launch.getKernelModuleName().getValue());
      if (image == images.end()) {
        launch.emitOpError("names @")
            << launch.getKernelModuleName().getValue()
            << ", which is not a gpu.binary of this module";
        return signalPassFailure();
      }
      std::string qualified = (launch.getKernelModuleName().getValue() + "_" +
                               launch.getKernelName().getValue())
                                  .str();
      LLVM::GlobalOp &nameGlobal = kernelNames[qualified];
      if (!nameGlobal) {
        builder.setInsertionPoint(image->second.global);
        nameGlobal =
            createByteGlobal(builder, loc, symbols, qualified + "_name",
                             launch.getKernelName().getValue(), 1);
      }

      builder.setInsertionPoint(launch);
      ArgumentStorage &args =
          storage[launch->getParentOfType<LLVM::LLVMFuncOp>()];
      for (auto [index, operand] :
           llvm::enumerate(launch.getKernelOperands())) {
        Type type = operand.getType();
        if (!LLVM::isCompatibleType(type) ||
            (!isa<LLVM::LLVMPointerType>(type) && !type.isIntOrFloat()) ||
            (type.isIntOrFloat() && type.getIntOrFloatBitWidth() > 64)) {
          launch.emitOpError("argument #")
              << index << " of type " << type
              << " does not fit the launcher's 8-byte argument slots";
          return signalPassFailure();
        }
        auto slot = LLVM::GEPOp::create(builder, loc, ptr, i64, args.slots,
                                        ArrayRef<LLVM::GEPArg>{int32_t(index)});
        LLVM::StoreOp::create(builder, loc, operand, slot);
        auto param =
            LLVM::GEPOp::create(builder, loc, ptr, ptr, args.params,
                                ArrayRef<LLVM::GEPArg>{int32_t(index)});
        LLVM::StoreOp::create(builder, loc, slot, param);
      }

      auto toI64 = [&](Value value) -> Value {
        if (value.getType() == i64)
          return value;
        return LLVM::ZExtOp::create(builder, loc, i64, value);
      };
      Value shared = launch.getDynamicSharedMemorySize();
      if (!shared)
        shared = LLVM::ConstantOp::create(builder, loc, i32, 0);
      SmallVector<Value> operands = {
          LLVM::AddressOfOp::create(builder, loc, image->second.global),
          LLVM::ConstantOp::create(builder, loc, i64, image->second.bytes),
          LLVM::AddressOfOp::create(builder, loc, nameGlobal),
          toI64(launch.getGridSizeX()),
          toI64(launch.getGridSizeY()),
          toI64(launch.getGridSizeZ()),
          toI64(launch.getBlockSizeX()),
          toI64(launch.getBlockSizeY()),
          toI64(launch.getBlockSizeZ()),
          shared,
          args.params,
          LLVM::ConstantOp::create(builder, loc, i64,
                                   launch.getKernelOperands().size())};
      LLVM::CallOp::create(builder, loc, launchFunction, operands);
      LLVM_DEBUG(llvm::dbgs()
                 << "launch of @" << qualified << " at " << loc
                 << " becomes a call of " << kGpuLaunchSymbol << " with "
                 << launch.getKernelOperands().size() << " arguments\n");
      launch.erase();
    }
    for (gpu::BinaryOp binary : binaries)
      binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
