//===- NativeMinMax.cpp - Float min and max as LLVM intrinsics ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// arith-expand (which the pipeline needs for ceil/floor divisions and bf16)
// also rewrites every float min and max as compares and selects. LLVM's
// loop vectoriser does not see a reduction in that form, so a row max over
// a loop stayed scalar; its intrinsics it vectorises. Rewriting f32 and f64
// min/max first keeps them out of arith-expand's reach.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUNATIVEMINMAX
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-native-min-max"

using namespace mlir;

namespace {

/// Whether LLVM's x86 backend lowers the intrinsic on `type` (f32 or f64
/// elements; half types are left to arith-expand).
bool hasNativeIntrinsic(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isF32() || element.isF64();
}

/// Replaces `op` (lhs, rhs) by the LLVM intrinsic `Intrinsic` on the same
/// operands; fast-math flags are not carried (they only permit changes).
template <typename Intrinsic, typename ArithOp>
bool replaceWithIntrinsic(ArithOp op) {
  if (!hasNativeIntrinsic(op.getType()))
    return false;
  OpBuilder builder(op);
  Value result = Intrinsic::create(builder, op.getLoc(), op.getType(),
                                   op.getLhs(), op.getRhs());
  op.replaceAllUsesWith(result);
  op.erase();
  return true;
}

struct CpuNativeMinMax
    : dtensor::codegen::impl::CpuNativeMinMaxBase<CpuNativeMinMax> {
  void runOnOperation() override {
    int64_t rewritten = 0;
    getOperation().walk([&](Operation *op) {
      bool done = llvm::TypeSwitch<Operation *, bool>(op)
                      .Case([](arith::MaximumFOp max) {
                        return replaceWithIntrinsic<LLVM::MaximumOp>(max);
                      })
                      .Case([](arith::MinimumFOp min) {
                        return replaceWithIntrinsic<LLVM::MinimumOp>(min);
                      })
                      .Case([](arith::MaxNumFOp max) {
                        return replaceWithIntrinsic<LLVM::MaxNumOp>(max);
                      })
                      .Case([](arith::MinNumFOp min) {
                        return replaceWithIntrinsic<LLVM::MinNumOp>(min);
                      })
                      .Default([](Operation *) { return false; });
      rewritten += done;
    });
    LLVM_DEBUG(if (rewritten) llvm::dbgs()
               << "@" << getOperation().getSymName() << ": " << rewritten
               << " float min/max ops as LLVM intrinsics\n");
  }
};

} // namespace
