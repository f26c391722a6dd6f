//===- ReassociateSums.cpp - Float sums that LLVM may vectorise -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LLVM vectorises a float reduction loop only when the additions may be
// reassociated: without that, a softmax's or a norm's row sum runs one
// element at a time. Marking the accumulating addf of each linalg reduction
// `reassoc` lets the loop vectoriser keep several partial sums.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUREASSOCIATESUMS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-reassociate-sums"

using namespace mlir;

namespace {

/// Marks the addf that accumulates `result` of `op` with reassoc: the
/// yielded value that adds anything to the result's own output block
/// argument.
void markAccumulation(linalg::GenericOp op, unsigned result) {
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto add = yield.getOperand(result).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != op.getBody()) {
    LLVM_DEBUG(llvm::dbgs()
               << "result #" << result << " of the reduction at " << op.getLoc()
               << " is not accumulated by an addf of its body\n");
    return;
  }
  Value acc = op.getMatchingBlockArgument(op.getDpsInitOperand(result));
  if (add.getLhs() != acc && add.getRhs() != acc) {
    LLVM_DEBUG(llvm::dbgs()
               << "result #" << result << " of the reduction at " << op.getLoc()
               << ": the yielded addf does not add to the "
                  "accumulator\n");
    return;
  }
  LLVM_DEBUG(llvm::dbgs() << "marking reassoc the addf accumulating result #"
                          << result << " of the reduction at " << op.getLoc()
                          << "\n");
  add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
}

struct CpuReassociateSums
    : dtensor::codegen::impl::CpuReassociateSumsBase<CpuReassociateSums> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i)
        markAccumulation(op, i);
    });
  }
};

} // namespace
