//===- PartitionScatterAdd.cpp - dtensor.scatter_add per rank -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sharding the updates' rows or the trailing dims needs nothing but local
// types: each rank adds its rows (a partial sum) or its columns. A table
// whose rows are sharded (the gradient of a vocabulary-parallel embedding)
// keeps the indices whole on every rank; they are shifted by the rank's
// first row, so that the rows of the rank's piece land at their local
// positions and every other index falls outside the piece, which the op
// skips. Nothing is communicated.
//
//===----------------------------------------------------------------------===//

#include "PartitionState.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;

/// `indices` (1-D, i32 or i64) minus `offset` (an index), elementwise.
static Value shiftIndices(OpBuilder &b, Location loc, Value indices,
                          Value offset) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type element = type.getElementType();
  Value shift = arith::IndexCastOp::create(b, loc, element, offset);
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, indices), element);
  AffineMap identity = b.getMultiDimIdentityMap(1);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{indices}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, identity},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               linalg::YieldOp::create(nested, bodyLoc,
                                       ValueRange{arith::SubIOp::create(
                                           nested, bodyLoc, args[0], shift)});
             })
      ->getResult(0);
}

LogicalResult dtensor::partitionScatterAdd(ScatterAddOp op,
                                           PartitionState &state) {
  const GlobalValue *table = state.lookup(op.getInit());
  if (table && !state.getShardingMeshDims(*table, 0).empty()) {
    ShardExtent extent = state.getExtent(*table, 0);
    if (extent.isHeadTail())
      return op.emitOpError("adds into rows of a table sharded head-tail; "
                            "only tables held in one piece per rank are "
                            "supported");
    OpBuilder builder(op);
    op.getIndicesMutable().assign(
        shiftIndices(builder, op.getLoc(), op.getIndices(), extent.offset));
  }
  if (const GlobalValue *result = state.lookup(op.getResult()))
    op.getResult().setType(state.getLocalType(*result));
  return success();
}
