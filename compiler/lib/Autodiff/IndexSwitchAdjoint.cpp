//===- IndexSwitchAdjoint.cpp - The gradient of a per-class switch --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A local map whose ranks hold pieces of different sizes runs one static
// copy of its body per shape class, chosen by an scf.index_switch on the
// rank's mesh coordinate. Its adjoint is a switch on the same selector whose
// case k sweeps back through the forward's case k (recomputed) and yields
// the gradients of the values the case reads from outside, in their outer
// (dynamic) types: each rank runs the backward of the copy it ran forward.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

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

LogicalResult dtensor::autodiff::differentiateIndexSwitch(scf::IndexSwitchOp op,
                                                          Adjoints &adjoints) {
  // The active values the cases read from outside: their gradients are the
  // new switch's results.
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  SmallVector<Value> free;
  for (Value value : above)
    if (adjoints.isActive(value))
      free.push_back(value);
  if (free.empty())
    return success();
  OpBuilder &b = adjoints.builder;
  Location loc = op.getLoc();
  SmallVector<Type> types;
  for (Value value : free)
    types.push_back(value.getType());
  auto backward = scf::IndexSwitchOp::create(
      b, loc, types, op.getArg(), op.getCases(), op.getCases().size());
  for (auto [forward, region] :
       llvm::zip_equal(op->getRegions(), backward->getRegions())) {
    Block &forwardBlock = forward.front();
    Block *block = b.createBlock(&region);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    IRMapping mapping;
    SmallVector<Operation *> ops;
    for (Operation &bodyOp : forwardBlock.without_terminator())
      ops.push_back(inner.clone(bodyOp, mapping));
    SmallVector<Value> outputs;
    for (Value value : forwardBlock.getTerminator()->getOperands())
      outputs.push_back(mapping.lookupOrDefault(value));
    Adjoints local(inner);
    markActive(*block, free, outputs, local);
    for (auto [result, output] : llvm::zip_equal(op.getResults(), outputs))
      if (Value gradient = adjoints.lookup(result);
          gradient && local.isActive(output))
        local.add(loc, output, gradient);
    if (failed(reverseSweep(ops, local)))
      return failure();
    SmallVector<Value> gradients;
    for (Value value : free) {
      Value gradient = local.lookup(value);
      gradients.push_back(gradient ? gradient
                                   : createZerosLike(inner, loc, value));
    }
    scf::YieldOp::create(inner, loc, gradients);
  }
  b.setInsertionPointAfter(backward);
  for (auto [value, gradient] : llvm::zip_equal(free, backward.getResults()))
    adjoints.add(loc, value, gradient);
  return success();
}
