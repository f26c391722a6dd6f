//===- EntryOutParams.cpp - Results of entry functions as out-params ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime owns every buffer an entry touches: it passes the inputs and
// the result buffers, and the program must write its results into the
// latter. Doing this on tensors, before bufferization, lets results have
// dynamic shapes (upstream buffer-results-to-out-params needs static ones)
// and lets one-shot bufferization compute results directly into the
// caller's buffers where it can.
//
// State (a `dtensor.state` argument, e.g. a KV cache, or a weight that a
// training step updates) is the exception: the result that
// `dtensor.updates` it gets no out-param but is materialized into the
// argument itself, which is writable, so that bufferization
// updates the runtime's buffer in place (copying only when the old value is
// read after the update). The entry keeps returning the materialized value
// (an unused one would be erased as dead): its buffer is the argument's, so
// the drop of equivalent buffer results after bufferization removes it.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_ENTRYOUTPARAMS
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-entry-out-params"

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// The state arguments of an entry and, per result, the state argument it
/// updates; read before the dtensor attributes are dropped.
struct StateUpdates {
  llvm::BitVector stateArgs;
  SmallVector<std::optional<unsigned>> updates;
};

StateUpdates getStateUpdates(func::FuncOp func) {
  StateUpdates state;
  state.stateArgs.resize(func.getNumArguments());
  for (unsigned arg = 0; arg < func.getNumArguments(); ++arg)
    if (func.getArgAttr(arg, dtensor::DTensorDialect::getStateAttrName()))
      state.stateArgs.set(arg);
  for (unsigned result = 0; result < func.getNumResults(); ++result) {
    auto updates = func.getResultAttrOfType<IntegerAttr>(
        result, dtensor::DTensorDialect::getUpdatesAttrName());
    state.updates.push_back(updates ? std::optional<unsigned>(updates.getInt())
                                    : std::nullopt);
    // A weight that a result updates is written in place like state.
    if (updates)
      state.stateArgs.set(updates.getInt());
  }
  return state;
}

LogicalResult convertEntry(func::FuncOp func, ModuleOp module,
                           const StateUpdates &state) {
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

  // A caller's inputs (weights included) are reused across steps; state is
  // updated in place.
  for (unsigned arg = 0; arg < func.getNumArguments(); ++arg)
    func.setArgAttr(arg, bufferization::BufferizationDialect::kWritableAttrName,
                    BoolAttr::get(context, state.stateArgs.test(arg)));

  // One identity-layout memref per result that updates no state.
  unsigned numInputs = func.getNumArguments();
  SmallVector<unsigned> positions;
  SmallVector<Type> outTypes;
  SmallVector<DictionaryAttr> outAttrs;
  SmallVector<Location> outLocs;
  SmallVector<unsigned> destinations;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    if (std::optional<unsigned> arg = state.updates[index]) {
      destinations.push_back(*arg);
      continue;
    }
    destinations.push_back(numInputs + positions.size());
    auto tensorType = cast<RankedTensorType>(type);
    positions.push_back(numInputs);
    outTypes.push_back(
        MemRefType::get(tensorType.getShape(), tensorType.getElementType()));
    outAttrs.push_back(DictionaryAttr::get(context));
    outLocs.push_back(func.getLoc());
  }
  LLVM_DEBUG(llvm::dbgs() << "entry @" << func.getSymName() << ": "
                          << positions.size() << " out-params, "
                          << func.getNumResults() - positions.size()
                          << " results materialized into state arguments\n");
  if (failed(func.insertArguments(positions, outTypes, outAttrs, outLocs)))
    return func.emitOpError("cannot add the result out-params");

  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp op) { returns.push_back(op); });
  for (func::ReturnOp ret : returns) {
    OpBuilder builder(ret);
    // Outputs first: a state update overwrites its argument's buffer, which
    // an output may still have to read (the update itself, computed there).
    SmallVector<Value> stateValues;
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      Value destination = func.getArgument(destinations[index]);
      if (isa<RankedTensorType>(destination.getType()))
        continue;
      auto materialize = bufferization::MaterializeInDestinationOp::create(
          builder, ret.getLoc(), TypeRange(), value, destination);
      materialize.setWritable(true);
    }
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      Value destination = func.getArgument(destinations[index]);
      if (!isa<RankedTensorType>(destination.getType()))
        continue;
      // A state argument: the update's value becomes the argument's, in
      // its buffer (a no-op when the update was computed in place).
      stateValues.push_back(bufferization::MaterializeInDestinationOp::create(
                                builder, ret.getLoc(), destination.getType(),
                                value, destination)
                                .getResult());
    }
    func::ReturnOp::create(builder, ret.getLoc(), stateValues);
    ret.erase();
  }
  llvm::BitVector dropped(func.getNumResults(), true);
  for (auto [index, updates] : llvm::enumerate(state.updates))
    if (updates)
      dropped.reset(index);
  if (failed(func.eraseResults(dropped)))
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
      StateUpdates state = getStateUpdates(func);
      dropDTensorAttrs(func);
      if (!func.isPublic() || func.isExternal()) {
        LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName()
                                << " is not an entry (not a public "
                                   "definition): signature kept\n");
        continue;
      }
      if (failed(convertEntry(func, module, state)))
        return signalPassFailure();
    }
  }
};

} // namespace
