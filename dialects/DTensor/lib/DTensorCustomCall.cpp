//===- DTensorCustomCall.cpp - dtensor.custom_call ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks a custom call's strategies against its operands: each strategy is
// one placement for the result and one per input, and every shard dim lies
// in the rank of the tensor it shards. A declared backward names, for each
// input, the custom op of its gradient, whose strategies are checked the
// same way against the types that op will have: the input's as result, then
// this op's inputs and result.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor;

/// Checks `strategies` of a call whose result has type `types[0]` and whose
/// input i has type `types[i + 1]`; `what` prefixes each message.
static LogicalResult verifyStrategies(CustomCallOp op, ArrayAttr strategies,
                                      ArrayRef<Type> types,
                                      const std::string &what) {
  if (strategies.empty())
    return op.emitOpError() << what
                            << "has an empty strategy list; leave out "
                               "'strategies' to run the op replicated";
  size_t arity = types.size() - 1;
  for (auto [index, entry] : llvm::enumerate(strategies)) {
    auto placements = dyn_cast<ArrayAttr>(entry);
    if (!placements)
      return op.emitOpError()
             << what << "strategy #" << index << " is not a list of placements";
    if (placements.size() != arity + 1)
      return op.emitOpError()
             << what << "strategy #" << index << " has " << placements.size()
             << " placements; expected " << arity + 1
             << " (the result's, then one per input)";
    for (auto [position, attr] : llvm::enumerate(placements)) {
      auto placement = dyn_cast<PlacementAttr>(attr);
      if (!placement)
        return op.emitOpError() << what << "strategy #" << index << " entry #"
                                << position << " is not a placement";
      layout::Placement value = placement.getPlacement();
      if (!value.isShard())
        continue;
      int64_t rank = cast<RankedTensorType>(types[position]).getRank();
      int64_t dim = value.dim;
      if (dim < -rank || dim >= rank)
        return op.emitOpError()
               << what << "strategy #" << index << " shards dim " << dim
               << " of "
               << (position == 0 ? std::string("the result")
                                 : "input #" + std::to_string(position - 1))
               << ", which has rank " << rank;
    }
  }
  return success();
}

/// Checks the backward entry of input `input`: unit, or a dictionary of a
/// non-empty op_name and symbol and optional strategies.
static LogicalResult verifyBackwardEntry(CustomCallOp op, Attribute entry,
                                         unsigned input) {
  if (isa<UnitAttr>(entry))
    return success();
  std::string what = "backward of input #" + std::to_string(input) + ": ";
  auto dictionary = dyn_cast<DictionaryAttr>(entry);
  if (!dictionary)
    return op.emitOpError()
           << what
           << "expected unit (no gradient) or a dictionary {op_name, "
              "symbol, strategies?}";
  for (NamedAttribute member : dictionary)
    if (!llvm::is_contained({"op_name", "symbol", "strategies"},
                            member.getName().strref()))
      return op.emitOpError()
             << what << "unknown member '" << member.getName().strref() << "'";
  for (llvm::StringRef key : {"op_name", "symbol"}) {
    auto text = dictionary.getAs<StringAttr>(key);
    if (!text || text.getValue().empty())
      return op.emitOpError()
             << what << "needs a non-empty string '" << key << "'";
  }
  Attribute strategies = dictionary.get("strategies");
  if (!strategies)
    return success();
  auto list = dyn_cast<ArrayAttr>(strategies);
  if (!list)
    return op.emitOpError() << what << "'strategies' is not a list";
  // The backward op's types: the input's gradient, then this op's inputs
  // and the result's gradient.
  SmallVector<Type> types{op.getInputs()[input].getType()};
  llvm::append_range(types, op.getInputs().getTypes());
  types.push_back(op.getResult().getType());
  return verifyStrategies(op, list, types, what);
}

LogicalResult CustomCallOp::verify() {
  if (getOpName().empty())
    return emitOpError() << "needs a non-empty op name";
  if (getSymbol().empty())
    return emitOpError() << "needs a non-empty symbol";
  if (ArrayAttr strategies = getStrategiesAttr()) {
    SmallVector<Type> types{getResult().getType()};
    llvm::append_range(types, getInputs().getTypes());
    if (failed(verifyStrategies(*this, strategies, types, "")))
      return failure();
  }
  ArrayAttr backward = getBackwardAttr();
  if (!backward)
    return success();
  if (backward.size() != getInputs().size())
    return emitOpError() << "has " << backward.size()
                         << " backward entries; expected one per input ("
                         << getInputs().size() << ")";
  for (auto [input, entry] : llvm::enumerate(backward))
    if (failed(verifyBackwardEntry(*this, entry, input)))
      return failure();
  return success();
}
