//===- LowerStepSeed.cpp - step_seed to a runtime call --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_LOWERSTEPSEED
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-lower-step-seed"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

struct LowerStepSeed
    : dtensor::codegen::impl::LowerStepSeedBase<LowerStepSeed> {
  void runOnOperation() override {
    SmallVector<StepSeedOp> seeds;
    getOperation().walk([&](StepSeedOp op) { seeds.push_back(op); });
    for (StepSeedOp op : seeds) {
      LLVM_DEBUG(llvm::dbgs() << "lowering the step seed at " << op.getLoc()
                              << " to a dtensor_rt_step_seed call\n");
      OpBuilder builder(op);
      Value seed = callRuntime(builder, op.getLoc(), "dtensor_rt_step_seed",
                               builder.getI64Type(), {})
                       .getResult(0);
      op.getSeed().replaceAllUsesWith(seed);
      op.erase();
    }
  }
};

} // namespace
