//===- RepeatHeads.cpp - Key/value heads repeated for grouped queries -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;

/// k or v `[..., Hkv, S, E]` with each head repeated `groups` times,
/// `[..., Hkv * groups, S, E]`, head h holding head h / groups (PyTorch's
/// repeat_interleave): a broadcast to `[..., Hkv, groups, S, E]`, then a
/// collapse of the heads with the groups.
///
/// Why a repeat, and not one of the two other ways to write grouped-query
/// attention:
/// - reading k at head `h floordiv groups` in the score contraction: the
///   sharding rule of a linalg op (LinalgRules.cpp) ties a tensor dim to a
///   loop only through a plain loop index, so k's heads dim would have no
///   factor and k would always be replicated (all-gathered when the heads
///   are sharded);
/// - q viewed as `[..., Hkv, groups, L, E]`: the reshape rule lets only the
///   major dim Hkv of the expanded heads be sharded, with an even split, so
///   on a TP size that does not divide Hkv the query heads could not stay
///   sharded.
/// The repeat is sharded on Hkv, the collapse's major dim, when the TP size
/// divides Hkv: each rank then repeats exactly the KV heads its query heads
/// read. Otherwise k and v are replicated and the partitioner slices the
/// rank's query heads out of the repeated ones, without communication.
Value builders::repeatHeads(OpBuilder &b, Location loc, Value kv,
                            int64_t groups) {
  auto type = cast<RankedTensorType>(kv.getType());
  int64_t rank = type.getRank(), heads = rank - 3;
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + heads + 1, groups);
  SmallVector<AffineExpr> results;
  for (int64_t dim = 0; dim <= rank; ++dim)
    if (dim != heads + 1)
      results.push_back(getAffineDimExpr(dim, b.getContext()));
  Value repeated =
      createMap(b, loc, shape, type.getElementType(), {kv},
                {AffineMap::get(rank + 1, 0, results, b.getContext())},
                [](OpBuilder &, Location, ValueRange args) {
                  return SmallVector<Value>{args[0]};
                });
  SmallVector<ReassociationIndices> groupsOfDims;
  for (int64_t dim = 0; dim <= rank; ++dim) {
    if (dim == heads + 1)
      continue;
    if (dim == heads)
      groupsOfDims.push_back({dim, dim + 1});
    else
      groupsOfDims.push_back({dim});
  }
  SmallVector<int64_t> collapsed(type.getShape());
  collapsed[heads] *= groups;
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(collapsed, type.getElementType()), repeated,
      groupsOfDims);
}
