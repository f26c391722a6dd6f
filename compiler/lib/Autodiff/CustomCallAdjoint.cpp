//===- CustomCallAdjoint.cpp - The gradient of a custom op ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A custom op is a user's kernel: its gradient is what the user declares,
// one backward custom op per input (docs/custom-ops.md, "Gradients"), each
// called on the forward's inputs and the result's gradient. The backward
// calls carry their own strategies, so propagation shards them like any
// custom call. A custom op without a declared backward on the path to the
// loss is an error at its call: never a silent zero.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

LogicalResult dtensor::autodiff::differentiateCustomCall(CustomCallOp op,
                                                         Adjoints &adjoints) {
  Value dy = adjoints.lookup(op.getResult());
  if (!dy)
    return success();
  OpBuilder &b = adjoints.builder;
  Location loc = op.getLoc();
  ArrayAttr backward = op.getBackwardAttr();
  SmallVector<Value> operands(op.getInputs());
  operands.push_back(dy);
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    if (!adjoints.isActive(input))
      continue;
    if (!backward)
      return op.emitOpError()
             << "calls custom op '" << op.getOpName()
             << "', which declares no backward, on the path from a "
                "differentiated argument to the loss; declare its "
                "\"backward\" ops in model.custom_ops";
    auto entry = dyn_cast<DictionaryAttr>(backward[index]);
    if (!entry)
      return op.emitOpError()
             << "calls custom op '" << op.getOpName()
             << "', which declares no gradient for its input #" << index
             << ", on the path from a differentiated argument to the loss";
    auto type = cast<RankedTensorType>(input.getType());
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    auto call = CustomCallOp::create(
        b, loc, type, init, operands, entry.getAs<StringAttr>("op_name"),
        entry.getAs<StringAttr>("symbol"), entry.getAs<ArrayAttr>("strategies"),
        ArrayAttr());
    adjoints.add(loc, input, call.getResult());
  }
  return success();
}
