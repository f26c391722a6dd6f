//===- DimSlices.h - slices of one dim of a tensor --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The slices the per-rank program takes along a single dim, every other dim
// whole: a rank's piece of a sharded dim, and putting a piece back. Used by
// partition (head-tail pieces), the attention fusion (a query piece) and
// ring attention (a key block's mask columns).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PARTITION_DIMSLICES_H
#define DTENSOR_PARTITION_DIMSLICES_H

#include "mlir/IR/Builders.h"

namespace dtensor {

/// `source` with `size` indices of `dim` from `offset`, other dims whole.
mlir::Value sliceDim(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Value source, int64_t dim, mlir::OpFoldResult offset,
                     mlir::OpFoldResult size);

/// `piece` put into `dest` at `offset` along `dim`, other dims at 0.
mlir::Value insertDim(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value piece, mlir::Value dest, int64_t dim,
                      mlir::OpFoldResult offset);

} // namespace dtensor

#endif // DTENSOR_PARTITION_DIMSLICES_H
