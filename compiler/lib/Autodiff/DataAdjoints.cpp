//===- DataAdjoints.cpp - Adjoints of the ops that move data --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each op that moves data passes its result's gradient back through its
// inverse: reshapes through the opposite reshape, a transpose through the
// inverse permutation, a slice into zeros, a concatenation through slices.
// A gather of rows (the embedding) adds each row's gradient to the row it
// read: a dtensor.scatter_add (EmbeddingAdjoint.cpp); a gather along another
// dim, a one-hot contraction over the gathered rows, whose sharding rule
// follows from its maps like any other generic's.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;
using namespace dtensor::builders;

namespace {

/// The gradient of the source of a gather of `gather_dims` [g] (the
/// embedding's rows, or index_select's), rank-reduced: result dim order is
/// the indices' batch dims, then the source's dims without g. The adjoint
/// loops are the source's dims then the indices' batch dims (reduced):
///   d_source[s] += (indices[i, 0] == s_g) ? d_result[i, s without g] : 0
/// `gradient` claimed sharded as `layout` on its Shard mesh dims, the other
/// mesh dims open; `gradient` itself when `layout` shards over none.
Value claimShardedDims(OpBuilder &b, Location loc, Value gradient,
                       LayoutAttr layout) {
  SmallVector<int64_t> open;
  SmallVector<PlacementAttr> placements;
  for (auto [dim, placement] : llvm::enumerate(layout.getPlacements())) {
    if (isa<ShardAttr>(placement)) {
      placements.push_back(placement);
      continue;
    }
    open.push_back(dim);
    placements.push_back(ReplicateAttr::get(b.getContext()));
  }
  if (open.size() == placements.size())
    return gradient;
  return DistributeOp::create(
      b, loc, gradient,
      LayoutAttr::get(b.getContext(), layout.getMesh(), placements),
      open.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(open));
}

Value gatherAdjoint(OpBuilder &b, Location loc, tensor::GatherOp gather,
                    Value gradient) {
  MLIRContext *context = b.getContext();
  RankedTensorType source = gather.getSourceType();
  auto indices = cast<RankedTensorType>(gather.getIndices().getType());
  int64_t g = gather.getGatherDims()[0];
  int64_t sourceRank = source.getRank();
  int64_t batchRank = indices.getRank() - 1;
  unsigned numLoops = sourceRank + batchRank;
  SmallVector<AffineExpr> sourceDims, indexDims, resultDims;
  for (int64_t dim = 0; dim < sourceRank; ++dim)
    sourceDims.push_back(getAffineDimExpr(dim, context));
  for (int64_t dim = 0; dim < batchRank; ++dim) {
    indexDims.push_back(getAffineDimExpr(sourceRank + dim, context));
    resultDims.push_back(getAffineDimExpr(sourceRank + dim, context));
  }
  indexDims.push_back(getAffineConstantExpr(0, context));
  for (int64_t dim = 0; dim < sourceRank; ++dim)
    if (dim != g)
      resultDims.push_back(getAffineDimExpr(dim, context));
  SmallVector<utils::IteratorType> iterators(sourceRank,
                                             utils::IteratorType::parallel);
  iterators.append(batchRank, utils::IteratorType::reduction);
  Type element = source.getElementType();
  Value zero = createZerosLike(b, loc, gather.getSource());
  return linalg::GenericOp::create(
             b, loc, zero.getType(), ValueRange{gather.getIndices(), gradient},
             ValueRange{zero},
             ArrayRef<AffineMap>{
                 AffineMap::get(numLoops, 0, indexDims, context),
                 AffineMap::get(numLoops, 0, resultDims, context),
                 AffineMap::get(numLoops, 0, sourceDims, context)},
             iterators,
             [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               Value row = linalg::IndexOp::create(nested, bodyLoc, g);
               Value index = arith::IndexCastOp::create(
                   nested, bodyLoc, nested.getIndexType(), args[0]);
               Value same = arith::CmpIOp::create(
                   nested, bodyLoc, arith::CmpIPredicate::eq, index, row);
               Value none = arith::ConstantOp::create(
                   nested, bodyLoc, nested.getFloatAttr(element, 0));
               Value picked = arith::SelectOp::create(nested, bodyLoc, same,
                                                      args[1], none);
               linalg::YieldOp::create(nested, bodyLoc,
                                       ValueRange{arith::AddFOp::create(
                                           nested, bodyLoc, args[2], picked)});
             })
      ->getResult(0);
}

} // namespace

LogicalResult dtensor::autodiff::differentiateDataOp(Operation *op,
                                                     Adjoints &adjoints) {
  OpBuilder &b = adjoints.builder;
  Location loc = op->getLoc();
  auto gradientOf = [&](unsigned result) {
    return adjoints.lookup(op->getResult(result));
  };
  auto addTo = [&](Value operand, Value gradient) {
    if (adjoints.isActive(operand))
      adjoints.add(loc, operand, gradient);
  };
  Value dy = op->getNumResults() ? gradientOf(0) : Value();
  if (!dy)
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<DistributeOp, ToLayoutOp>([&](auto constraint) {
        // A layout claim or request of the forward value, which keeps its
        // global value. Its gradient is sharded as the value is (as
        // DTensor's backward mirrors the forward's placements): a batch
        // sharded over a data-parallel dim stays sharded in the backward,
        // so that weight gradients are reduced rather than activations
        // gathered. The other mesh dims are left open: the dual of
        // Replicate is Partial, reduced where propagation finds it best.
        addTo(constraint.getInput(),
              claimShardedDims(b, loc, dy, constraint.getLayout()));
        return success();
      })
      .Case<RedistributeOp>([&](RedistributeOp redistribute) {
        // A change of layout: its gradient takes the layout propagation
        // chooses.
        addTo(redistribute.getInput(), dy);
        return success();
      })
      .Case<tensor::ExpandShapeOp>([&](tensor::ExpandShapeOp expand) {
        addTo(expand.getSrc(), tensor::CollapseShapeOp::create(
                                   b, loc, expand.getSrcType(), dy,
                                   expand.getReassociationIndices()));
        return success();
      })
      .Case<tensor::CollapseShapeOp>([&](tensor::CollapseShapeOp collapse) {
        addTo(collapse.getSrc(), tensor::ExpandShapeOp::create(
                                     b, loc, collapse.getSrcType(), dy,
                                     collapse.getReassociationIndices()));
        return success();
      })
      .Case<tensor::CastOp>([&](tensor::CastOp cast) {
        addTo(cast.getSource(),
              tensor::CastOp::create(b, loc, cast.getSource().getType(), dy));
        return success();
      })
      .Case<linalg::TransposeOp>([&](linalg::TransposeOp transpose) {
        ArrayRef<int64_t> permutation = transpose.getPermutation();
        SmallVector<int64_t> inverse(permutation.size());
        for (auto [position, dim] : llvm::enumerate(permutation))
          inverse[dim] = position;
        addTo(transpose.getInput(), createTranspose(b, loc, dy, inverse));
        return success();
      })
      .Case<tensor::ExtractSliceOp>([&](tensor::ExtractSliceOp slice) {
        Value zero = createZerosLike(b, loc, slice.getSource());
        addTo(slice.getSource(),
              tensor::InsertSliceOp::create(
                  b, loc, dy, zero, slice.getMixedOffsets(),
                  slice.getMixedSizes(), slice.getMixedStrides()));
        return success();
      })
      .Case<tensor::InsertSliceOp>([&](tensor::InsertSliceOp insert) {
        addTo(insert.getSource(),
              tensor::ExtractSliceOp::create(
                  b, loc, insert.getSourceType(), dy, insert.getMixedOffsets(),
                  insert.getMixedSizes(), insert.getMixedStrides()));
        if (adjoints.isActive(insert.getDest())) {
          Value zero = createZerosLike(b, loc, insert.getSource());
          addTo(insert.getDest(),
                tensor::InsertSliceOp::create(
                    b, loc, zero, dy, insert.getMixedOffsets(),
                    insert.getMixedSizes(), insert.getMixedStrides()));
        }
        return success();
      })
      .Case<tensor::ConcatOp>([&](tensor::ConcatOp concat) {
        int64_t dim = concat.getDim();
        int64_t offset = 0;
        for (Value input : concat.getInputs()) {
          auto type = cast<RankedTensorType>(input.getType());
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[dim] = b.getIndexAttr(offset);
          SmallVector<OpFoldResult> sizes, strides;
          for (int64_t size : type.getShape()) {
            sizes.push_back(b.getIndexAttr(size));
            strides.push_back(b.getIndexAttr(1));
          }
          if (adjoints.isActive(input))
            addTo(input, tensor::ExtractSliceOp::create(
                             b, loc, type, dy, offsets, sizes, strides));
          offset += type.getDimSize(dim);
        }
        return success();
      })
      .Case<tensor::GatherOp>([&](tensor::GatherOp gather) -> LogicalResult {
        if (gather.getGatherDims().size() != 1)
          return gather.emitOpError()
                 << "has no gradient rule: it gathers along "
                 << gather.getGatherDims().size() << " dims (one is handled)";
        auto resultType = gather.getResultType();
        int64_t expectedRank = gather.getIndices().getType().getRank() - 1 +
                               gather.getSourceType().getRank() - 1;
        if (resultType.getRank() != expectedRank)
          return gather.emitOpError()
                 << "has no gradient rule: only a rank-reduced gather (the "
                    "frontend's) is handled";
        Value table = createRowGatherAdjoint(b, loc, gather, dy);
        addTo(gather.getSource(),
              table ? table : gatherAdjoint(b, loc, gather, dy));
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "has no gradient rule, and it lies on the path from a "
                  "differentiated argument to the loss";
      });
}
