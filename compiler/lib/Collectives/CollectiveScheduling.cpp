//===- CollectiveScheduling.cpp - where collectives may move ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers of the fusion phases: which ops a collective must not cross, where
// the values an op needs are defined and where its results are first used.
//
//===----------------------------------------------------------------------===//

#include "FuseCollectives.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

bool dtensor::isIssuedAsync(Operation *op) {
  return isa_and_nonnull<StartOp>(op->getParentOp());
}

bool dtensor::isCommunicationBarrier(Operation *op) {
  if (isa<StartOp>(op))
    return false;
  if (isa<CallOpInterface>(op))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  return op
      ->walk([](Operation *nested) {
        if (nested->hasTrait<Collective>() || isa<CallOpInterface>(nested))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

Operation *dtensor::findLastOperandDefinition(Operation *op) {
  Block *block = op->getBlock();
  Operation *last = nullptr;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      // Block arguments are available at the start of their block, and
      // arguments of blocks nested in `op` are defined by `op` itself.
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*def);
      if (!ancestor || ancestor == op)
        continue;
      if (!last || last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  });
  return last;
}

Operation *dtensor::findFirstUserInBlock(Operation *op) {
  Block *block = op->getBlock();
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    // A use in another block (a successor) needs the value before this
    // block is left.
    if (!ancestor) {
      if (!block->mightHaveTerminator())
        continue;
      ancestor = block->getTerminator();
    }
    if (!first || ancestor->isBeforeInBlock(first))
      first = ancestor;
  }
  return first;
}

bool dtensor::usesResultOf(Operation *op,
                           const llvm::SmallPtrSetImpl<Operation *> &ops) {
  Block *block = op->getBlock();
  return op
      ->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def)
            continue;
          Operation *ancestor = block->findAncestorOpInBlock(*def);
          if (ancestor && ancestor != op && ops.contains(ancestor))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      })
      .wasInterrupted();
}

Operation *dtensor::createVariadicCollectiveLike(OpBuilder &builder,
                                                 Location loc, Operation *like,
                                                 ValueRange inputs,
                                                 TypeRange resultTypes) {
  return llvm::TypeSwitch<Operation *, Operation *>(like)
      .Case([&](AllReduceOp op) {
        return AllReduceOp::create(builder, loc, resultTypes, inputs,
                                   op.getReduction(), op.getMesh(),
                                   op.getMeshDims());
      })
      .Case([&](AllGatherOp op) {
        return AllGatherOp::create(builder, loc, resultTypes, inputs,
                                   op.getGatherDim(), op.getMesh(),
                                   op.getMeshDims());
      })
      .Case([&](ReduceScatterOp op) {
        return ReduceScatterOp::create(builder, loc, resultTypes, inputs,
                                       op.getReduction(), op.getScatterDim(),
                                       op.getMesh(), op.getMeshDims());
      });
}
