//===- SharedReciprocals.cpp - One division for several by a divisor -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The gradients of sigmoid and SiLU divide several values by the same
// 1 + exp(-x); a vector division costs about ten multiplications, so SiLU's
// backward loop was bound by its three divisions. LLVM does this rewrite
// only under `arcp`, which nothing sets; doing it here keeps the rest of
// the arithmetic exact as written.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUSHAREDRECIPROCALS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-shared-reciprocals"

using namespace mlir;

namespace {

/// Whether `div` may divide through a shared reciprocal: f32 or f64
/// elements, a divisor that is not a constant.
bool isCandidate(arith::DivFOp div) {
  Type element = getElementTypeOrSelf(div.getType());
  return (element.isF32() || element.isF64()) &&
         !matchPattern(div.getRhs(), m_Constant());
}

/// Rewrites the divisions of `block` that share a divisor; returns how
/// many became multiplications.
int64_t shareReciprocals(Block &block) {
  // Divisor -> its divisions, in block order (the first is where the
  // reciprocal goes: the divisor dominates it).
  llvm::MapVector<Value, SmallVector<arith::DivFOp>> byDivisor;
  for (Operation &op : block)
    if (auto div = dyn_cast<arith::DivFOp>(op); div && isCandidate(div))
      byDivisor[div.getRhs()].push_back(div);
  int64_t rewritten = 0;
  for (auto &[divisor, divisions] : byDivisor) {
    if (divisions.size() < 2)
      continue;
    OpBuilder builder(divisions.front());
    Location loc = divisions.front().getLoc();
    Type type = divisor.getType();
    Value one =
        arith::ConstantOp::create(builder, loc, type, builder.getOneAttr(type));
    Value reciprocal = arith::DivFOp::create(builder, loc, one, divisor);
    for (arith::DivFOp div : divisions) {
      builder.setInsertionPoint(div);
      Value product = arith::MulFOp::create(builder, div.getLoc(), div.getLhs(),
                                            reciprocal, div.getFastmath());
      div.replaceAllUsesWith(product);
      div.erase();
    }
    rewritten += divisions.size();
  }
  return rewritten;
}

struct CpuSharedReciprocals
    : dtensor::codegen::impl::CpuSharedReciprocalsBase<CpuSharedReciprocals> {
  void runOnOperation() override {
    int64_t rewritten = 0;
    getOperation().walk(
        [&](Block *block) { rewritten += shareReciprocals(*block); });
    LLVM_DEBUG(if (rewritten) llvm::dbgs()
               << "@" << getOperation().getSymName() << ": " << rewritten
               << " divisions through shared reciprocals\n");
  }
};

} // namespace
