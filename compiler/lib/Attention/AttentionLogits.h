//===- AttentionLogits.h - scaled, masked attention scores ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAttention: the linalg forms of dtensor.attention and
// dtensor.attention_backward read the same logits.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ATTENTION_ATTENTIONLOGITS_H
#define DTENSOR_COMPILER_ATTENTION_ATTENTIONLOGITS_H

#include "mlir/IR/Builders.h"

namespace dtensor::detail {

/// The map over `numLoops` loops reading the two leading (batch, head) loops
/// and then the loops `dims`.
mlir::AffineMap batchedMap(mlir::MLIRContext *context, unsigned numLoops,
                           llvm::ArrayRef<unsigned> dims);

/// logits[B, H, l, s] = scores * scale [+ mask] [causal: -inf where s > l,
/// or s > positions[B] + l], in `compute` (the scores' element type).
/// `mask` (optional) is [B, H, L, S] with broadcast dims of size 1,
/// `positions` (optional, with `causal`) [B] of i64.
mlir::Value createAttentionLogits(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value scores, mlir::Value mask,
                                  mlir::Value positions, double scale,
                                  bool causal, mlir::Type compute);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ATTENTION_ATTENTIONLOGITS_H
