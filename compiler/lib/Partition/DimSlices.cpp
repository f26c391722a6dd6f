//===- DimSlices.cpp - slices of one dim of a tensor ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Partition/DimSlices.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value dtensor::sliceDim(OpBuilder &builder, Location loc, Value source,
                        int64_t dim, OpFoldResult offset, OpFoldResult size) {
  int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, source);
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  offsets[dim] = offset;
  sizes[dim] = size;
  return tensor::ExtractSliceOp::create(builder, loc, source, offsets, sizes,
                                        strides);
}

Value dtensor::insertDim(OpBuilder &builder, Location loc, Value piece,
                         Value dest, int64_t dim, OpFoldResult offset) {
  int64_t rank = cast<RankedTensorType>(piece.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, piece);
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  offsets[dim] = offset;
  return tensor::InsertSliceOp::create(builder, loc, piece, dest, offsets,
                                       sizes, strides);
}
