//===- CollectiveOverlap.cpp - overlap collectives --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Splits each collective into dtensor.start, issued as soon as its operands
// exist, and dtensor.wait, placed right before the first use of a result, so
// that the ops in between run while the collective communicates.
//
//===----------------------------------------------------------------------===//

#include "FuseCollectives.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "llvm/Support/Debug.h"

// A phase of --dtensor-fuse-collectives.
#define DEBUG_TYPE "dtensor-fuse-collectives"

using namespace mlir;
using namespace dtensor;

/// The op before which the start of `collective` goes: as early as its
/// operands allow, but below every earlier start (collectives are issued in
/// program order; the earlier ones are already split) and every op a
/// collective must not cross.
static Operation *findIssuePoint(Operation *collective) {
  Operation *lastDefinition = findLastOperandDefinition(collective);
  Operation *point = collective;
  for (Operation *prev = collective->getPrevNode();
       prev && prev != lastDefinition; prev = prev->getPrevNode()) {
    if (isa<StartOp>(prev) || isCommunicationBarrier(prev))
      break;
    point = prev;
  }
  return point;
}

/// Wraps `collective` into a dtensor.start placed before `issuePoint` and a
/// dtensor.wait before the first user of its results.
static void splitIntoStartAndWait(Operation *collective,
                                  Operation *issuePoint) {
  Block *block = collective->getBlock();
  Location loc = collective->getLoc();
  OpBuilder builder(collective->getContext());

  SmallVector<Type> futureTypes;
  for (Type type : collective->getResultTypes())
    futureTypes.push_back(FutureType::get(cast<RankedTensorType>(type)));
  builder.setInsertionPoint(issuePoint);
  auto start = StartOp::create(builder, loc, futureTypes);

  Operation *firstUser = findFirstUserInBlock(collective);
  LLVM_DEBUG({
    llvm::dbgs() << "overlap: '" << collective->getName() << "' at " << loc
                 << " starts before '" << issuePoint->getName() << "' at "
                 << issuePoint->getLoc() << ", waits ";
    if (firstUser)
      llvm::dbgs() << "before '" << firstUser->getName() << "' at "
                   << firstUser->getLoc() << "\n";
    else
      llvm::dbgs() << "at the end of its block (no user in it)\n";
  });
  if (firstUser)
    builder.setInsertionPoint(firstUser);
  else if (block->mightHaveTerminator())
    builder.setInsertionPoint(block->getTerminator());
  else
    builder.setInsertionPointToEnd(block);
  auto wait = WaitOp::create(builder, loc, start.getFutures());
  collective->replaceAllUsesWith(wait.getResults());

  Block *body = builder.createBlock(&start.getBody());
  collective->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  YieldOp::create(builder, loc, collective->getResults());
}

unsigned dtensor::overlapCollectives(Block &block) {
  SmallVector<Operation *> collectives;
  for (Operation &op : block)
    if (op.hasTrait<Collective>())
      collectives.push_back(&op);
  // In program order, so that each start lands below the earlier ones.
  for (Operation *collective : collectives)
    splitIntoStartAndWait(collective, findIssuePoint(collective));
  return collectives.size();
}
