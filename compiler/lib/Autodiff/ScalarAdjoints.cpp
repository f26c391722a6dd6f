//===- ScalarAdjoints.cpp - Reverse mode over a linalg body ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The adjoints of the scalar ops of linalg bodies, computed in the adjoint
// generic's body from the cloned forward values. Integer ops, comparisons
// and conversions from integers carry no gradient.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace dtensor::autodiff;

namespace {

Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  return arith::ConstantOp::create(b, loc,
                                   b.getFloatAttr(like.getType(), value));
}

/// Adds the adjoint `gradient` to `value`'s in `adjoints` (scalars).
void accumulate(OpBuilder &b, Location loc, DenseMap<Value, Value> &adjoints,
                Value value, Value gradient) {
  if (!isa<FloatType>(value.getType()))
    return;
  Value &slot = adjoints[value];
  slot = slot ? arith::AddFOp::create(b, loc, slot, gradient).getResult()
              : gradient;
}

/// The adjoints of `op`'s float operands given `a`, the adjoint of its
/// result; `x` are its operands and `r` its result in the new block. Fails
/// when `op` has no rule.
LogicalResult reverse(OpBuilder &b, Location loc, Operation *op,
                      ArrayRef<Value> x, Value r, Value a,
                      SmallVectorImpl<std::pair<unsigned, Value>> &out) {
  auto mul = [&](Value lhs, Value rhs) -> Value {
    return arith::MulFOp::create(b, loc, lhs, rhs);
  };
  auto neg = [&](Value value) -> Value {
    return arith::NegFOp::create(b, loc, value);
  };
  auto zero = [&]() { return constantLike(b, loc, a, 0); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::AddFOp>([&](auto) {
        out.push_back({0, a});
        out.push_back({1, a});
        return success();
      })
      .Case<arith::SubFOp>([&](auto) {
        out.push_back({0, a});
        out.push_back({1, neg(a)});
        return success();
      })
      .Case<arith::MulFOp>([&](auto) {
        out.push_back({0, mul(a, x[1])});
        out.push_back({1, mul(a, x[0])});
        return success();
      })
      .Case<arith::DivFOp>([&](auto) {
        // d(x / y) = dx / y - (x / y) dy / y.
        out.push_back({0, arith::DivFOp::create(b, loc, a, x[1])});
        out.push_back({1, neg(arith::DivFOp::create(b, loc, mul(a, r), x[1]))});
        return success();
      })
      .Case<arith::NegFOp>([&](auto) {
        out.push_back({0, neg(a)});
        return success();
      })
      .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
            arith::MinNumFOp>([&](Operation *minMax) {
        // The operand that was chosen (the first one on a tie) gets it all.
        bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(minMax);
        Value first = arith::CmpFOp::create(b, loc,
                                            isMax ? arith::CmpFPredicate::OGE
                                                  : arith::CmpFPredicate::OLE,
                                            x[0], x[1]);
        out.push_back({0, arith::SelectOp::create(b, loc, first, a, zero())});
        out.push_back({1, arith::SelectOp::create(b, loc, first, zero(), a)});
        return success();
      })
      .Case<arith::SelectOp>([&](auto) {
        out.push_back({1, arith::SelectOp::create(b, loc, x[0], a, zero())});
        out.push_back({2, arith::SelectOp::create(b, loc, x[0], zero(), a)});
        return success();
      })
      .Case<math::ExpOp>([&](auto) {
        out.push_back({0, mul(a, r)});
        return success();
      })
      .Case<math::LogOp>([&](auto) {
        out.push_back({0, arith::DivFOp::create(b, loc, a, x[0])});
        return success();
      })
      .Case<math::SqrtOp>([&](auto) {
        // d sqrt(x) = dx / (2 sqrt(x)).
        out.push_back(
            {0, arith::DivFOp::create(
                    b, loc, mul(a, constantLike(b, loc, a, 0.5)), r)});
        return success();
      })
      .Case<math::RsqrtOp>([&](auto) {
        // d x^-1/2 = -1/2 x^-3/2 dx = -1/2 r^3 dx.
        Value cube = mul(mul(r, r), r);
        out.push_back({0, mul(mul(a, constantLike(b, loc, a, -0.5)), cube)});
        return success();
      })
      .Case<math::TanhOp>([&](auto) {
        Value one = constantLike(b, loc, a, 1);
        out.push_back(
            {0, mul(a, arith::SubFOp::create(b, loc, one, mul(r, r)))});
        return success();
      })
      .Case<math::ErfOp>([&](auto) {
        // d erf(x) = 2 / sqrt(pi) exp(-x^2) dx.
        Value square = mul(x[0], x[0]);
        Value gauss = math::ExpOp::create(b, loc, neg(square));
        out.push_back(
            {0, mul(mul(a, constantLike(b, loc, a, 2.0 / std::sqrt(M_PI))),
                    gauss)});
        return success();
      })
      .Case<math::PowFOp>([&](auto) {
        // d x^y = y x^(y-1) dx + x^y log(x) dy.
        Value one = constantLike(b, loc, a, 1);
        Value lower = math::PowFOp::create(
            b, loc, x[0], arith::SubFOp::create(b, loc, x[1], one));
        out.push_back({0, mul(mul(a, x[1]), lower)});
        out.push_back({1, mul(mul(a, r), math::LogOp::create(b, loc, x[0]))});
        return success();
      })
      .Case<math::SinOp>([&](auto) {
        out.push_back({0, mul(a, math::CosOp::create(b, loc, x[0]))});
        return success();
      })
      .Case<math::CosOp>([&](auto) {
        out.push_back({0, neg(mul(a, math::SinOp::create(b, loc, x[0])))});
        return success();
      })
      .Case<math::AbsFOp>([&](auto) {
        Value positive = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGE, x[0], zero());
        out.push_back(
            {0, arith::SelectOp::create(b, loc, positive, a, neg(a))});
        return success();
      })
      .Case<arith::ExtFOp>([&](auto) {
        out.push_back({0, arith::TruncFOp::create(b, loc, x[0].getType(), a)});
        return success();
      })
      .Case<arith::TruncFOp>([&](auto) {
        out.push_back({0, arith::ExtFOp::create(b, loc, x[0].getType(), a)});
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "has no gradient rule (needed to differentiate the "
                  "enclosing linalg op)";
      });
}

/// True when `op` carries no gradient whatever its operands.
bool isConstantOp(Operation *op) {
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return true; // integer, index and comparison results
  return isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp,
             linalg::IndexOp>(op);
}

} // namespace

FailureOr<Value> dtensor::autodiff::scalarAdjoint(
    OpBuilder &b, Location loc, Block &body, const IRMapping &mapping,
    ArrayRef<std::pair<Value, Value>> seeds, Value wrt) {
  DenseMap<Value, Value> adjoints;
  for (auto [value, seed] : seeds)
    accumulate(b, loc, adjoints, value, seed);
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (isConstantOp(&op))
      continue;
    Value a = adjoints.lookup(op.getResult(0));
    if (!a)
      continue;
    SmallVector<Value> x;
    for (Value operand : op.getOperands())
      x.push_back(mapping.lookupOrDefault(operand));
    SmallVector<std::pair<unsigned, Value>> out;
    if (failed(
            reverse(b, loc, &op, x, mapping.lookup(op.getResult(0)), a, out)))
      return failure();
    for (auto [index, gradient] : out) {
      Value operand = op.getOperand(index);
      // Values from outside the body are constants of the loop nest.
      if (operand.getParentBlock() != &body)
        continue;
      accumulate(b, loc, adjoints, operand, gradient);
    }
  }
  return adjoints.lookup(wrt);
}
