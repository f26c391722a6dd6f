//===- EntryOutParams.cpp - Results of entry functions as out-params ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime owns every buffer an entry touches: it passes the inputs and
// the result buffers, and the program must write its results into the
// latter. Doing this on tensors, before bufferization, lets results have
// dynamic shapes (upstream buffer-results-to-out-params needs static ones)
// and lets one-shot bufferization compute results directly into the
// caller's buffers where it can.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_ENTRYOUTPARAMS
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

using namespace mlir;
using namespace dtensor::codegen;

namespace {

LogicalResult convertEntry(func::FuncOp func, ModuleOp module) {
  MLIRContext *context = func.getContext();
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    if (!isa<RankedTensorType>(type))
      return func.emitOpError("argument ")
             << index << " of an entry function must be a ranked tensor, not "
             << type;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    if (!isa<RankedTensorType>(type))
      return func.emitOpError("result ")
             << index << " of an entry function must be a ranked tensor, not "
             << type;
  if (!SymbolTable::symbolKnownUseEmpty(func, module))
    return func.emitOpError("an entry function must not be called within "
                            "the module");

  // A caller's inputs (weights included) are reused across steps.
  for (unsigned arg = 0; arg < func.getNumArguments(); ++arg)
    func.setArgAttr(arg, bufferization::BufferizationDialect::kWritableAttrName,
                    BoolAttr::get(context, false));

  // One identity-layout memref per result.
  unsigned numInputs = func.getNumArguments();
  SmallVector<unsigned> positions;
  SmallVector<Type> outTypes;
  SmallVector<DictionaryAttr> outAttrs;
  SmallVector<Location> outLocs;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    auto tensorType = cast<RankedTensorType>(type);
    positions.push_back(numInputs);
    outTypes.push_back(
        MemRefType::get(tensorType.getShape(), tensorType.getElementType()));
    outAttrs.push_back(DictionaryAttr::get(context));
    outLocs.push_back(func.getLoc());
  }
  if (failed(func.insertArguments(positions, outTypes, outAttrs, outLocs)))
    return func.emitOpError("cannot add the result out-params");

  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp op) { returns.push_back(op); });
  for (func::ReturnOp ret : returns) {
    OpBuilder builder(ret);
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      auto materialize = bufferization::MaterializeInDestinationOp::create(
          builder, ret.getLoc(), TypeRange(), value,
          func.getArgument(numInputs + index));
      materialize.setWritable(true);
    }
    func::ReturnOp::create(builder, ret.getLoc());
    ret.erase();
  }
  if (failed(func.eraseResults(llvm::BitVector(func.getNumResults(), true))))
    return func.emitOpError("cannot drop the results");

  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(context));
  return success();
}

/// Drops the dtensor attributes of arguments and results: they describe
/// tensors, and the dialect rejects them on the memrefs bufferization makes
/// of them.
void dropDTensorAttrs(func::FuncOp func) {
  auto isDTensorAttr = [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("dtensor.");
  };
  auto function = cast<FunctionOpInterface>(func.getOperation());
  for (unsigned arg = 0; arg < func.getNumArguments(); ++arg)
    for (NamedAttribute attr : llvm::to_vector(function.getArgAttrs(arg)))
      if (isDTensorAttr(attr))
        func.removeArgAttr(arg, attr.getName());
  for (unsigned result = 0; result < func.getNumResults(); ++result)
    for (NamedAttribute attr : llvm::to_vector(function.getResultAttrs(result)))
      if (isDTensorAttr(attr))
        func.removeResultAttr(result, attr.getName());
}

struct EntryOutParams
    : dtensor::codegen::impl::EntryOutParamsBase<EntryOutParams> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      dropDTensorAttrs(func);
      if (!func.isPublic() || func.isExternal())
        continue;
      if (failed(convertEntry(func, module)))
        return signalPassFailure();
    }
  }
};

} // namespace
