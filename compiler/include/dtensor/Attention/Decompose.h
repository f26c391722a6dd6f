//===- Decompose.h - dtensor.attention written as linalg -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place where attention and its gradients become linalg ops: for a
// target without an attention kernel (--dtensor-decompose-attention, run by
// the distribute pipeline before propagation and by dtensor-compile before
// the reference program's lowering).
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

/// `op` as linalg ops (static shapes, no rows, no accumulate): the scores
/// as a contraction of query and key, scaled, masked (the additive mask, or
/// -inf above the causal diagonal shifted by the positions), the softmax
/// in f32 that gives a query seeing no key weights 0, and the contraction
/// with the value, rounded to the element type; and, when the op gives its
/// log-sum-exp, each query's max logit plus the log of its sum of
/// exponentials (-inf for a query that sees no key). Returns the values that
/// replace the op's results, or fails with an error at the op when it is
/// not of that form; nothing is created then.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
decomposeAttention(mlir::OpBuilder &b, AttentionOp op);

/// True when the CPU attention backward kernel
/// (`dtensor_rt_attention_backward`) runs `op` as it is: f32 or f64.
bool hasAttentionBackwardKernelForm(AttentionBackwardOp op);

/// `op` as linalg ops (static shapes), in f32 (f64 for f64): the logits as
/// the forward's, the probabilities exp(logits - lse) (0 where lse is -inf),
/// dV = P^T d_out, dS = P * (d_out value^T - rowsum(d_out * out)),
/// dQ = scale dS key, dK = scale dS^T query, the key/value gradients summed
/// over the query heads of each group, each rounded to the element type
/// and written in its operand's order. Returns dQ, dK and dV, or fails with
/// an error at the op; nothing is created then.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
decomposeAttentionBackward(mlir::OpBuilder &b, AttentionBackwardOp op);

} // namespace dtensor

#endif // DTENSOR_ATTENTION_DECOMPOSE_H
