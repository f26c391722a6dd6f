//===- LowerStepSeed.cpp - step_seed to a runtime call --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_LOWERSTEPSEED
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

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
