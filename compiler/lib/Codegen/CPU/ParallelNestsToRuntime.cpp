//===- ParallelNestsToRuntime.cpp - parallel nests through the runtime ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The calls of the functions ParallelLoopNests made, once they are LLVM
// functions with their memrefs spread into scalars: the arguments go into a
// stack array of 8-byte slots, and the runtime calls a task function that
// loads them back, once per piece of the range.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUPARALLELNESTSTORUNTIME
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-parallel-nests-to-runtime"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kNestAttr = "dtensor_parallel_nest";
constexpr llvm::StringLiteral kParallelFor = "dtensor_rt_parallel_for";

/// Whether a value of `type` fits an 8-byte slot.
bool fitsSlot(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  if (auto real = dyn_cast<FloatType>(type))
    return real.getWidth() <= 64;
  return false;
}

/// The nests this pass can call through the runtime: their range and step
/// are i64 and every argument fits a slot.
bool isCallableNest(LLVM::LLVMFuncOp func) {
  if (!func->hasAttr(kNestAttr) || func.isExternal())
    return false;
  ArrayRef<Type> inputs = func.getFunctionType().getParams();
  if (inputs.size() < 3)
    return false;
  for (unsigned i = 0; i < 3; ++i)
    if (!inputs[i].isInteger(64))
      return false;
  return llvm::all_of(inputs, fitsSlot);
}

/// `<nest>_task(args, begin, end)`: loads slots 0.. (the nest's arguments
/// from the third on) and calls the nest over [begin, end).
LLVM::LLVMFuncOp buildTask(LLVM::LLVMFuncOp nest, SymbolTable &symbols) {
  MLIRContext *context = nest.getContext();
  OpBuilder builder(context);
  Location loc = nest.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                          {ptr, i64, i64});
  builder.setInsertionPoint(nest);
  auto task = LLVM::LLVMFuncOp::create(builder, loc,
                                       (nest.getName() + "_task").str(), type,
                                       LLVM::Linkage::Internal);
  symbols.insert(task);
  Block *entry = task.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  SmallVector<Value> arguments = {entry->getArgument(1), entry->getArgument(2)};
  ArrayRef<Type> inputs = nest.getFunctionType().getParams();
  for (unsigned i = 2; i < inputs.size(); ++i) {
    Value slot = LLVM::GEPOp::create(builder, loc, ptr, i64,
                                     entry->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i - 2)});
    arguments.push_back(LLVM::LoadOp::create(builder, loc, inputs[i], slot));
  }
  LLVM::CallOp::create(builder, loc, nest, arguments);
  LLVM::ReturnOp::create(builder, loc, ValueRange());
  return task;
}

LLVM::LLVMFuncOp declareParallelFor(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor))
    return existing;
  MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(
      builder, module.getLoc(), kParallelFor,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                  {ptr, ptr, i64, i64, i64, i64}));
}

/// Replaces `call` of `nest` by dtensor_rt_parallel_for of its task.
void callThroughRuntime(LLVM::CallOp call, LLVM::LLVMFuncOp nest,
                        LLVM::LLVMFuncOp task, LLVM::LLVMFuncOp parallelFor) {
  MLIRContext *context = call.getContext();
  Location loc = call.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  ValueRange operands = call.getArgOperands();
  int64_t slots = static_cast<int64_t>(operands.size()) - 2;

  // The slots live in the caller's frame, allocated once at its entry.
  auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder builder = OpBuilder::atBlockBegin(&caller.getBody().front());
  Value count = LLVM::ConstantOp::create(builder, loc, i64,
                                         builder.getI64IntegerAttr(slots));
  Value buffer = LLVM::AllocaOp::create(builder, loc, ptr, i64, count);

  builder.setInsertionPoint(call);
  for (int64_t i = 0; i < slots; ++i) {
    Value slot = LLVM::GEPOp::create(builder, loc, ptr, i64, buffer,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(builder, loc, operands[i + 2], slot);
  }
  Value taskAddress = LLVM::AddressOfOp::create(builder, loc, task);
  int64_t work = cast<IntegerAttr>(nest->getAttr(kNestAttr)).getInt();
  Value workValue = LLVM::ConstantOp::create(builder, loc, i64,
                                             builder.getI64IntegerAttr(work));
  LLVM::CallOp::create(builder, loc, parallelFor,
                       ValueRange{taskAddress, buffer, operands[0],
                                  operands[1], operands[2], workValue});
  call.erase();
}

struct CpuParallelNestsToRuntime
    : dtensor::codegen::impl::CpuParallelNestsToRuntimeBase<
          CpuParallelNestsToRuntime> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::DenseMap<Operation *, LLVM::LLVMFuncOp> tasks;
    SmallVector<std::pair<LLVM::CallOp, LLVM::LLVMFuncOp>> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      auto nest = symbols.lookup<LLVM::LLVMFuncOp>(*callee);
      if (nest && isCallableNest(nest))
        calls.push_back({call, nest});
      else if (nest && nest->hasAttr(kNestAttr) && !nest.isExternal())
        LLVM_DEBUG(llvm::dbgs()
                   << "calling @" << nest.getName() << " at " << call.getLoc()
                   << " directly: its range is not i64 or an "
                      "argument does not fit an 8-byte slot\n");
    });
    if (calls.empty())
      return;
    LLVM::LLVMFuncOp parallelFor = declareParallelFor(module);
    for (auto [call, nest] : calls) {
      LLVM::LLVMFuncOp &task = tasks[nest];
      if (!task)
        task = buildTask(nest, symbols);
      LLVM_DEBUG(llvm::dbgs() << "calling @" << nest.getName() << " at "
                              << call.getLoc() << " through " << kParallelFor
                              << " with @" << task.getName() << "\n");
      callThroughRuntime(call, nest, task, parallelFor);
    }
  }
};

} // namespace
