//===- FinalizeAbi.cpp - The shared object's interface (LLVM dialect) -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Last step on the LLVM dialect: what the shared object exports (one
// `dtensor_entry_<name>(void **descriptors)` per entry function) and the
// runtime symbols it imports.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_FINALIZEABI
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-finalize-abi"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

constexpr llvm::StringLiteral kCInterfacePrefix = "_mlir_ciface_";
constexpr llvm::StringLiteral kEntryPrefix = "dtensor_entry_";

/// Points every call of a typed push-buffer declaration at the one C symbol;
/// all of them have its (i64 rank, ptr descriptor) signature by now.
LogicalResult bindPushBuffer(ModuleOp module) {
  SmallVector<LLVM::LLVMFuncOp> typed;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (func.getName().starts_with(kTypedPushBufferPrefix))
      typed.push_back(func);
  if (typed.empty())
    return success();

  MLIRContext *context = module.getContext();
  auto pushType = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(context),
      {IntegerType::get(context, 64), LLVM::LLVMPointerType::get(context)});
  auto push = module.lookupSymbol<LLVM::LLVMFuncOp>(kPushBufferSymbol);
  if (!push) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    push = LLVM::LLVMFuncOp::create(builder, module.getLoc(), kPushBufferSymbol,
                                    pushType);
  }
  for (LLVM::LLVMFuncOp decl : typed)
    if (decl.getFunctionType() != pushType)
      return decl.emitOpError("does not lower to the signature of ")
             << kPushBufferSymbol;

  LLVM_DEBUG(llvm::dbgs() << "binding " << typed.size()
                          << " typed push-buffer declarations to @"
                          << kPushBufferSymbol << "\n");
  auto target = FlatSymbolRefAttr::get(push.getSymNameAttr());
  module.walk([&](LLVM::CallOp call) {
    if (auto callee = call.getCallee();
        callee && callee->starts_with(kTypedPushBufferPrefix))
      call.setCalleeAttr(target);
  });
  for (LLVM::LLVMFuncOp decl : typed)
    decl.erase();
  return success();
}

/// Renames the generic allocation function `generic` of the memref lowering
/// (declared when memrefs are allocated) to the runtime's `symbol`.
LogicalResult bindAllocator(ModuleOp module, StringRef generic,
                            StringRef symbol) {
  auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(generic);
  if (!decl)
    return success();
  if (!decl.isExternal())
    return decl.emitOpError("must be a declaration");
  if (module.lookupSymbol(symbol))
    return decl.emitOpError("cannot be bound to ")
           << symbol << ": the module already defines it";
  auto name = StringAttr::get(module.getContext(), symbol);
  LLVM_DEBUG(llvm::dbgs() << "binding @" << generic << " to the runtime's @"
                          << symbol << "\n");
  if (failed(SymbolTable::replaceAllSymbolUses(decl, name, module)))
    return failure();
  decl.setSymName(symbol);
  return success();
}

/// void dtensor_entry_<name>(void **descriptors): descriptor i goes to
/// argument i of the function's C interface, which takes descriptors by
/// pointer.
LogicalResult exportEntry(ModuleOp module, LLVM::LLVMFuncOp func) {
  std::string cifaceName = (kCInterfacePrefix + func.getName()).str();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  if (!ciface)
    return func.emitOpError("has no C interface (") << cifaceName << ")";

  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  for (Type param : ciface.getFunctionType().getParams())
    if (param != ptrType)
      return func.emitOpError("an entry must take only memrefs");

  LLVM_DEBUG(llvm::dbgs() << "exporting @" << func.getName() << " as @"
                          << kEntryPrefix << func.getName() << " ("
                          << ciface.getNumArguments() << " descriptors)\n");
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Location loc = func.getLoc();
  auto entry = LLVM::LLVMFuncOp::create(
      builder, loc, (kEntryPrefix + func.getName()).str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptrType}));
  Block *body = entry.addEntryBlock(builder);
  builder.setInsertionPointToStart(body);
  Value descriptors = body->getArgument(0);
  SmallVector<Value> args;
  for (unsigned i = 0; i < ciface.getNumArguments(); ++i) {
    Value slot =
        LLVM::GEPOp::create(builder, loc, ptrType, ptrType, descriptors,
                            ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(builder, loc, ptrType, slot));
  }
  LLVM::CallOp::create(builder, loc, ciface, args);
  LLVM::ReturnOp::create(builder, loc, ValueRange());
  return success();
}

struct FinalizeAbi
    : dtensor::codegen::impl::FinalizeAbiBase<FinalizeAbi> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(bindPushBuffer(module)) ||
        failed(bindAllocator(module, kGenericAllocSymbol, kAllocSymbol)) ||
        failed(bindAllocator(module, kGenericFreeSymbol, kFreeSymbol)))
      return signalPassFailure();
    // Entries are the functions with a C interface (only entries get one).
    SmallVector<LLVM::LLVMFuncOp> entries;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.getName().starts_with(kCInterfacePrefix) &&
          module.lookupSymbol((kCInterfacePrefix + func.getName()).str()))
        entries.push_back(func);
    for (LLVM::LLVMFuncOp func : entries)
      if (failed(exportEntry(module, func)))
        return signalPassFailure();
    // The entry points are the only exports. Anything else could interpose
    // or be interposed by a symbol of the host (an entry named `main`!).
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal() && !func.getName().starts_with(kEntryPrefix))
        func.setLinkage(LLVM::Linkage::Internal);
    // The ids recorded in dtensor.comm_meshes replace the meshes.
    for (auto mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
  }
};

} // namespace
