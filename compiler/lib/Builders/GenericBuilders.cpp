//===- GenericBuilders.cpp - linalg generics, reductions, maps ------------===//
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
// Tensors and generics
//===----------------------------------------------------------------------===//

Value builders::createFilled(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type element,
                             TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

TypedAttr builders::getNeutral(Type element, Combiner combiner) {
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

Value builders::combine(OpBuilder &b, Location loc, Combiner combiner,
                        Value lhs, Value rhs) {
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
builders::createGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                        ArrayRef<AffineMap> inputMaps, ValueRange inits,
                        ArrayRef<AffineMap> initMaps,
                        ArrayRef<utils::IteratorType> iterators,
                        BodyBuilder body) {
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

Value builders::createMap(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
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

Value builders::roundTensor(OpBuilder &b, Location loc, Value value,
                            Type element) {
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

SmallVector<Value> builders::createReduction(OpBuilder &b, Location loc,
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

Value builders::createContraction(OpBuilder &b, Location loc,
                                  ArrayRef<int64_t> loops,
                                  ArrayRef<int64_t> reduced, Value lhs,
                                  AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                                  AffineMap resultMap) {
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

AffineMap builders::identityMap(MLIRContext *context, int64_t rank) {
  return AffineMap::getMultiDimIdentityMap(rank, context);
}

AffineMap builders::dropDims(MLIRContext *context, int64_t rank,
                             ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> results;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!llvm::is_contained(dropped, dim))
      results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(rank, 0, results, context);
}

AffineMap builders::getBroadcastMap(MLIRContext *context,
                                    ArrayRef<int64_t> shape,
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

bool builders::broadcastsTo(ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> resultShape) {
  if (shape.size() > resultShape.size())
    return false;
  int64_t offset = resultShape.size() - shape.size();
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size != 1 && size != resultShape[dim + offset])
      return false;
  return true;
}

SmallVector<int64_t> builders::dropShape(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> kept;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(dropped, static_cast<int64_t>(dim)))
      kept.push_back(size);
  return kept;
}

Value builders::insertUnitDims(OpBuilder &b, Location loc, Value value,
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

Value builders::createTranspose(OpBuilder &b, Location loc, Value input,
                                ArrayRef<int64_t> permutation) {
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, permutation)
      .getResult()
      .front();
}
