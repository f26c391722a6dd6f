//===- EmitSupport.cpp - What op emitters share ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "EmitSupport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

//===----------------------------------------------------------------------===//
// Describing and checking inputs
//===----------------------------------------------------------------------===//

bool ops::isFloatDtype(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isF64();
}

bool ops::isIntDtype(Type type) { return type.isSignlessInteger(); }

LogicalResult ops::checkFloatInput(OpEmitter &emitter, unsigned i) {
  Type element = emitter.inputType(i).getElementType();
  if (isFloatDtype(element))
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has dtype "
         << formatDtype(element) << "; " << emitter.opName()
         << " needs a floating-point tensor (f32, f16 or bf16)";
}

LogicalResult ops::checkIntInput(OpEmitter &emitter, unsigned i) {
  Type element = emitter.inputType(i).getElementType();
  if (isIntDtype(element))
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has dtype "
         << formatDtype(element) << "; expected an integer tensor (i32 or i64)";
}

LogicalResult ops::checkSameDtype(OpEmitter &emitter, unsigned i, unsigned j) {
  Type element = emitter.inputType(i).getElementType();
  Type expected = emitter.inputType(j).getElementType();
  if (element == expected)
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has dtype "
         << formatDtype(element) << " but '" << emitter.inputName(j) << "' has "
         << formatDtype(expected)
         << "; dtypes must be equal (there is no type promotion)";
}

FailureOr<SmallVector<int64_t>> ops::getShapeAttr(OpEmitter &emitter) {
  FailureOr<SmallVector<int64_t>> shape = emitter.getIntList("shape");
  if (failed(shape))
    return failure();
  for (int64_t size : *shape)
    if (size < 0)
      return emitter.emitAttrError("shape") << "shape " << formatShape(*shape)
                                            << " has a negative size " << size;
  return shape;
}

LogicalResult ops::checkMinRank(OpEmitter &emitter, unsigned i, int64_t minRank,
                                StringRef what) {
  RankedTensorType type = emitter.inputType(i);
  if (type.getRank() >= minRank)
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has shape "
         << formatShape(type.getShape()) << "; expected " << what
         << " (rank at least " << minRank << ")";
}

LogicalResult ops::checkShape(OpEmitter &emitter, unsigned i,
                              ArrayRef<int64_t> shape, StringRef why) {
  RankedTensorType type = emitter.inputType(i);
  if (type.getShape() == shape)
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has shape "
         << formatShape(type.getShape()) << "; expected " << formatShape(shape)
         << " " << why;
}

FailureOr<SmallVector<int64_t>> ops::normalizeDims(OpEmitter &emitter,
                                                   StringRef key,
                                                   ArrayRef<int64_t> dims,
                                                   int64_t rank) {
  SmallVector<int64_t> normalized;
  for (int64_t dim : dims) {
    if (dim < -rank || dim >= rank) {
      InFlightDiagnostic diag = emitter.emitAttrError(key);
      diag << key << " " << dim << " is out of range for a tensor of rank "
           << rank;
      if (rank > 0)
        diag << " (expected " << -rank << " to " << rank - 1 << ")";
      return diag;
    }
    int64_t value = dim < 0 ? dim + rank : dim;
    if (llvm::is_contained(normalized, value))
      return emitter.emitAttrError(key)
             << key << " " << value << " appears more than once";
    normalized.push_back(value);
  }
  llvm::sort(normalized);
  return normalized;
}

FailureOr<Type> ops::getDtypeAttr(OpEmitter &emitter, StringRef key,
                                  std::optional<StringRef> defaultValue) {
  FailureOr<std::string> name =
      emitter.getEnum(key, {"f32", "f16", "bf16", "i32", "i64"}, defaultValue);
  if (failed(name))
    return failure();
  Builder b(emitter.builder.getContext());
  return llvm::StringSwitch<Type>(*name)
      .Case("f32", b.getF32Type())
      .Case("f16", b.getF16Type())
      .Case("bf16", b.getBF16Type())
      .Case("i32", b.getI32Type())
      .Default(b.getI64Type());
}

FailureOr<TypedAttr> ops::getScalarAttr(OpEmitter &emitter, StringRef key,
                                        Type element, bool inComputeType,
                                        StringRef owner,
                                        StringRef integerReason,
                                        std::optional<double> defaultValue) {
  FailureOr<double> value = emitter.getNumber(key, defaultValue);
  if (failed(value))
    return failure();
  Builder b(element.getContext());
  if (auto floatType = dyn_cast<FloatType>(element)) {
    if (inComputeType)
      return TypedAttr(b.getFloatAttr(getComputeType(element), *value));
    llvm::APFloat converted(*value);
    bool losesInfo = false;
    llvm::APFloat::opStatus status =
        converted.convert(floatType.getFloatSemantics(),
                          llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    if (status & llvm::APFloat::opOverflow)
      return emitter.emitAttrError(key)
             << key << " " << formatNumber(*value) << " does not fit the dtype "
             << formatDtype(element) << " of " << owner
             << " (it would overflow to infinity)";
    return TypedAttr(b.getFloatAttr(element, converted));
  }
  if (std::trunc(*value) != *value)
    return emitter.emitAttrError(key)
           << owner << " has dtype " << formatDtype(element) << ", so '" << key
           << "' must be an integer, not " << formatNumber(*value) << " ("
           << integerReason << ")";
  unsigned width = element.getIntOrFloatBitWidth();
  double limit = std::ldexp(1.0, width - 1);
  if (*value < -limit || *value >= limit)
    return emitter.emitAttrError(key)
           << key << " " << formatNumber(*value) << " does not fit the dtype "
           << formatDtype(element) << " of " << owner;
  return TypedAttr(b.getIntegerAttr(element, static_cast<int64_t>(*value)));
}
