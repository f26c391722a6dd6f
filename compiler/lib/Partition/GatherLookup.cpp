//===- GatherLookup.cpp - tensor.gather as a masked linalg.generic --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Partition/GatherLookup.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

Value dtensor::buildGatherLookup(OpBuilder &builder, tensor::GatherOp op,
                                 RankedTensorType result, Value source,
                                 Value indices, ArrayRef<Value> offsets,
                                 ArrayRef<Value> counts) {
  Location loc = op.getLoc();
  auto indicesType = cast<RankedTensorType>(indices.getType());
  int64_t batchRank = indicesType.getRank() - 1;
  int64_t sourceRank = cast<RankedTensorType>(source.getType()).getRank();
  ArrayRef<int64_t> gatherDims = op.getGatherDims();
  bool rankReduced = result.getRank() != batchRank + sourceRank;

  // Which result dim iterates over each non-gathered source dim, and the
  // sizes of the dynamic result dims.
  SmallVector<int64_t> resultDimOfSource(sourceRank, -1);
  SmallVector<Value> dynamicSizes;
  int64_t resultDim = 0;
  for (; resultDim < batchRank; ++resultDim)
    if (result.isDynamicDim(resultDim))
      dynamicSizes.push_back(
          tensor::DimOp::create(builder, loc, indices, resultDim));
  for (int64_t dim = 0; dim < sourceRank; ++dim) {
    bool gathered = llvm::is_contained(gatherDims, dim);
    if (gathered && rankReduced)
      continue;
    if (!gathered)
      resultDimOfSource[dim] = resultDim;
    if (result.isDynamicDim(resultDim))
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, source, dim));
    ++resultDim;
  }

  Value init = tensor::EmptyOp::create(builder, loc, result, dynamicSizes);
  Value zero = arith::ConstantOp::create(
      builder, loc,
      cast<TypedAttr>(builder.getZeroAttr(result.getElementType())));
  Value indexZero = arith::ConstantIndexOp::create(builder, loc, 0);
  SmallVector<utils::IteratorType> iterators(result.getRank(),
                                             utils::IteratorType::parallel);
  auto lookup = linalg::GenericOp::create(
      builder, loc, TypeRange{result}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{builder.getMultiDimIdentityMap(result.getRank())},
      iterators, [&](OpBuilder &b, Location bodyLoc, ValueRange) {
        SmallVector<Value> position;
        for (int64_t dim = 0; dim < batchRank; ++dim)
          position.push_back(linalg::IndexOp::create(b, bodyLoc, dim));
        SmallVector<Value> coords(sourceRank);
        for (int64_t dim = 0; dim < sourceRank; ++dim)
          if (resultDimOfSource[dim] >= 0)
            coords[dim] =
                linalg::IndexOp::create(b, bodyLoc, resultDimOfSource[dim]);
        Value inRange;
        for (auto [column, dim] : llvm::enumerate(gatherDims)) {
          SmallVector<Value> at = position;
          at.push_back(arith::ConstantIndexOp::create(b, bodyLoc, column));
          Value row = tensor::ExtractOp::create(b, bodyLoc, indices, at);
          if (!row.getType().isIndex())
            row = arith::IndexCastOp::create(b, bodyLoc, b.getIndexType(), row);
          if (offsets[column])
            row = arith::SubIOp::create(b, bodyLoc, row, offsets[column]);
          coords[dim] = row;
          if (!counts[column])
            continue;
          Value above = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::sge, row, indexZero);
          Value below = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::slt, row, counts[column]);
          Value held = arith::AndIOp::create(b, bodyLoc, above, below);
          inRange =
              inRange
                  ? arith::AndIOp::create(b, bodyLoc, inRange, held).getResult()
                  : held;
        }
        if (!inRange) {
          linalg::YieldOp::create(
              b, bodyLoc,
              tensor::ExtractOp::create(b, bodyLoc, source, coords)
                  .getResult());
          return;
        }
        // Read only in range: the source is never touched out of bounds.
        auto ifHeld = scf::IfOp::create(
            b, bodyLoc, inRange,
            [&](OpBuilder &then, Location thenLoc) {
              Value value =
                  tensor::ExtractOp::create(then, thenLoc, source, coords);
              scf::YieldOp::create(then, thenLoc, value);
            },
            [&](OpBuilder &otherwise, Location elseLoc) {
              scf::YieldOp::create(otherwise, elseLoc, zero);
            });
        linalg::YieldOp::create(b, bodyLoc, ifHeld.getResult(0));
      });
  return lookup.getResult(0);
}
