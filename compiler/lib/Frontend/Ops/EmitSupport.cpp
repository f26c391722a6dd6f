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

//===----------------------------------------------------------------------===//
// Element types and scalars in bodies
//===----------------------------------------------------------------------===//

Type ops::getComputeType(Type element) {
  if (element.isF16() || element.isBF16())
    return Float32Type::get(element.getContext());
  return element;
}

Value ops::extend(OpBuilder &b, Location loc, Value value) {
  Type compute = getComputeType(value.getType());
  if (compute == value.getType())
    return value;
  return arith::ExtFOp::create(b, loc, compute, value);
}

Value ops::round(OpBuilder &b, Location loc, Value value, Type element) {
  if (value.getType() == element)
    return value;
  return arith::TruncFOp::create(b, loc, element, value);
}

Value ops::floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value ops::convertElement(OpBuilder &b, Location loc, Value value,
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

//===----------------------------------------------------------------------===//
// Tensors and generics
//===----------------------------------------------------------------------===//

Value ops::createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type element, TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

TypedAttr ops::getNeutral(Type element, Combiner combiner) {
  Builder b(element.getContext());
  if (auto floatType = dyn_cast<FloatType>(element)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    switch (combiner) {
    case Combiner::Sum:
      return b.getFloatAttr(element, 0.0);
    case Combiner::Max:
      return b.getFloatAttr(
          element, llvm::APFloat::getInf(semantics, /*Negative=*/true));
    case Combiner::Min:
      return b.getFloatAttr(element, llvm::APFloat::getInf(semantics));
    }
  }
  unsigned width = element.getIntOrFloatBitWidth();
  switch (combiner) {
  case Combiner::Sum:
    return b.getIntegerAttr(element, 0);
  case Combiner::Max:
    return b.getIntegerAttr(element, llvm::APInt::getSignedMinValue(width));
  case Combiner::Min:
    return b.getIntegerAttr(element, llvm::APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("unknown combiner");
}

Value ops::combine(OpBuilder &b, Location loc, Combiner combiner, Value lhs,
                   Value rhs) {
  bool isFloat = isa<FloatType>(lhs.getType());
  switch (combiner) {
  case Combiner::Sum:
    return isFloat ? arith::AddFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  case Combiner::Max:
    // NaN-propagating, as torch.amax.
    return isFloat ? arith::MaximumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MaxSIOp::create(b, loc, lhs, rhs).getResult();
  case Combiner::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MinSIOp::create(b, loc, lhs, rhs).getResult();
  }
  llvm_unreachable("unknown combiner");
}

SmallVector<Value>
ops::createGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                   ArrayRef<AffineMap> inputMaps, ValueRange inits,
                   ArrayRef<AffineMap> initMaps,
                   ArrayRef<utils::IteratorType> iterators, BodyBuilder body) {
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, initMaps);
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        SmallVector<Value> yielded = body(nested, bodyLoc, args);
        linalg::YieldOp::create(nested, bodyLoc, yielded);
      });
  return SmallVector<Value>(generic.getResults());
}

Value ops::createMap(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                     Type element, ValueRange inputs,
                     ArrayRef<AffineMap> inputMaps, BodyBuilder body) {
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  AffineMap identity = identityMap(b.getContext(), shape.size());
  return createGeneric(
             b, loc, inputs, inputMaps, init, identity, iterators,
             [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               return body(nested, bodyLoc, args.take_front(inputs.size()));
             })
      .front();
}

Value ops::roundTensor(OpBuilder &b, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  AffineMap identity = identityMap(b.getContext(), type.getRank());
  return createMap(b, loc, type.getShape(), element, value, identity,
                   [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                     return SmallVector<Value>{
                         round(nested, bodyLoc, args[0], element)};
                   });
}

SmallVector<Value> ops::createReduction(OpBuilder &b, Location loc,
                                        const Reduction &reduction,
                                        ValueRange inputs,
                                        ArrayRef<AffineMap> inputMaps,
                                        BodyBuilder body) {
  int64_t rank = reduction.shape.size();
  SmallVector<int64_t> resultShape =
      dropShape(reduction.shape, reduction.reduced);
  SmallVector<Value> inits;
  for (Type element : reduction.elements)
    inits.push_back(createFilled(b, loc, resultShape, element,
                                 getNeutral(element, reduction.combiner)));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (int64_t dim : reduction.reduced)
    iterators[dim] = utils::IteratorType::reduction;
  SmallVector<AffineMap> initMaps(
      inits.size(), dropDims(b.getContext(), rank, reduction.reduced));
  return createGeneric(
      b, loc, inputs, inputMaps, inits, initMaps, iterators,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        SmallVector<Value> values =
            body(nested, bodyLoc, args.take_front(inputs.size()));
        SmallVector<Value> combined;
        for (auto [value, acc] :
             llvm::zip_equal(values, args.drop_front(inputs.size())))
          combined.push_back(
              combine(nested, bodyLoc, reduction.combiner, value, acc));
        return combined;
      });
}

Value ops::createContraction(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> loops, ArrayRef<int64_t> reduced,
                             Value lhs, AffineMap lhsMap, Value rhs,
                             AffineMap rhsMap, AffineMap resultMap) {
  Type element =
      getComputeType(cast<RankedTensorType>(lhs.getType()).getElementType());
  SmallVector<int64_t> shape;
  for (AffineExpr expr : resultMap.getResults())
    shape.push_back(loops[cast<AffineDimExpr>(expr).getPosition()]);
  Value init =
      createFilled(b, loc, shape, element, getNeutral(element, Combiner::Sum));
  SmallVector<utils::IteratorType> iterators(loops.size(),
                                             utils::IteratorType::parallel);
  for (int64_t dim : reduced)
    iterators[dim] = utils::IteratorType::reduction;
  return createGeneric(
             b, loc, {lhs, rhs}, {lhsMap, rhsMap}, init, resultMap, iterators,
             [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               Value product = arith::MulFOp::create(
                   nested, bodyLoc, extend(nested, bodyLoc, args[0]),
                   extend(nested, bodyLoc, args[1]));
               return SmallVector<Value>{
                   arith::AddFOp::create(nested, bodyLoc, args[2], product)};
             })
      .front();
}

AffineMap ops::identityMap(MLIRContext *context, int64_t rank) {
  return AffineMap::getMultiDimIdentityMap(rank, context);
}

AffineMap ops::dropDims(MLIRContext *context, int64_t rank,
                        ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> results;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!llvm::is_contained(dropped, dim))
      results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(rank, 0, results, context);
}

AffineMap ops::getBroadcastMap(MLIRContext *context, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> resultShape) {
  int64_t offset = resultShape.size() - shape.size();
  SmallVector<AffineExpr> results;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    int64_t loop = dim + offset;
    results.push_back(size == 1 && resultShape[loop] != 1
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(loop, context));
  }
  return AffineMap::get(resultShape.size(), 0, results, context);
}

bool ops::broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> resultShape) {
  if (shape.size() > resultShape.size())
    return false;
  int64_t offset = resultShape.size() - shape.size();
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size != 1 && size != resultShape[dim + offset])
      return false;
  return true;
}

SmallVector<int64_t> ops::dropShape(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> kept;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(dropped, static_cast<int64_t>(dim)))
      kept.push_back(size);
  return kept;
}

Value ops::insertUnitDims(OpBuilder &b, Location loc, Value value,
                          ArrayRef<int64_t> positions) {
  if (positions.empty())
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  int64_t resultRank = type.getRank() + positions.size();
  SmallVector<int64_t> shape;
  // Each source dim is a group; a unit dim joins the group before it, or
  // the first one when it leads. A rank-0 source has no groups at all.
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  int64_t source = 0;
  for (int64_t dim = 0; dim < resultRank; ++dim) {
    if (llvm::is_contained(positions, dim)) {
      shape.push_back(1);
      if (groups.empty())
        leading.push_back(dim);
      else
        groups.back().push_back(dim);
      continue;
    }
    shape.push_back(type.getDimSize(source++));
    leading.push_back(dim);
    groups.push_back(leading);
    leading.clear();
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups);
}
