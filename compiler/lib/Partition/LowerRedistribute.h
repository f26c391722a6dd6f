//===- LowerRedistribute.h - redistribute to local collectives --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Turns one dtensor.redistribute of the global program into the per-rank
// collectives the redistribute planner chooses.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PARTITION_LOWERREDISTRIBUTE_H
#define DTENSOR_COMPILER_PARTITION_LOWERREDISTRIBUTE_H

#include "dtensor/Partition/ShardIndex.h"

#include "dtensor/Planner/CommCost.h"

#include "mlir/IR/Builders.h"

namespace dtensor {

/// The per-rank type of a tensor of `globalType` laid out as `layout`
/// (normalised placements on `mesh`): sharded dims hold the local size when
/// every rank holds the same, and are dynamic otherwise.
mlir::RankedTensorType
getLocalType(mlir::RankedTensorType globalType,
             const std::vector<layout::Placement> &placements,
             const layout::Mesh &mesh);

/// This rank's head-tail piece along `dim` of `whole` (which holds the whole
/// dim; other dims as they are): the pieces of `extent` (a head-tail extent)
/// one after the other, as a tensor of `type`.
mlir::Value extractHeadTail(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value whole, int64_t dim,
                            const ShardExtent &extent,
                            mlir::RankedTensorType type);

/// Emits, at `builder`'s insertion point, the steps that turn `local` (this
/// rank's piece of a tensor of `globalType` laid out as `source`) into its
/// piece under `target`, and returns the new piece. Both layouts are on the
/// mesh of `index`. With `explain`, a remark at `loc` names the planned steps
/// and their costs.
mlir::Value lowerRedistribute(mlir::OpBuilder &builder, mlir::Location loc,
                              mlir::Value local,
                              mlir::RankedTensorType globalType,
                              LayoutAttr source, LayoutAttr target,
                              ShardIndex &index,
                              const layout::CostParams &params,
                              bool explain = false);

} // namespace dtensor

#endif // DTENSOR_COMPILER_PARTITION_LOWERREDISTRIBUTE_H
