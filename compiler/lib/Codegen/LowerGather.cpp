//===- LowerGather.cpp - tensor.gather as a linalg.generic ----------------===//
//
// tensor.gather has no bufferization model. A gather that partitioning left
// whole (its table is not sharded on a gathered dim) becomes a generic over
// the result that reads each coordinate from the indices and the element
// from the source with tensor.extract. A coordinate outside its dim gives
// zero, as an embedding lookup of an out-of-range id does in the model plan
// (and as partitionMaskedGather does for a sharded table).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPULOWERGATHER
#include "dtensor/Codegen/Passes.h.inc"
} // namespace dtensor::codegen

using namespace mlir;

namespace {

/// The generic computing `op`.
Value lowerGather(OpBuilder &b, tensor::GatherOp op) {
  Location loc = op.getLoc();
  Value source = op.getSource();
  Value indices = op.getIndices();
  RankedTensorType sourceType = op.getSourceType();
  RankedTensorType result = op.getResultType();
  int64_t batchRank = op.getIndicesType().getRank() - 1;
  int64_t sourceRank = sourceType.getRank();
  ArrayRef<int64_t> gatherDims = op.getGatherDims();
  bool rankReduced = result.getRank() != batchRank + sourceRank;

  // The result dim of each non-gathered source dim, and the sizes of the
  // dynamic result dims.
  SmallVector<int64_t> resultDimOfSource(sourceRank, -1);
  SmallVector<Value> dynamicSizes;
  int64_t resultDim = 0;
  for (; resultDim < batchRank; ++resultDim)
    if (result.isDynamicDim(resultDim))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, indices, resultDim));
  for (int64_t dim = 0; dim < sourceRank; ++dim) {
    bool gathered = llvm::is_contained(gatherDims, dim);
    if (gathered && rankReduced)
      continue;
    if (!gathered)
      resultDimOfSource[dim] = resultDim;
    if (result.isDynamicDim(resultDim))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, source, dim));
    ++resultDim;
  }
  SmallVector<Value> gatheredSizes;
  for (int64_t dim : gatherDims)
    gatheredSizes.push_back(tensor::DimOp::create(b, loc, source, dim));

  Value init = tensor::EmptyOp::create(b, loc, result, dynamicSizes);
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(result.getElementType())));
  Value indexZero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<utils::IteratorType> iterators(result.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{result}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(result.getRank())},
      iterators, [&](OpBuilder &nested, Location bodyLoc, ValueRange) {
        SmallVector<Value> position;
        for (int64_t dim = 0; dim < batchRank; ++dim)
          position.push_back(linalg::IndexOp::create(nested, bodyLoc, dim));
        SmallVector<Value> coords(sourceRank);
        for (int64_t dim = 0; dim < sourceRank; ++dim)
          if (resultDimOfSource[dim] >= 0)
            coords[dim] = linalg::IndexOp::create(nested, bodyLoc,
                                                  resultDimOfSource[dim]);
        Value inRange;
        for (auto [column, dim] : llvm::enumerate(gatherDims)) {
          SmallVector<Value> at = position;
          at.push_back(arith::ConstantIndexOp::create(nested, bodyLoc, column));
          Value row = tensor::ExtractOp::create(nested, bodyLoc, indices, at);
          if (!row.getType().isIndex())
            row = arith::IndexCastOp::create(nested, bodyLoc,
                                             nested.getIndexType(), row);
          Value above = arith::CmpIOp::create(
              nested, bodyLoc, arith::CmpIPredicate::sge, row, indexZero);
          Value below =
              arith::CmpIOp::create(nested, bodyLoc, arith::CmpIPredicate::slt,
                                    row, gatheredSizes[column]);
          Value held = arith::AndIOp::create(nested, bodyLoc, above, below);
          inRange = inRange
                        ? arith::AndIOp::create(nested, bodyLoc, inRange, held)
                              .getResult()
                        : held;
          coords[dim] = row;
        }
        // Read only in range: the source is not touched out of bounds.
        auto ifHeld = scf::IfOp::create(
            nested, bodyLoc, inRange,
            [&](OpBuilder &then, Location thenLoc) {
              Value value =
                  tensor::ExtractOp::create(then, thenLoc, source, coords);
              scf::YieldOp::create(then, thenLoc, value);
            },
            [&](OpBuilder &otherwise, Location elseLoc) {
              scf::YieldOp::create(otherwise, elseLoc, zero);
            });
        linalg::YieldOp::create(nested, bodyLoc, ifHeld.getResult(0));
      });
  return generic.getResult(0);
}

struct CpuLowerGather
    : dtensor::codegen::impl::CpuLowerGatherBase<CpuLowerGather> {
  void runOnOperation() override {
    SmallVector<tensor::GatherOp> gathers;
    getOperation().walk([&](tensor::GatherOp op) { gathers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (tensor::GatherOp op : gathers) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, lowerGather(rewriter, op));
    }
  }
};

} // namespace
