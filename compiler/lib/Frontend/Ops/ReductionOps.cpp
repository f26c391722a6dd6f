//===- ReductionOps.cpp - sum, mean, max, argmax --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each is a linalg.generic reduction with a combiner the sharding rules
// recognise (addf/addi: sum, maximumf/maxsi: max, minsi: min), so a reduced
// dim may be sharded: each rank reduces its piece into a partial result.
// argmax is a max, then the smallest global index holding it.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include <limits>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

/// The sorted dims `dim` names (an int or a list; absent or empty: every
/// dim, as PyTorch's reductions).
static FailureOr<SmallVector<int64_t>> getReducedDims(OpEmitter &emitter,
                                                      int64_t rank) {
  FailureOr<SmallVector<int64_t>> dims =
      emitter.getIntList("dim", /*allowScalar=*/true, ArrayRef<int64_t>());
  if (failed(dims))
    return failure();
  if (dims->empty()) {
    SmallVector<int64_t> reduced;
    for (int64_t dim = 0; dim < rank; ++dim)
      reduced.push_back(dim);
    return reduced;
  }
  return normalizeDims(emitter, "dim", *dims, rank);
}

/// `value` with unit dims at `reduced` when `keepdim`.
static Value applyKeepdim(OpBuilder &b, Location loc, Value value,
                          ArrayRef<int64_t> reduced, bool keepdim) {
  return keepdim ? insertUnitDims(b, loc, value, reduced) : value;
}

/// max and argmax have no value over an empty dim (PyTorch raises).
static LogicalResult checkNotEmpty(OpEmitter &emitter,
                                   ArrayRef<int64_t> reduced) {
  ArrayRef<int64_t> shape = emitter.inputType(0).getShape();
  for (int64_t dim : reduced)
    if (shape[dim] == 0)
      return emitter.emitError()
             << "cannot reduce dim " << dim << " of size 0 of input '"
             << emitter.inputName(0) << "' " << formatShape(shape)
             << ": the result has no value";
  return success();
}

namespace {
/// The checked `dim` and `keepdim` of a reduction.
struct ReductionAttrs {
  SmallVector<int64_t> reduced;
  bool keepdim = false;
};
} // namespace

static FailureOr<ReductionAttrs> getReductionAttrs(OpEmitter &emitter) {
  ReductionAttrs attrs;
  FailureOr<SmallVector<int64_t>> reduced =
      getReducedDims(emitter, emitter.inputType(0).getRank());
  if (failed(reduced))
    return failure();
  FailureOr<bool> keepdim = emitter.getBool("keepdim", false);
  if (failed(keepdim))
    return failure();
  attrs.reduced = std::move(*reduced);
  attrs.keepdim = *keepdim;
  return attrs;
}

/// sum (`mean` false) or mean of input 0.
static EmitResult emitSumOrMean(OpEmitter &emitter, bool mean) {
  RankedTensorType type = emitter.inputType(0);
  Type element = type.getElementType();
  if (mean && failed(checkFloatInput(emitter, 0)))
    return failure();
  FailureOr<ReductionAttrs> attrs = getReductionAttrs(emitter);
  if (failed(attrs))
    return failure();
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  int64_t rank = type.getRank();
  // Integers sum into i64, as torch.sum does.
  bool isFloat = isFloatDtype(element);
  Type accumulator = isFloat ? getComputeType(element) : b.getI64Type();
  Value sum =
      createReduction(
          b, loc,
          {type.getShape(), attrs->reduced, {accumulator}, Combiner::Sum},
          emitter.input(0), identityMap(b.getContext(), rank),
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value value = args[0];
            if (!isFloat && value.getType() != accumulator)
              value =
                  arith::ExtSIOp::create(nested, bodyLoc, accumulator, value);
            return SmallVector<Value>{extend(nested, bodyLoc, value)};
          })
          .front();
  Value result;
  if (!mean) {
    result = isFloat ? roundTensor(b, loc, sum, element) : sum;
  } else {
    double count = 1;
    for (int64_t dim : attrs->reduced)
      count *= type.getDimSize(dim);
    auto sumType = cast<RankedTensorType>(sum.getType());
    result = createMap(
        b, loc, sumType.getShape(), element, sum,
        identityMap(b.getContext(), sumType.getRank()),
        [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
          Value value = arith::DivFOp::create(
              nested, bodyLoc, args[0],
              floatConstant(nested, bodyLoc, accumulator, count));
          return SmallVector<Value>{round(nested, bodyLoc, value, element)};
        });
  }
  return SmallVector<Value>{
      applyKeepdim(b, loc, result, attrs->reduced, attrs->keepdim)};
}

EmitResult ops::emitSum(OpEmitter &emitter) {
  return emitSumOrMean(emitter, /*mean=*/false);
}

EmitResult ops::emitMean(OpEmitter &emitter) {
  return emitSumOrMean(emitter, /*mean=*/true);
}

/// The max of `x` over `reduced`, in the compute type.
static Value createMax(OpBuilder &b, Location loc, Value x,
                       ArrayRef<int64_t> reduced) {
  auto type = cast<RankedTensorType>(x.getType());
  Type compute = getComputeType(type.getElementType());
  return createReduction(
             b, loc, {type.getShape(), reduced, {compute}, Combiner::Max}, x,
             identityMap(b.getContext(), type.getRank()),
             [](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               return SmallVector<Value>{extend(nested, bodyLoc, args[0])};
             })
      .front();
}

EmitResult ops::emitMax(OpEmitter &emitter) {
  FailureOr<ReductionAttrs> attrs = getReductionAttrs(emitter);
  if (failed(attrs) || failed(checkNotEmpty(emitter, attrs->reduced)))
    return failure();
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  Type element = emitter.inputType(0).getElementType();
  Value max = createMax(b, loc, emitter.input(0), attrs->reduced);
  Value result = roundTensor(b, loc, max, element);
  return SmallVector<Value>{
      applyKeepdim(b, loc, result, attrs->reduced, attrs->keepdim)};
}

EmitResult ops::emitArgmax(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  int64_t rank = type.getRank();
  // Without a dim, the index into the flattened tensor.
  SmallVector<int64_t> reduced;
  if (emitter.has("dim")) {
    FailureOr<int64_t> dim = emitter.getDim("dim", rank);
    if (failed(dim))
      return failure();
    reduced.push_back(*dim);
  } else {
    for (int64_t dim = 0; dim < rank; ++dim)
      reduced.push_back(dim);
  }
  FailureOr<bool> keepdim = emitter.getBool("keepdim", false);
  if (failed(keepdim) || failed(checkNotEmpty(emitter, reduced)))
    return failure();

  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  MLIRContext *context = b.getContext();
  Value x = emitter.input(0);
  Value max = createMax(b, loc, x, reduced);
  Type i64 = b.getI64Type();
  // The smallest index whose element is the max (or NaN: torch.argmax
  // takes NaN as the maximum, and the max is then NaN).
  Value index =
      createReduction(
          b, loc, {type.getShape(), reduced, {i64}, Combiner::Min}, {x, max},
          {identityMap(context, rank), dropDims(context, rank, reduced)},
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value value = extend(nested, bodyLoc, args[0]);
            Value hit;
            if (isa<FloatType>(value.getType())) {
              Value equal = arith::CmpFOp::create(
                  nested, bodyLoc, arith::CmpFPredicate::OEQ, value, args[1]);
              Value isNan = arith::CmpFOp::create(
                  nested, bodyLoc, arith::CmpFPredicate::UNO, value, value);
              hit = arith::OrIOp::create(nested, bodyLoc, equal, isNan);
            } else {
              hit = arith::CmpIOp::create(
                  nested, bodyLoc, arith::CmpIPredicate::eq, value, args[1]);
            }
            // The row-major position among the reduced dims.
            Value position;
            for (int64_t dim : reduced) {
              Value at = linalg::IndexOp::create(nested, bodyLoc, dim);
              if (!position) {
                position = at;
                continue;
              }
              Value size = arith::ConstantIndexOp::create(nested, bodyLoc,
                                                          type.getDimSize(dim));
              position = arith::AddIOp::create(
                  nested, bodyLoc,
                  arith::MulIOp::create(nested, bodyLoc, position, size), at);
            }
            if (!position)
              position = arith::ConstantIndexOp::create(nested, bodyLoc, 0);
            Value position64 =
                arith::IndexCastOp::create(nested, bodyLoc, i64, position);
            Value none = arith::ConstantOp::create(
                nested, bodyLoc,
                nested.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
            return SmallVector<Value>{arith::SelectOp::create(
                nested, bodyLoc, hit, position64, none)};
          })
          .front();
  return SmallVector<Value>{applyKeepdim(b, loc, index, reduced, *keepdim)};
}
