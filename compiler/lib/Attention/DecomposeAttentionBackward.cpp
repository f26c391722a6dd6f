//===- DecomposeAttentionBackward.cpp - attention's gradients as linalg ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The linalg form of dtensor.attention_backward, loops (B, H, ...) over the
// operands in logical order, the key/value heads repeated for the query
// heads that read them, in the compute type C (f32, f64 for f64):
//
//   P[l, s]   = exp(logits[l, s] - lse[l])     (0 where lse[l] is -inf)
//   dV[s, ev] = sum_l P[l, s] dOut[l, ev]
//   dP[l, s]  = sum_ev dOut[l, ev] v[s, ev]
//   D[l]      = sum_ev dOut[l, ev] out[l, ev]
//   dS[l, s]  = P[l, s] (dP[l, s] - D[l])
//   dQ[l, e]  = scale sum_s dS[l, s] k[s, e]
//   dK[s, e]  = scale sum_l dS[l, s] q[l, e]
//
// dK and dV of a key/value head sum over the query heads of its group.
// This is the reference form: it holds [L, S] tensors, the kernel does not.
//
//===----------------------------------------------------------------------===//

#include "AttentionLogits.h"

#include "dtensor/Attention/Decompose.h"
#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;
using dtensor::detail::batchedMap;

namespace {

constexpr int64_t kRank = 4;

/// `value` (read through `dims`, logical dim i its dim dims[i]) in logical
/// order.
Value logical(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> dims) {
  return createTranspose(b, loc, value, dims);
}

/// `value` in logical order written in the order of `dims`, scaled by
/// `scale` and rounded to `element`.
Value physical(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> dims,
               double scale, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Type compute = type.getElementType();
  Value scaled = createMap(
      b, loc, type.getShape(), element, {value},
      {identityMap(b.getContext(), kRank)},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value result = args[0];
        if (scale != 1.0)
          result = arith::MulFOp::create(
              nested, bodyLoc, result,
              floatConstant(nested, bodyLoc, compute, scale));
        return SmallVector<Value>{round(nested, bodyLoc, result, element)};
      });
  SmallVector<int64_t> toPhysical(kRank);
  for (auto [logicalDim, dim] : llvm::enumerate(dims))
    toPhysical[dim] = logicalDim;
  return createTranspose(b, loc, scaled, toPhysical);
}

/// `grad` [B, H, S, X] summed over the `groups` consecutive heads of each
/// key/value head: viewed as [B, H / groups, groups, S, X] (head
/// hk * groups + g), reduced over the groups.
Value sumGroups(OpBuilder &b, Location loc, Value grad, int64_t groups) {
  if (groups == 1)
    return grad;
  auto type = cast<RankedTensorType>(grad.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> grouped{shape[0], shape[1] / groups, groups, shape[2],
                               shape[3]};
  Value split = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(grouped, type.getElementType()), grad,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  return createReduction(b, loc,
                         {grouped, {2}, {type.getElementType()}, Combiner::Sum},
                         {split}, {identityMap(b.getContext(), 5)},
                         [](OpBuilder &, Location, ValueRange args) {
                           return SmallVector<Value>{args[0]};
                         })
      .front();
}

} // namespace

bool dtensor::hasAttentionBackwardKernelForm(AttentionBackwardOp op) {
  Type element = op.getQuery().getType().getElementType();
  return element.isF32() || element.isF64();
}

FailureOr<SmallVector<Value>>
dtensor::decomposeAttentionBackward(OpBuilder &b, AttentionBackwardOp op) {
  for (Value operand : op->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return op.emitOpError(
          "has dynamic sizes; decompose attention before partitioning (the "
          "distribute pipeline does so for a target without an attention "
          "kernel)");

  Location loc = op.getLoc();
  MLIRContext *context = b.getContext();
  Type element = op.getQuery().getType().getElementType();
  Type compute = getComputeType(element);
  double scale = op.getScale().convertToDouble();

  Value query = logical(b, loc, op.getQuery(), op.getQueryDims());
  Value key = logical(b, loc, op.getKey(), op.getKeyDims());
  Value value = logical(b, loc, op.getValue(), op.getValueDims());
  Value out = logical(b, loc, op.getOut(), op.getResultDims());
  Value dOut = logical(b, loc, op.getDOut(), op.getResultDims());
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  int64_t heads = q.getDimSize(1), keyHeads = k.getDimSize(1);
  int64_t groups = keyHeads == 0 ? 1 : heads / keyHeads;
  if (groups != 1) {
    key = repeatHeads(b, loc, key, groups);
    value = repeatHeads(b, loc, value, groups);
  }
  int64_t queries = q.getDimSize(2), keys = k.getDimSize(2);
  int64_t features = q.getDimSize(3), values = v.getDimSize(3);
  auto loopsOf = [&](ArrayRef<int64_t> rest) {
    SmallVector<int64_t> loops(q.getShape().take_front(2));
    loops.append(rest.begin(), rest.end());
    return loops;
  };

  // logits[l, s] over loops (B, H, l, s, e), as the forward's.
  Value scores = createContraction(b, loc, loopsOf({queries, keys, features}),
                                   {4}, query, batchedMap(context, 5, {2, 4}),
                                   key, batchedMap(context, 5, {3, 4}),
                                   batchedMap(context, 5, {2, 3}));
  Value logits = detail::createAttentionLogits(b, loc, scores, op.getMask(),
                                               op.getPositions(), scale,
                                               op.getCausal(), compute);

  // P = exp(logits - lse), 0 for a query that sees no key.
  AffineMap identity = identityMap(context, kRank);
  AffineMap rowMap = dropDims(context, kRank, {3});
  SmallVector<int64_t> scoresShape = loopsOf({queries, keys});
  Value probabilities = createMap(
      b, loc, scoresShape, compute, {logits, op.getLse()}, {identity, rowMap},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value lse = extend(nested, bodyLoc, args[1]);
        if (lse.getType() != compute)
          lse = convertElement(nested, bodyLoc, lse, compute);
        Value minusInf = arith::ConstantOp::create(
            nested, bodyLoc, getNeutral(compute, Combiner::Max));
        Value none = arith::CmpFOp::create(
            nested, bodyLoc, arith::CmpFPredicate::OEQ, lse, minusInf);
        Value p = math::ExpOp::create(
            nested, bodyLoc,
            arith::SubFOp::create(nested, bodyLoc, args[0], lse));
        return SmallVector<Value>{arith::SelectOp::create(
            nested, bodyLoc, none, floatConstant(nested, bodyLoc, compute, 0),
            p)};
      });

  // dV over loops (B, H, s, ev, l); dP over (B, H, l, s, ev); D over
  // (B, H, l, ev).
  Value dValue = createContraction(
      b, loc, loopsOf({keys, values, queries}), {4}, probabilities,
      batchedMap(context, 5, {4, 2}), dOut, batchedMap(context, 5, {4, 3}),
      batchedMap(context, 5, {2, 3}));
  Value dProbabilities = createContraction(
      b, loc, loopsOf({queries, keys, values}), {4}, dOut,
      batchedMap(context, 5, {2, 4}), value, batchedMap(context, 5, {3, 4}),
      batchedMap(context, 5, {2, 3}));
  SmallVector<int64_t> outShape = loopsOf({queries, values});
  Value rowDots =
      createReduction(
          b, loc, {outShape, {3}, {compute}, Combiner::Sum}, {dOut, out},
          {identity, identity},
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            return SmallVector<Value>{arith::MulFOp::create(
                nested, bodyLoc, extend(nested, bodyLoc, args[0]),
                extend(nested, bodyLoc, args[1]))};
          })
          .front();
  Value dScores = createMap(
      b, loc, scoresShape, compute, {probabilities, dProbabilities, rowDots},
      {identity, identity, rowMap},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value centered =
            arith::SubFOp::create(nested, bodyLoc, args[1], args[2]);
        return SmallVector<Value>{
            arith::MulFOp::create(nested, bodyLoc, args[0], centered)};
      });

  // dQ over loops (B, H, l, e, s); dK over (B, H, s, e, l).
  Value dQuery = createContraction(b, loc, loopsOf({queries, features, keys}),
                                   {4}, dScores, batchedMap(context, 5, {2, 4}),
                                   key, batchedMap(context, 5, {4, 3}),
                                   batchedMap(context, 5, {2, 3}));
  Value dKey = createContraction(b, loc, loopsOf({keys, features, queries}),
                                 {4}, dScores, batchedMap(context, 5, {4, 2}),
                                 query, batchedMap(context, 5, {4, 3}),
                                 batchedMap(context, 5, {2, 3}));
  dKey = sumGroups(b, loc, dKey, groups);
  dValue = sumGroups(b, loc, dValue, groups);

  return SmallVector<Value>{
      physical(b, loc, dQuery, op.getQueryDims(), scale, element),
      physical(b, loc, dKey, op.getKeyDims(), scale, element),
      physical(b, loc, dValue, op.getValueDims(), 1.0, element)};
}
