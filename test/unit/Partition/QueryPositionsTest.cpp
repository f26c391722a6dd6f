//===- QueryPositionsTest.cpp - a query piece's attention positions -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Partition/QueryPositions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
class QueryPositionsTest : public ::testing::Test {
protected:
  QueryPositionsTest() : builder(&context) {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, tensor::TensorDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function of a query of `type` and an index, the builder before its
  /// return.
  std::pair<Value, Value> function(RankedTensorType type) {
    auto func = func::FuncOp::create(
        builder, builder.getUnknownLoc(), "f",
        builder.getFunctionType({type, builder.getIndexType()}, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    auto ret = func::ReturnOp::create(builder, builder.getUnknownLoc());
    builder.setInsertionPoint(ret);
    return {entry->getArgument(0), entry->getArgument(1)};
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};
} // namespace

// A static batch: [B] i64 filled with the offset; three ops, in the order
// they were made.
TEST_F(QueryPositionsTest, StaticBatch) {
  auto [query, offset] =
      function(RankedTensorType::get({3, 2, 5, 8}, builder.getF32Type()));
  SmallVector<Operation *> created;
  Value positions = dtensor::createQueryPositions(
      builder, builder.getUnknownLoc(), query, 0, offset, &created);
  EXPECT_EQ(positions.getType(),
            RankedTensorType::get({3}, builder.getI64Type()));
  auto fill = positions.getDefiningOp<linalg::FillOp>();
  ASSERT_TRUE(fill);
  auto cast = fill.getInputs()[0].getDefiningOp<arith::IndexCastOp>();
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast.getIn(), offset);
  ASSERT_EQ(created.size(), 3u);
  EXPECT_TRUE(isa<tensor::EmptyOp>(created[0]));
  EXPECT_EQ(created[1], cast.getOperation());
  EXPECT_EQ(created[2], fill.getOperation());
  EXPECT_TRUE(succeeded(verify(*module)));
}

// A dynamic batch (a rank's uneven piece), read through a permuted dim: the
// size comes from a tensor.dim of the query, which is created (first) too
// (its dim's index constant is not: it may be shared, and is dead code).
TEST_F(QueryPositionsTest, DynamicBatchThroughDims) {
  auto [query, offset] = function(RankedTensorType::get(
      {4, ShapedType::kDynamic, 2, 8}, builder.getF32Type()));
  SmallVector<Operation *> created;
  Value positions = dtensor::createQueryPositions(
      builder, builder.getUnknownLoc(), query, 1, offset, &created);
  EXPECT_EQ(positions.getType(), RankedTensorType::get({ShapedType::kDynamic},
                                                       builder.getI64Type()));
  ASSERT_EQ(created.size(), 4u);
  auto dim = dyn_cast<tensor::DimOp>(created[0]);
  ASSERT_TRUE(dim);
  EXPECT_EQ(dim.getSource(), query);
  EXPECT_EQ(dim.getConstantIndex(), 1);
  // Erased in reverse, nothing is left in use.
  for (Operation *op : llvm::reverse(created))
    op->erase();
  EXPECT_TRUE(succeeded(verify(*module)));
}
