//===- ClampExp.cpp - exp's zero and infinity without the slow path -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// glibc's vector exp computes the lanes outside its fast range (such as the
// -inf of a causal attention mask) one by one with the scalar exp, which also
// sets errno: 45% of the step of a one-layer block on 2048 tokens. Results
// that would be denormal or zero become zero, and those that overflow +inf,
// without calling exp for them.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/Support/Debug.h"

#include <limits>

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUCLAMPEXP
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-clamp-exp"

using namespace mlir;

namespace {

/// Arguments below `low` get 0, above `high` +inf. exp(low) is just above
/// the smallest normal number (1.2e-38 for f32, 2.2e-308 for f64): smaller
/// results, denormals that the vector exp computes on its slow path, are
/// flushed to zero, an absolute change of less than 1.7e-38 (f32) or
/// 3.4e-308 (f64). exp overflows above 88.72 (f32) and 709.78 (f64).
struct ExpRange {
  double low, high;
};

std::optional<ExpRange> getExpRange(Type type) {
  if (type.isF32())
    return ExpRange{-87.0, 89.0};
  if (type.isF64())
    return ExpRange{-708.0, 710.0};
  return std::nullopt;
}

void clampExp(math::ExpOp exp) {
  Type type = exp.getType();
  std::optional<ExpRange> range = getExpRange(type);
  if (!range) {
    LLVM_DEBUG(llvm::dbgs() << "keeping the exp at " << exp.getLoc() << ": "
                            << type << " is neither f32 nor f64\n");
    return;
  }
  LLVM_DEBUG(llvm::dbgs() << "clamping the " << type << " exp at "
                          << exp.getLoc() << " to [" << range->low << ", "
                          << range->high << "]\n");
  OpBuilder b(exp);
  Location loc = exp.getLoc();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  };
  Value x = exp.getOperand();
  Value low = constant(range->low), high = constant(range->high);
  Value below =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, low);
  Value above =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, high);
  // exp gets the argument clamped into [low, high], whose results are on
  // the fast path. A select (0 for arguments outside) would not do: LLVM
  // folds exp(select(c, 0, x)) into select(c, 1, exp(x)), which calls exp
  // on the original argument again. maximumf and minimumf propagate NaN,
  // and the comparisons are false for it, so exp(NaN) stays NaN.
  Value clamped = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, low), high);
  Value result = math::ExpOp::create(b, loc, clamped, exp.getFastmath());
  result = arith::SelectOp::create(
      b, loc, above, constant(std::numeric_limits<double>::infinity()), result);
  result = arith::SelectOp::create(b, loc, below, constant(0.0), result);
  exp.replaceAllUsesWith(result);
  exp.erase();
}

struct CpuClampExp : dtensor::codegen::impl::CpuClampExpBase<CpuClampExp> {
  void runOnOperation() override {
    SmallVector<math::ExpOp> exps;
    getOperation().walk([&](math::ExpOp exp) { exps.push_back(exp); });
    for (math::ExpOp exp : exps)
      clampExp(exp);
  }
};

} // namespace
