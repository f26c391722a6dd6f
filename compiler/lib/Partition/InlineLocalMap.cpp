//===- InlineLocalMap.cpp - a dtensor.local_map's body, per rank ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A local map's body is already the per-rank code: partitioning puts it in
// place of the op, its arguments bound to the rank's pieces of the inputs
// and the op's results to the pieces its dtensor.yield returns.
//
//===----------------------------------------------------------------------===//

#include "PartitionState.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace dtensor;

LogicalResult dtensor::partitionLocalMap(LocalMapOp op,
                                         PartitionState &state) {
  Block &body = op.getBody().front();
  IRMapping mapping;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    // Propagation gave every input its input layout; the input's local
    // type is then the body's argument type (the verifier checked the
    // latter against the layout).
    const GlobalValue *global = state.lookup(input);
    std::vector<layout::Placement> wanted =
        op.getInLayout(index)
            .getNormalized(cast<RankedTensorType>(input.getType()).getRank())
            .getLayoutPlacements();
    if (!global || global->placements != wanted)
      return op.emitOpError()
             << "input #" << index << " is laid out as "
             << (global ? layout::str(global->placements) : "nothing")
             << ", but the local map takes it as " << layout::str(wanted)
             << "; run --dtensor-propagate before --dtensor-partition";
    mapping.map(body.getArgument(index), input);
  }
  OpBuilder builder(op);
  for (Operation &inner : body.without_terminator())
    builder.clone(inner, mapping);
  SmallVector<Value> results;
  for (Value value : op.getYield().getValues())
    results.push_back(mapping.lookupOrDefault(value));
  state.replaceOp(op, results);
  return success();
}
