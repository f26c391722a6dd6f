//===- FactoryOps.cpp - arange, full, zeros, ones -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ops without inputs that make a tensor from their attributes: full, zeros
// and ones as a linalg.fill of a tensor.empty; arange as a generic without
// inputs whose body computes start + i * step from linalg.index (after
// partitioning, the rank's offset is added, so a sharded arange holds its
// global values).
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

//===----------------------------------------------------------------------===//
// full, zeros, ones
//===----------------------------------------------------------------------===//

/// A tensor of the `shape` and `dtype` attributes filled with `value`
/// (zeros, ones), or without one with the number attribute `value` (full).
static EmitResult emitFill(OpEmitter &emitter, std::optional<double> value) {
  FailureOr<SmallVector<int64_t>> shape = getShapeAttr(emitter);
  if (failed(shape))
    return failure();
  FailureOr<Type> dtype = getDtypeAttr(emitter, "dtype", StringRef("f32"));
  if (failed(dtype))
    return failure();
  TypedAttr fill;
  if (value) {
    Builder b(emitter.builder.getContext());
    fill =
        isFloatDtype(*dtype)
            ? TypedAttr(b.getFloatAttr(*dtype, *value))
            : TypedAttr(b.getIntegerAttr(*dtype, static_cast<int64_t>(*value)));
  } else {
    FailureOr<TypedAttr> attr =
        getScalarAttr(emitter, "value", *dtype, /*inComputeType=*/false,
                      "the result", "torch.full would truncate it");
    if (failed(attr))
      return failure();
    fill = *attr;
  }
  return SmallVector<Value>{
      createFilled(emitter.builder, emitter.loc, *shape, *dtype, fill)};
}

EmitResult ops::emitFull(OpEmitter &emitter) {
  return emitFill(emitter, std::nullopt);
}

EmitResult ops::emitZeros(OpEmitter &emitter) { return emitFill(emitter, 0); }

EmitResult ops::emitOnes(OpEmitter &emitter) { return emitFill(emitter, 1); }

//===----------------------------------------------------------------------===//
// arange
//===----------------------------------------------------------------------===//

namespace {
/// One bound (or the step) of an arange: its value, exact when the JSON
/// number is an integer.
struct Bound {
  double number = 0;
  std::optional<int64_t> integer;
};
} // namespace

/// The number attribute `key` of an arange (default `defaultValue`).
static FailureOr<Bound> readBound(OpEmitter &emitter, StringRef key,
                                  std::optional<int64_t> defaultValue) {
  FailureOr<double> number = emitter.getNumber(
      key, defaultValue ? std::optional<double>(*defaultValue) : std::nullopt);
  if (failed(number))
    return failure();
  const JsonNode *node = emitter.getNode(key);
  Bound bound{*number, node ? node->integer : defaultValue};
  return bound;
}

EmitResult ops::emitArange(OpEmitter &emitter) {
  FailureOr<Bound> end = readBound(emitter, "end", std::nullopt);
  if (failed(end))
    return failure();
  FailureOr<Bound> start = readBound(emitter, "start", 0);
  if (failed(start))
    return failure();
  FailureOr<Bound> step = readBound(emitter, "step", 1);
  if (failed(step))
    return failure();
  bool integers = start->integer && end->integer && step->integer;
  // PyTorch's default dtype: i64 for integer bounds, else the default float.
  FailureOr<Type> dtype =
      getDtypeAttr(emitter, "dtype", StringRef(integers ? "i64" : "f32"));
  if (failed(dtype))
    return failure();
  if (step->number == 0)
    return emitter.emitAttrError("step") << "step must not be 0";
  if ((step->number > 0 && end->number < start->number) ||
      (step->number < 0 && end->number > start->number))
    return emitter.emitAttrError(emitter.getNode("step") ? "step" : "end")
           << "step " << formatNumber(step->number) << " leads away from end "
           << formatNumber(end->number) << " (start "
           << formatNumber(start->number) << ")";
  bool isInt = isIntDtype(*dtype);
  if (isInt && !integers) {
    StringRef key = !start->integer ? "start" : !end->integer ? "end" : "step";
    double number = !start->integer ? start->number
                    : !end->integer ? end->number
                                    : step->number;
    return emitter.emitAttrError(key)
           << "dtype " << formatDtype(*dtype) << " needs integer start, end "
           << "and step; " << key << " is " << formatNumber(number);
  }

  // torch.arange's length: ceil((end - start) / step), in integers when
  // the bounds are integers.
  int64_t length;
  if (integers) {
    int64_t first = *start->integer, last = *end->integer;
    int64_t stride = *step->integer;
    std::optional<int64_t> span = llvm::checkedSub(last, first);
    std::optional<int64_t> rounded =
        span ? llvm::checkedAdd(*span, stride > 0 ? stride - 1 : stride + 1)
             : std::nullopt;
    if (!rounded)
      return emitter.emitError() << "the range from " << first << " to " << last
                                 << " is too long for int64";
    length = *rounded / stride;
  } else {
    double count = std::ceil((end->number - start->number) / step->number);
    if (!(count < 0x1p62))
      return emitter.emitError()
             << "the range from " << formatNumber(start->number) << " to "
             << formatNumber(end->number) << " by "
             << formatNumber(step->number) << " has too many elements";
    length = static_cast<int64_t>(count);
  }
  if (isInt && length > 0) {
    // The values lie between start and start + (length - 1) * step.
    unsigned width = dtype->getIntOrFloatBitWidth();
    std::optional<int64_t> offset =
        llvm::checkedMul(length - 1, *step->integer);
    std::optional<int64_t> lastValue =
        offset ? llvm::checkedAdd(*start->integer, *offset) : std::nullopt;
    if (!lastValue)
      return emitter.emitError() << "the range's values do not fit the dtype "
                                 << formatDtype(*dtype);
    if (width < 64) {
      int64_t low = -(int64_t(1) << (width - 1));
      int64_t high = (int64_t(1) << (width - 1)) - 1;
      for (int64_t value : {*start->integer, *lastValue})
        if (value < low || value > high)
          return emitter.emitError()
                 << "arange value " << value << " does not fit the dtype "
                 << formatDtype(*dtype);
    }
  }

  // start + i * step: in i64 for integers, in f64 for f32 and in f32 for
  // f16 and bf16 (PyTorch's accumulation types on the CPU), then rounded.
  OpBuilder &b = emitter.builder;
  Type compute = isInt            ? Type(b.getI64Type())
                 : dtype->isF32() ? Type(b.getF64Type())
                                  : getComputeType(*dtype);
  TypedAttr startAttr, stepAttr;
  if (isInt) {
    startAttr = b.getI64IntegerAttr(*start->integer);
    stepAttr = b.getI64IntegerAttr(*step->integer);
  } else {
    startAttr = b.getFloatAttr(compute, start->number);
    stepAttr = b.getFloatAttr(compute, step->number);
  }
  Type element = *dtype;
  Value result = createMap(
      b, emitter.loc, {length}, element, ValueRange(), {},
      [&](OpBuilder &nested, Location loc, ValueRange) {
        Value index = linalg::IndexOp::create(nested, loc, 0);
        Value i =
            arith::IndexCastOp::create(nested, loc, nested.getI64Type(), index);
        if (!isInt)
          i = arith::SIToFPOp::create(nested, loc, compute, i);
        Value first = arith::ConstantOp::create(nested, loc, startAttr);
        Value stride = arith::ConstantOp::create(nested, loc, stepAttr);
        Value value;
        if (isInt) {
          Value offset = arith::MulIOp::create(nested, loc, i, stride);
          value = arith::AddIOp::create(nested, loc, first, offset);
        } else {
          Value offset = arith::MulFOp::create(nested, loc, i, stride);
          value = arith::AddFOp::create(nested, loc, first, offset);
        }
        return SmallVector<Value>{convertElement(nested, loc, value, element)};
      });
  return SmallVector<Value>{result};
}
