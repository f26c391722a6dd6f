//===- SoftmaxOps.cpp - softmax, log_softmax, cross_entropy ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Written as reductions rather than linalg.softmax, whose normalized dim
// cannot be sharded: a max (maximumf, from -inf), then a sum of exp(x - max)
// (addf, from 0), then an elementwise op. With the dim sharded (logits
// sharded over the vocabulary) each rank reduces its piece and only the
// per-row max and sum are combined across ranks, never the logits.
// Softmax keeps exp(x - max) in a tensor of its own: exp is computed once
// per element, and the sum is a plain reduction that vectorises.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

namespace {
/// The row max and the sum of exp(x - max) of `x` over `dim`, in f32.
struct SoftmaxParts {
  Value max;
  Value sum;
  AffineMap identity;
  AffineMap rowMap;
};
} // namespace

static SoftmaxParts createSoftmaxParts(OpBuilder &b, Location loc, Value x,
                                       int64_t dim) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  SoftmaxParts parts;
  parts.identity = identityMap(context, rank);
  parts.rowMap = dropDims(context, rank, {dim});
  Type f32 = b.getF32Type();
  parts.max = createRowMax(b, loc, x, dim);
  parts.sum =
      createReduction(b, loc, {type.getShape(), {dim}, {f32}, Combiner::Sum},
                      {x, parts.max}, {parts.identity, parts.rowMap},
                      [](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                        Value shifted = arith::SubFOp::create(
                            nested, bodyLoc, extend(nested, bodyLoc, args[0]),
                            args[1]);
                        return SmallVector<Value>{
                            math::ExpOp::create(nested, bodyLoc, shifted)};
                      })
          .front();
  return parts;
}

/// softmax or log_softmax of input 0 over `dim`.
static EmitResult emitSoftmaxLike(OpEmitter &emitter, bool logarithm) {
  if (failed(checkFloatInput(emitter, 0)))
    return failure();
  RankedTensorType type = emitter.inputType(0);
  FailureOr<int64_t> dim = emitter.getDim("dim", type.getRank(), -1);
  if (failed(dim))
    return failure();
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  Value x = emitter.input(0);
  Type element = type.getElementType();
  if (!logarithm)
    return SmallVector<Value>{createSoftmax(b, loc, x, *dim, element)};
  SoftmaxParts parts = createSoftmaxParts(b, loc, x, *dim);
  Value result = createMap(
      b, loc, type.getShape(), element, {x, parts.max, parts.sum},
      {parts.identity, parts.rowMap, parts.rowMap},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value shifted = arith::SubFOp::create(
            nested, bodyLoc, extend(nested, bodyLoc, args[0]), args[1]);
        Value logSum = math::LogOp::create(nested, bodyLoc, args[2]);
        Value value = arith::SubFOp::create(nested, bodyLoc, shifted, logSum);
        return SmallVector<Value>{round(nested, bodyLoc, value, element)};
      });
  return SmallVector<Value>{result};
}

EmitResult ops::emitSoftmax(OpEmitter &emitter) {
  return emitSoftmaxLike(emitter, /*logarithm=*/false);
}

EmitResult ops::emitLogSoftmax(OpEmitter &emitter) {
  return emitSoftmaxLike(emitter, /*logarithm=*/true);
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

/// `target` (an integer) compared with `ignoreIndex`.
static Value isIgnored(OpBuilder &b, Location loc, Value target,
                       int64_t ignoreIndex) {
  Value ignored = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(target.getType(), ignoreIndex));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, target,
                               ignored);
}

EmitResult ops::emitCrossEntropy(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)) || failed(checkIntInput(emitter, 1)))
    return failure();
  RankedTensorType logits = emitter.inputType(0);
  RankedTensorType target = emitter.inputType(1);
  if (logits.getRank() != 2)
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0) << "' has shape "
           << formatShape(logits.getShape()) << "; expected [N, C]";
  int64_t rows = logits.getDimSize(0);
  if (failed(checkShape(emitter, 1, {rows},
                        "(one class index per row of the logits " +
                            formatShape(logits.getShape()) + ")")))
    return failure();
  // Without classes no row's target is in range (PyTorch raises), and the
  // log-sum-exp over no logits is -inf: the loss has no value.
  if (logits.getDimSize(1) == 0 && rows > 0)
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0) << "' has shape "
           << formatShape(logits.getShape())
           << ": 0 classes, so no target is in range and the loss has no "
              "value";
  FailureOr<std::string> reduction =
      emitter.getEnum("reduction", {"mean", "sum", "none"}, StringRef("mean"));
  FailureOr<int64_t> ignoreIndex = emitter.getInt("ignore_index", -100);
  if (failed(reduction) || failed(ignoreIndex))
    return failure();
  // An ignore_index the target dtype cannot hold matches no target.
  unsigned width = target.getElementType().getIntOrFloatBitWidth();
  if (!llvm::isIntN(width, *ignoreIndex))
    return emitter.emitAttrError("ignore_index")
           << "ignore_index " << *ignoreIndex << " does not fit the dtype "
           << formatDtype(target.getElementType()) << " of target '"
           << emitter.inputName(1) << "'";

  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  Location loc = emitter.loc;
  Type f32 = b.getF32Type();
  Value x = emitter.input(0);
  SoftmaxParts parts = createSoftmaxParts(b, loc, x, /*dim=*/1);

  // The logit of each row's target class, as a sum over the classes of
  // (c == target ? x : 0): a sharded class dim gives a partial sum.
  AffineMap rowMap = parts.rowMap;
  Value picked =
      createReduction(
          b, loc, {logits.getShape(), {1}, {f32}, Combiner::Sum},
          {x, emitter.input(1)}, {parts.identity, rowMap},
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value column = linalg::IndexOp::create(nested, bodyLoc, 1);
            Value targetIndex = arith::IndexCastOp::create(
                nested, bodyLoc, nested.getIndexType(), args[1]);
            Value hit = arith::CmpIOp::create(
                nested, bodyLoc, arith::CmpIPredicate::eq, column, targetIndex);
            Value zero = floatConstant(nested, bodyLoc, f32, 0);
            return SmallVector<Value>{arith::SelectOp::create(
                nested, bodyLoc, hit, extend(nested, bodyLoc, args[0]), zero)};
          })
          .front();
  // The targets are class indices: the runtime refuses one outside the
  // classes (other than ignore_index), as PyTorch does, instead of a loss
  // whose picked logit is 0.
  picked.getDefiningOp()->setAttr(
      DTensorDialect::getClassIndexAttrName(),
      b.getDictionaryAttr(
          {b.getNamedAttr("operand", b.getI64IntegerAttr(1)),
           b.getNamedAttr("classes", b.getI64IntegerAttr(logits.getDimSize(1))),
           b.getNamedAttr("ignore_index", b.getI64IntegerAttr(*ignoreIndex))}));

  // loss = log(sum) + max - picked, or 0 for an ignored row.
  AffineMap rows1 = identityMap(context, 1);
  Value loss = createMap(
      b, loc, {rows}, f32, {parts.max, parts.sum, picked, emitter.input(1)},
      {rows1, rows1, rows1, rows1},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value logSum = math::LogOp::create(nested, bodyLoc, args[1]);
        Value shifted = arith::AddFOp::create(nested, bodyLoc, logSum, args[0]);
        Value value = arith::SubFOp::create(nested, bodyLoc, shifted, args[2]);
        Value zero = floatConstant(nested, bodyLoc, f32, 0);
        return SmallVector<Value>{arith::SelectOp::create(
            nested, bodyLoc, isIgnored(nested, bodyLoc, args[3], *ignoreIndex),
            zero, value)};
      });
  Type element = logits.getElementType();
  if (*reduction == "none")
    return SmallVector<Value>{roundTensor(b, loc, loss, element)};

  // The total loss and, for the mean, the number of rows not ignored.
  bool mean = *reduction == "mean";
  SmallVector<Type> accumulators{f32};
  if (mean)
    accumulators.push_back(f32);
  SmallVector<Value> totals = createReduction(
      b, loc, {ArrayRef<int64_t>(rows), {0}, accumulators, Combiner::Sum},
      {loss, emitter.input(1)}, {rows1, rows1},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        SmallVector<Value> values{args[0]};
        if (mean)
          values.push_back(arith::SelectOp::create(
              nested, bodyLoc,
              isIgnored(nested, bodyLoc, args[1], *ignoreIndex),
              floatConstant(nested, bodyLoc, f32, 0),
              floatConstant(nested, bodyLoc, f32, 1)));
        return values;
      });
  if (!mean)
    return SmallVector<Value>{roundTensor(b, loc, totals[0], element)};
  AffineMap scalar = AffineMap::get(context);
  Value result = createMap(
      b, loc, {}, element, totals, {scalar, scalar},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value value = arith::DivFOp::create(nested, bodyLoc, args[0], args[1]);
        return SmallVector<Value>{round(nested, bodyLoc, value, element)};
      });
  return SmallVector<Value>{result};
}
