//===- AttentionShapes.h - Shape checks of the attention ops ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The verifier rules that dtensor.attention and dtensor.attention_backward
// share: rank-4 operands read through a permutation of their dims, query,
// key and value of one attention, a result [B, H, L, Ev], indices with one
// entry per batch row, a mask that broadcasts to [B, H, L, S]. Dynamic
// sizes (uneven shards) are checked by the runtime kernels; here two sizes
// disagree only when both are known.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_DIALECTS_DTENSOR_ATTENTIONSHAPES_H
#define DTENSOR_DIALECTS_DTENSOR_ATTENTIONSHAPES_H

#include "mlir/IR/Operation.h"

namespace dtensor::attention_shapes {

/// An operand of an attention op and the permutation that reads it in
/// logical order.
struct Operand {
  llvm::StringRef name;
  mlir::Value value;
  llvm::ArrayRef<int64_t> dims;
};

/// Whether two sizes are both known and differ.
bool differ(int64_t a, int64_t b);

/// The size of logical dim `dim` of `operand`.
int64_t size(const Operand &operand, int64_t dim);

/// Each operand has rank 4, dims that permute [0, 4) and the element type
/// `element`, a float type.
mlir::LogicalResult verifyOperandTypes(mlir::Operation *op,
                                       llvm::ArrayRef<Operand> operands,
                                       mlir::Type element);

/// The logical sizes the checks below read.
struct Sizes {
  int64_t batch, heads, queries, kvHeads, keys;
};

/// Query, key and value of one attention (grouped-query heads allowed) and
/// `out` of shape [B, H, L, Ev], named `outName` in its message. The key's
/// batch must be the query's when `sameBatch`; `batchNote` ends that
/// message.
mlir::FailureOr<Sizes> verifyShapes(mlir::Operation *op, const Operand &query,
                                    const Operand &key, const Operand &value,
                                    const Operand &out, bool sameBatch,
                                    llvm::StringRef batchNote,
                                    llvm::StringRef outName);

/// `indices`, when present, is tensor<Bxi64>.
mlir::LogicalResult verifyBatchIndices(mlir::Operation *op,
                                       llvm::StringRef name,
                                       mlir::Value indices, int64_t batch);

/// `mask`, when present, broadcasts to [B, H, L, S] with type `element`.
mlir::LogicalResult verifyMask(mlir::Operation *op, mlir::Value mask,
                               const Sizes &sizes, mlir::Type element);

} // namespace dtensor::attention_shapes

#endif // DTENSOR_DIALECTS_DTENSOR_ATTENTIONSHAPES_H
