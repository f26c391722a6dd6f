//===- EmbeddingAdjoint.cpp - The gradient of a lookup of rows ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A gather of rows of a table (the embedding, index_select of dim 0) reads
// row ids[n] for each n; its table's gradient adds each looked-up row's
// gradient into the row it read: zeros, then dtensor.scatter_add, N rows of
// additions rather than a one-hot contraction over the whole table. The
// gather's batch dims become the op's one row dim.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;

Value dtensor::autodiff::createRowGatherAdjoint(OpBuilder &b, Location loc,
                                                tensor::GatherOp gather,
                                                Value gradient) {
  RankedTensorType source = gather.getSourceType();
  auto indices = cast<RankedTensorType>(gather.getIndices().getType());
  int64_t batchRank = indices.getRank() - 1;
  Type indexElement = indices.getElementType();
  if (gather.getGatherDims().size() != 1 || gather.getGatherDims()[0] != 0 ||
      batchRank < 1 ||
      (!indexElement.isSignlessInteger(32) &&
       !indexElement.isSignlessInteger(64)))
    return Value();
  // ids [batch..., 1] -> [N].
  Value ids = gather.getIndices();
  SmallVector<ReassociationIndices> allDims(1);
  for (int64_t dim = 0; dim <= batchRank; ++dim)
    allDims[0].push_back(dim);
  ids = tensor::CollapseShapeOp::create(b, loc, ids, allDims);
  // gradient [batch..., rest...] -> [N, rest...].
  Value rows = gradient;
  if (batchRank > 1) {
    SmallVector<ReassociationIndices> groups(1);
    for (int64_t dim = 0; dim < batchRank; ++dim)
      groups[0].push_back(dim);
    for (int64_t dim = 1; dim < source.getRank(); ++dim)
      groups.push_back({batchRank + dim - 1});
    rows = tensor::CollapseShapeOp::create(b, loc, rows, groups);
  }
  Type element = source.getElementType();
  Value zero = createFilled(b, loc, source.getShape(), element,
                            b.getFloatAttr(element, 0));
  return ScatterAddOp::create(b, loc, zero.getType(), rows, zero, ids);
}
