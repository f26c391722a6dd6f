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

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

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
  SmallVector<Value> seeds;
  for (Value result : op.getResults())
    seeds.push_back(adjoints.lookup(result));
  SmallVector<Type> types;
  for (Value value : free)
    types.push_back(value.getType());
  auto backward = scf::IndexSwitchOp::create(
      b, loc, types, op.getArg(), op.getCases(), op.getCases().size());
  for (auto [forward, region] :
       llvm::zip_equal(op->getRegions(), backward->getRegions())) {
    b.createBlock(&region);
    OpBuilder inner = OpBuilder::atBlockEnd(&region.front());
    IRMapping mapping;
    FailureOr<SmallVector<Value>> gradients =
        sweepBody(inner, loc, forward.front(), mapping, seeds, free);
    if (failed(gradients))
      return failure();
    scf::YieldOp::create(inner, loc, *gradients);
  }
  b.setInsertionPointAfter(backward);
  for (auto [value, gradient] : llvm::zip_equal(free, backward.getResults()))
    adjoints.add(loc, value, gradient);
  return success();
}
