//===- QueryPositions.h - dtensor.attention's uniform positions -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank that holds a piece of the queries of a causal attention tells the
// op where the piece starts: its `positions` operand, every batch row's
// first query at the piece's offset. Built by partition (a causal
// dtensor.attention over sharded queries) and by the attention fusion (the
// linalg form's row offset, and each head-tail piece).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PARTITION_QUERYPOSITIONS_H
#define DTENSOR_PARTITION_QUERYPOSITIONS_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace dtensor {

/// A `[B]` i64 tensor filled with `start` (an index), B being dim `batchDim`
/// of `query`. The ops it creates are appended to `created` when given, for
/// a caller that may have to erase them again.
mlir::Value createQueryPositions(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Value query,
    int64_t batchDim, mlir::Value start,
    llvm::SmallVectorImpl<mlir::Operation *> *created = nullptr);

} // namespace dtensor

#endif // DTENSOR_PARTITION_QUERYPOSITIONS_H
