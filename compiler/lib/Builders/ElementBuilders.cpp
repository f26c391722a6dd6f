//===- ElementBuilders.cpp - Element types and scalars in bodies ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;

//===----------------------------------------------------------------------===//
// Element types and scalars in bodies
//===----------------------------------------------------------------------===//

Type builders::getComputeType(Type element) {
  if (element.isF16() || element.isBF16())
    return Float32Type::get(element.getContext());
  return element;
}

Value builders::extend(OpBuilder &b, Location loc, Value value) {
  Type compute = getComputeType(value.getType());
  if (compute == value.getType())
    return value;
  return arith::ExtFOp::create(b, loc, compute, value);
}

Value builders::round(OpBuilder &b, Location loc, Value value, Type element) {
  if (value.getType() == element)
    return value;
  return arith::TruncFOp::create(b, loc, element, value);
}

Value builders::floatConstant(OpBuilder &b, Location loc, Type type,
                              double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value builders::convertElement(OpBuilder &b, Location loc, Value value,
                               Type element) {
  Type source = value.getType();
  if (source == element)
    return value;
  unsigned from = source.getIntOrFloatBitWidth();
  unsigned to = element.getIntOrFloatBitWidth();
  if (isa<FloatType>(source) && isa<FloatType>(element)) {
    if (to > from)
      return arith::ExtFOp::create(b, loc, element, value);
    // f16 and bf16 have one width but neither holds the other.
    return round(b, loc, extend(b, loc, value), element);
  }
  if (isa<FloatType>(element)) {
    // PyTorch converts integers to f16 and bf16 through float.
    Type compute = getComputeType(element);
    Value converted = arith::SIToFPOp::create(b, loc, compute, value);
    return round(b, loc, converted, element);
  }
  if (isa<FloatType>(source))
    return arith::FPToSIOp::create(b, loc, element, extend(b, loc, value));
  if (to > from)
    return arith::ExtSIOp::create(b, loc, element, value);
  return arith::TruncIOp::create(b, loc, element, value);
}
