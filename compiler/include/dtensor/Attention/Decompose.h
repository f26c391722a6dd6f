//===- Decompose.h - dtensor.attention written as linalg -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place where attention becomes linalg ops: for a target without an
// attention kernel (--dtensor-decompose-attention, run by the distribute
// pipeline before propagation and by dtensor-compile before the reference
// program's lowering).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ATTENTION_DECOMPOSE_H
#define DTENSOR_ATTENTION_DECOMPOSE_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"

namespace dtensor {

/// True when the CPU attention kernel (`dtensor_rt_attention`) runs `op`
/// as it is: f32 operands. Other ops are decomposed even for that target.
bool hasAttentionKernelForm(AttentionOp op);

/// `op` as linalg ops (static shapes, no rows, no log-sum-exp): the scores
/// as a contraction of query and key, scaled, masked (the additive mask, or
/// -inf above the causal diagonal shifted by the positions), the softmax
/// in f32 that gives a query seeing no key weights 0, and the contraction
/// with the value, rounded to the element type. Returns the value that
/// replaces the op's result, or fails with an error at the op when it is
/// not of that form; nothing is created then.
mlir::FailureOr<mlir::Value> decomposeAttention(mlir::OpBuilder &b,
                                                AttentionOp op);

} // namespace dtensor

#endif // DTENSOR_ATTENTION_DECOMPOSE_H
