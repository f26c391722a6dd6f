//===- ReverseSweep.cpp - Which values need gradients, and the sweep ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The two halves of reverse mode over one block, shared by the gradient
// function and by the bodies of a local map and of its switch over shape
// classes: the activity analysis (a value needs a gradient when it varies
// with a differentiated value and an output depends on it) and the sweep
// that applies each op's rule from the outputs back.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dtensor-differentiate"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

bool dtensor::autodiff::isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// The values `op` reads: its operands and, for an op with regions that
/// are not isolated (a local map's switch over shape classes), the values
/// its regions read from outside.
static SmallVector<Value> readValues(Operation &op) {
  SmallVector<Value> values(op.getOperands());
  if (op.getNumRegions() && !op.hasTrait<OpTrait::IsIsolatedFromAbove>()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op.getRegions(), captured);
    values.append(captured.begin(), captured.end());
  }
  return values;
}

// The result of an op marked dtensor.shift does not change the function (a
// softmax's row max): it does not vary, so no gradient flows through it,
// where the reverse sweep would otherwise compute one that is zero.
llvm::DenseSet<Value> dtensor::autodiff::variedValues(Block &block,
                                                      ArrayRef<Value> wrt) {
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  for (Operation &op : block.without_terminator())
    if (!op.hasAttr(DTensorDialect::getShiftAttrName()) &&
        llvm::any_of(readValues(op),
                     [&](Value operand) { return varied.contains(operand); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  return varied;
}

void dtensor::autodiff::markActive(Block &block, ArrayRef<Value> wrt,
                                   ArrayRef<Value> outputs,
                                   Adjoints &adjoints) {
  llvm::DenseSet<Value> varied = variedValues(block, wrt);
  llvm::DenseSet<Value> useful(outputs.begin(), outputs.end());
  for (Operation &op : llvm::reverse(block.without_terminator()))
    if (llvm::any_of(op.getResults(),
                     [&](Value result) { return useful.contains(result); }))
      for (Value operand : readValues(op))
        useful.insert(operand);
  for (Value value : varied)
    if (useful.contains(value))
      adjoints.active.insert(value);
}

LogicalResult dtensor::autodiff::reverseSweep(ArrayRef<Operation *> ops,
                                              Adjoints &adjoints) {
  for (Operation *op : llvm::reverse(ops)) {
    if (llvm::none_of(op->getResults(), [&](Value result) {
          return adjoints.isActive(result) && adjoints.lookup(result);
        }))
      continue;
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": adjoint of '" << op->getName()
                            << "' at " << op->getLoc() << "\n");
    LogicalResult status = failure();
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      status = differentiateGeneric(generic, adjoints);
    else if (auto attention = dyn_cast<AttentionOp>(op))
      status = differentiateAttention(attention, adjoints);
    else if (auto custom = dyn_cast<CustomCallOp>(op))
      status = differentiateCustomCall(custom, adjoints);
    else if (auto localMap = dyn_cast<LocalMapOp>(op))
      status = differentiateLocalMap(localMap, adjoints);
    else if (auto indexSwitch = dyn_cast<scf::IndexSwitchOp>(op))
      status = differentiateIndexSwitch(indexSwitch, adjoints);
    else
      status = differentiateDataOp(op, adjoints);
    if (failed(status))
      return failure();
  }
  return success();
}

Value dtensor::autodiff::createZerosLike(OpBuilder &b, Location loc,
                                         Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  Type element = type.getElementType();
  if (type.hasStaticShape())
    return builders::createFilled(b, loc, type.getShape(), element,
                                  b.getFloatAttr(element, 0));
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, like), element);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

FailureOr<SmallVector<Value>>
dtensor::autodiff::sweepBody(OpBuilder &builder, Location loc, Block &body,
                             IRMapping &mapping, ArrayRef<Value> seeds,
                             ArrayRef<Value> wrt) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(builder.clone(op, mapping));
  SmallVector<Value> outputs;
  for (Value value : body.getTerminator()->getOperands())
    outputs.push_back(mapping.lookupOrDefault(value));
  Block &block = *builder.getInsertionBlock();
  Adjoints adjoints(builder);
  markActive(block, wrt, outputs, adjoints);
  for (auto [output, seed] : llvm::zip_equal(outputs, seeds))
    if (seed && adjoints.isActive(output))
      adjoints.add(loc, output, seed);
  if (failed(reverseSweep(ops, adjoints)))
    return failure();
  SmallVector<Value> gradients;
  for (Value value : wrt) {
    Value gradient = adjoints.lookup(value);
    gradients.push_back(gradient ? gradient
                                 : createZerosLike(builder, loc, value));
  }
  return gradients;
}
