//===- GatherLookup.h - tensor.gather as a linalg.generic -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A tensor.gather written as a linalg.generic over its result that reads
// each coordinate from the indices and the element from the source with
// tensor.extract. Partitioning uses it for a table sharded on a gathered dim
// (each rank looks up the rows it holds), the CPU back end for a whole table
// (tensor.gather has no bufferization model); both give zero for a row
// outside the range they check.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PARTITION_GATHERLOOKUP_H
#define DTENSOR_PARTITION_GATHERLOOKUP_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace dtensor {

/// Builds `op` with result type `result` (the op's own, or its per-rank
/// form) from `source` and `indices`. For the i-th gathered dim, a row r read
/// from the indices becomes r - offsets[i] when offsets[i] is set, and is
/// looked up only when 0 <= r - offsets[i] < counts[i] when counts[i] is
/// set; elsewhere the result is zero. Both lists have one entry per gathered
/// dim (null entries allowed).
mlir::Value buildGatherLookup(mlir::OpBuilder &builder,
                              mlir::tensor::GatherOp op,
                              mlir::RankedTensorType result, mlir::Value source,
                              mlir::Value indices,
                              llvm::ArrayRef<mlir::Value> offsets,
                              llvm::ArrayRef<mlir::Value> counts);

} // namespace dtensor

#endif // DTENSOR_PARTITION_GATHERLOOKUP_H
