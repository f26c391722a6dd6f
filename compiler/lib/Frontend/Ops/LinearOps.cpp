//===- LinearOps.cpp - linear, matmul, bmm --------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each product is one contraction generic over every dim of its operands,
// batch dims included: collapsing [B, S, in] to [B*S, in] first would block
// sharding S (sequence parallelism), since only the major dim of a merged
// group can be sharded. A bias is added by a separate elementwise op, after
// the contraction, so that a row-parallel product can stay a partial sum
// until it is reduced while the bias stays replicated.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

/// The loop dims `first .. first + count - 1` as affine exprs.
static SmallVector<AffineExpr> dimRange(MLIRContext *context, unsigned first,
                                        unsigned count) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim = first; dim < first + count; ++dim)
    exprs.push_back(getAffineDimExpr(dim, context));
  return exprs;
}

/// A map over `numLoops` loops with the given results.
static AffineMap mapOf(MLIRContext *context, unsigned numLoops,
                       ArrayRef<AffineExpr> results) {
  return AffineMap::get(numLoops, 0, results, context);
}

/// Batch dims `[0, batch)`, then `rows`, `cols`.
static AffineMap batchedMap(MLIRContext *context, unsigned numLoops,
                            unsigned batch, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results = dimRange(context, 0, batch);
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, context));
  return mapOf(context, numLoops, results);
}

EmitResult ops::emitLinear(OpEmitter &emitter) {
  for (unsigned i = 0; i < emitter.inputs().size(); ++i)
    if (failed(checkFloatInput(emitter, i)) ||
        (i > 0 && failed(checkSameDtype(emitter, i, 0))))
      return failure();
  if (failed(checkMinRank(emitter, 0, 1, "[..., in]")))
    return failure();
  RankedTensorType x = emitter.inputType(0);
  RankedTensorType weight = emitter.inputType(1);
  if (weight.getRank() != 2)
    return emitter.emitInputError(1)
           << "weight '" << emitter.inputName(1) << "' has shape "
           << formatShape(weight.getShape()) << "; expected [out, in]";
  int64_t in = x.getShape().back();
  int64_t out = weight.getDimSize(0);
  if (weight.getDimSize(1) != in)
    return emitter.emitError()
           << "input '" << emitter.inputName(0) << "' has shape "
           << formatShape(x.getShape()) << " but weight '"
           << emitter.inputName(1) << "' " << formatShape(weight.getShape())
           << " expects [..., " << weight.getDimSize(1) << "]";
  if (emitter.inputs().size() == 3 &&
      failed(checkShape(emitter, 2, {out},
                        "(the out dim of the weight, [out, in] = " +
                            formatShape(weight.getShape()) + ")")))
    return failure();

  // Loops (batch..., o, i): one GEMM with M = the product of the batch dims.
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  unsigned batch = x.getRank() - 1;
  unsigned numLoops = batch + 2;
  unsigned o = batch, i = batch + 1;
  SmallVector<int64_t> loops(x.getShape().drop_back());
  loops.append({out, in});
  Value product = createContraction(
      b, emitter.loc, loops, {i}, emitter.input(0),
      batchedMap(context, numLoops, batch, {i}), emitter.input(1),
      mapOf(context, numLoops,
            {getAffineDimExpr(o, context), getAffineDimExpr(i, context)}),
      batchedMap(context, numLoops, batch, {o}));

  Type element = x.getElementType();
  if (emitter.inputs().size() < 3)
    return SmallVector<Value>{roundTensor(b, emitter.loc, product, element)};
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(out);
  Value biased =
      createMap(b, emitter.loc, shape, element, {product, emitter.input(2)},
                {identityMap(context, batch + 1),
                 mapOf(context, batch + 1, {getAffineDimExpr(batch, context)})},
                [&](OpBuilder &nested, Location loc, ValueRange args) {
                  Value sum = arith::AddFOp::create(
                      nested, loc, args[0], extend(nested, loc, args[1]));
                  return SmallVector<Value>{round(nested, loc, sum, element)};
                });
  return SmallVector<Value>{biased};
}

/// The product of `a[batch..., m, k]` and `b[batch..., k, n]` (or `b[k, n]`
/// when `sharedB`), rounded to the inputs' dtype.
static Value emitBatchedProduct(OpEmitter &emitter, bool sharedB) {
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  RankedTensorType lhs = emitter.inputType(0);
  RankedTensorType rhs = emitter.inputType(1);
  unsigned batch = lhs.getRank() - 2;
  unsigned numLoops = batch + 3;
  unsigned m = batch, n = batch + 1, k = batch + 2;
  SmallVector<int64_t> loops(lhs.getShape().drop_back(2));
  loops.append(
      {lhs.getDimSize(batch), rhs.getShape().back(), lhs.getShape().back()});
  AffineMap rhsMap =
      sharedB
          ? mapOf(context, numLoops,
                  {getAffineDimExpr(k, context), getAffineDimExpr(n, context)})
          : batchedMap(context, numLoops, batch, {k, n});
  Value product = createContraction(
      b, emitter.loc, loops, {k}, emitter.input(0),
      batchedMap(context, numLoops, batch, {m, k}), emitter.input(1), rhsMap,
      batchedMap(context, numLoops, batch, {m, n}));
  return roundTensor(b, emitter.loc, product, lhs.getElementType());
}

/// Inputs 0 and 1 are float tensors of one dtype whose inner dims agree.
static LogicalResult checkProductOperands(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)) ||
      failed(checkFloatInput(emitter, 1)) ||
      failed(checkSameDtype(emitter, 1, 0)))
    return failure();
  return success();
}

static LogicalResult checkInnerDims(OpEmitter &emitter) {
  RankedTensorType lhs = emitter.inputType(0);
  RankedTensorType rhs = emitter.inputType(1);
  int64_t k = lhs.getShape().back();
  int64_t rhsK = rhs.getDimSize(rhs.getRank() - 2);
  if (k == rhsK)
    return success();
  return emitter.emitError()
         << "inner dims differ: '" << emitter.inputName(0) << "' "
         << formatShape(lhs.getShape()) << " has k = " << k << " but '"
         << emitter.inputName(1) << "' " << formatShape(rhs.getShape())
         << " has k = " << rhsK;
}

EmitResult ops::emitMatmul(OpEmitter &emitter) {
  if (failed(checkProductOperands(emitter)) ||
      failed(checkMinRank(emitter, 0, 2, "[..., m, k]")) ||
      failed(checkMinRank(emitter, 1, 2, "[..., k, n] or [k, n]")))
    return failure();
  RankedTensorType lhs = emitter.inputType(0);
  RankedTensorType rhs = emitter.inputType(1);
  bool sharedB = rhs.getRank() == 2;
  if (!sharedB && (rhs.getRank() != lhs.getRank() ||
                   lhs.getShape().drop_back(2) != rhs.getShape().drop_back(2)))
    return emitter.emitError()
           << "batch dims of '" << emitter.inputName(0) << "' "
           << formatShape(lhs.getShape()) << " and '" << emitter.inputName(1)
           << "' " << formatShape(rhs.getShape())
           << " differ; matmul needs them equal, or the second input 2-D";
  if (failed(checkInnerDims(emitter)))
    return failure();
  return SmallVector<Value>{emitBatchedProduct(emitter, sharedB)};
}

EmitResult ops::emitBmm(OpEmitter &emitter) {
  if (failed(checkProductOperands(emitter)))
    return failure();
  for (unsigned i = 0; i < 2; ++i) {
    RankedTensorType type = emitter.inputType(i);
    if (type.getRank() != 3)
      return emitter.emitInputError(i)
             << "input '" << emitter.inputName(i) << "' has shape "
             << formatShape(type.getShape()) << "; expected "
             << (i == 0 ? "[B, m, k]" : "[B, k, n]");
  }
  RankedTensorType lhs = emitter.inputType(0);
  RankedTensorType rhs = emitter.inputType(1);
  if (lhs.getDimSize(0) != rhs.getDimSize(0))
    return emitter.emitError()
           << "batch sizes differ: '" << emitter.inputName(0) << "' "
           << formatShape(lhs.getShape()) << " and '" << emitter.inputName(1)
           << "' " << formatShape(rhs.getShape());
  if (failed(checkInnerDims(emitter)))
    return failure();
  return SmallVector<Value>{emitBatchedProduct(emitter, /*sharedB=*/false)};
}
