//===- SoftmaxBuilder.cpp - Softmax as reductions in f32 ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Written as reductions rather than linalg.softmax, whose normalized dim
// cannot be sharded: a max (maximumf, from -inf), then a sum of exp(x - max)
// (addf, from 0), then an elementwise op. Softmax keeps exp(x - max) in a
// tensor of its own: exp is computed once per element, and the sum is a
// plain reduction that vectorises.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;

Value builders::createRowMax(OpBuilder &b, Location loc, Value x, int64_t dim) {
  auto type = cast<RankedTensorType>(x.getType());
  Value max =
      createReduction(
          b, loc, {type.getShape(), {dim}, {b.getF32Type()}, Combiner::Max}, x,
          identityMap(b.getContext(), type.getRank()),
          [](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            return SmallVector<Value>{extend(nested, bodyLoc, args[0])};
          })
          .front();
  // softmax(x) = softmax(x - c) and logsumexp(x) = log(sum(exp(x - c))) + c
  // for any c: the max only keeps exp from overflowing, and the gradient
  // through it is zero (computing it would reduce over the normalised dim
  // once more, across ranks when that dim is sharded).
  max.getDefiningOp()->setAttr(DTensorDialect::getShiftAttrName(),
                               b.getUnitAttr());
  return max;
}

Value builders::createSoftmax(OpBuilder &b, Location loc, Value x, int64_t dim,
                              Type element, bool zeroMaskedRows) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  AffineMap identity = identityMap(context, rank);
  AffineMap rowMap = dropDims(context, rank, {dim});
  Type f32 = b.getF32Type();
  Value max = createRowMax(b, loc, x, dim);
  Value exp = createMap(
      b, loc, type.getShape(), f32, {x, max}, {identity, rowMap},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value rowMax = args[1];
        // A row of -inf only: shift by 0, so that each exp is exp(-inf) = 0
        // rather than exp(-inf - -inf) = NaN.
        if (zeroMaskedRows) {
          Value minusInf = arith::ConstantOp::create(
              nested, bodyLoc, getNeutral(f32, Combiner::Max));
          Value masked = arith::CmpFOp::create(
              nested, bodyLoc, arith::CmpFPredicate::OEQ, rowMax, minusInf);
          rowMax = arith::SelectOp::create(
              nested, bodyLoc, masked, floatConstant(nested, bodyLoc, f32, 0),
              rowMax);
        }
        Value shifted = arith::SubFOp::create(
            nested, bodyLoc, extend(nested, bodyLoc, args[0]), rowMax);
        return SmallVector<Value>{
            math::ExpOp::create(nested, bodyLoc, shifted)};
      });
  Value sum =
      createReduction(b, loc, {type.getShape(), {dim}, {f32}, Combiner::Sum},
                      exp, identity,
                      [](OpBuilder &, Location, ValueRange args) {
                        return SmallVector<Value>{args[0]};
                      })
          .front();
  // A product with the reciprocal, which the loop over the row hoists.
  return createMap(
      b, loc, type.getShape(), element, {exp, sum}, {identity, rowMap},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value one = floatConstant(nested, bodyLoc, f32, 1);
        Value reciprocal = arith::DivFOp::create(nested, bodyLoc, one, args[1]);
        // Any other row sums to at least 1 (its max contributes exp(0)), so
        // a zero sum is a fully masked row: its weights are 0.
        if (zeroMaskedRows) {
          Value zero = floatConstant(nested, bodyLoc, f32, 0);
          Value empty = arith::CmpFOp::create(
              nested, bodyLoc, arith::CmpFPredicate::OEQ, args[1], zero);
          reciprocal =
              arith::SelectOp::create(nested, bodyLoc, empty, zero, reciprocal);
        }
        Value value =
            arith::MulFOp::create(nested, bodyLoc, args[0], reciprocal);
        return SmallVector<Value>{round(nested, bodyLoc, value, element)};
      });
}
