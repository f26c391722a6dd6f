//===- PartitionState.h - the global view while partitioning ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Partitioning rewrites a function in place, op by op, from global tensor
// types to per-rank ones. PartitionState remembers, for every tensor value,
// the global type and layout it had, so each op's local form can be derived
// after its operands have already been rewritten.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PARTITION_PARTITIONSTATE_H
#define DTENSOR_COMPILER_PARTITION_PARTITIONSTATE_H

#include "dtensor/Partition/ShardIndex.h"

#include "dtensor/Planner/CommCost.h"
#include "dtensor/Layout/LayoutMath.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace dtensor {

/// A tensor value of the global program: its global type and its layout.
struct GlobalValue {
  mlir::RankedTensorType type;
  /// Normalised placements, one per mesh dim.
  std::vector<layout::Placement> placements;
};

class PartitionState {
public:
  PartitionState(MeshOp mesh, mlir::Block &entry,
                 const layout::CostParams &params)
      : meshOp(mesh), mesh(mesh.getLayoutMesh()), index(mesh, entry),
        params(params) {}

  /// Records that `value` had `type` and `layout` in the global program.
  void setGlobal(mlir::Value value, mlir::RankedTensorType type,
                 LayoutAttr layout);
  /// Records that `value` stands for `global`.
  void setGlobal(mlir::Value value, GlobalValue global);
  /// The global view of `value`, or null when it is not a tensor of the
  /// global program (scalars, values of nested regions).
  const GlobalValue *lookup(mlir::Value value) const;

  /// The per-rank type of `global`.
  mlir::RankedTensorType getLocalType(const GlobalValue &global) const;
  /// Mesh dims sharding tensor dim `dim` of `global`, outermost first.
  std::vector<int64_t> getShardingMeshDims(const GlobalValue &global,
                                           int64_t dim) const;
  /// The extent of tensor dim `dim` of `global` this rank holds; the dim
  /// must have a static global size.
  ShardExtent getExtent(const GlobalValue &global, int64_t dim);
  /// The local size of tensor dim `dim` of `global`: a static size when all
  /// ranks agree, the rank's size otherwise. An unsharded dim keeps its
  /// global size; `globalSize` gives its value when that is dynamic.
  mlir::OpFoldResult getLocalSize(const GlobalValue &global, int64_t dim,
                                  mlir::OpFoldResult globalSize);

  /// Replaces `op` by `values` (same count as its results), carrying the
  /// global view over to the new values.
  void replaceOp(mlir::Operation *op, mlir::ValueRange values);

  MeshOp meshOp;
  layout::Mesh mesh;
  ShardIndex index;
  layout::CostParams params;
  /// Remark on each lowered redistribute (the pass's `explain`).
  bool explain = false;

private:
  llvm::DenseMap<mlir::Value, GlobalValue> globals;
};

/// Rewrites `op` (one op of the body of a function being partitioned, whose
/// operands are already in their local form) into its local form. Ops the
/// partitioner cannot express locally get an error.
mlir::LogicalResult partitionOp(mlir::Operation *op, PartitionState &state);

/// Puts the body of `op` (per-rank code) in its place, bound to the rank's
/// pieces of its inputs (InlineLocalMap.cpp).
mlir::LogicalResult partitionLocalMap(LocalMapOp op, PartitionState &state);

/// Gives `op` its per-rank types; a table sharded along its rows gets the
/// indices shifted by the rank's first row (PartitionScatterAdd.cpp).
mlir::LogicalResult partitionScatterAdd(ScatterAddOp op,
                                        PartitionState &state);

} // namespace dtensor

#endif // DTENSOR_COMPILER_PARTITION_PARTITIONSTATE_H
