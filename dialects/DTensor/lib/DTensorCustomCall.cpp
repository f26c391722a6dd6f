//===- DTensorCustomCall.cpp - dtensor.custom_call ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks a custom call's strategies against its operands: each strategy is
// one placement for the result and one per input, and every shard dim lies
// in the rank of the tensor it shards.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor;

LogicalResult CustomCallOp::verify() {
  if (getOpName().empty())
    return emitOpError() << "needs a non-empty op name";
  if (getSymbol().empty())
    return emitOpError() << "needs a non-empty symbol";
  ArrayAttr strategies = getStrategiesAttr();
  if (!strategies)
    return success();
  if (strategies.empty())
    return emitOpError() << "has an empty strategy list; leave out "
                            "'strategies' to run the op replicated";
  size_t arity = getInputs().size();
  for (auto [index, entry] : llvm::enumerate(strategies)) {
    auto placements = dyn_cast<ArrayAttr>(entry);
    if (!placements)
      return emitOpError() << "strategy #" << index
                           << " is not a list of placements";
    if (placements.size() != arity + 1)
      return emitOpError() << "strategy #" << index << " has "
                           << placements.size() << " placements; expected "
                           << arity + 1
                           << " (the result's, then one per input)";
    for (auto [position, attr] : llvm::enumerate(placements)) {
      auto placement = dyn_cast<PlacementAttr>(attr);
      if (!placement)
        return emitOpError() << "strategy #" << index << " entry #" << position
                             << " is not a placement";
      layout::Placement value = placement.getPlacement();
      if (!value.isShard())
        continue;
      auto type = cast<RankedTensorType>(
          position == 0 ? getResult().getType()
                        : getInputs()[position - 1].getType());
      int64_t rank = type.getRank();
      int64_t dim = value.dim;
      if (dim < -rank || dim >= rank)
        return emitOpError()
               << "strategy #" << index << " shards dim " << dim << " of "
               << (position == 0 ? std::string("the result")
                                 : "input #" + std::to_string(position - 1))
               << ", which has rank " << rank;
    }
  }
  return success();
}
