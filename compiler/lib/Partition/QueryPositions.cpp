//===- QueryPositions.cpp - dtensor.attention's uniform positions ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Partition/QueryPositions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value dtensor::createQueryPositions(OpBuilder &builder, Location loc,
                                    Value query, int64_t batchDim, Value start,
                                    SmallVectorImpl<Operation *> *created) {
  // A dynamic batch (a rank's uneven piece) is read with a tensor.dim.
  OpFoldResult batch = tensor::getMixedSize(builder, loc, query, batchDim);
  Type i64 = builder.getI64Type();
  Value empty = tensor::EmptyOp::create(builder, loc, {batch}, i64);
  Value first = arith::IndexCastOp::create(builder, loc, i64, start);
  auto fill = linalg::FillOp::create(builder, loc, first, empty);
  if (created) {
    if (auto size = dyn_cast<Value>(batch))
      created->push_back(size.getDefiningOp());
    created->append({empty.getDefiningOp(), first.getDefiningOp(), fill});
  }
  return fill.getResult(0);
}
