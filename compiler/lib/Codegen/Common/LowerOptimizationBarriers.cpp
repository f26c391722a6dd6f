//===- LowerOptimizationBarriers.cpp - Barriers replaced by operands ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_LOWEROPTIMIZATIONBARRIERS
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-lower-optimization-barriers"

using namespace mlir;
using namespace dtensor;

namespace {

struct LowerOptimizationBarriers
    : dtensor::codegen::impl::LowerOptimizationBarriersBase<
          LowerOptimizationBarriers> {
  void runOnOperation() override {
    SmallVector<OptimizationBarrierOp> barriers;
    getOperation().walk(
        [&](OptimizationBarrierOp op) { barriers.push_back(op); });
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": replacing " << barriers.size()
                            << " barrier(s) by their operands\n");
    for (OptimizationBarrierOp op : barriers) {
      op.getResult().replaceAllUsesWith(op.getInput());
      op.erase();
    }
  }
};

} // namespace
