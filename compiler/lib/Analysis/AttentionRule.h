//===- AttentionRule.h - the sharding rule of dtensor.attention -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAnalysis: ShardingRuleRegistry dispatches here for
// dtensor.attention, so that the op can be propagated and partitioned whole
// on global tensors.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ANALYSIS_ATTENTIONRULE_H
#define DTENSOR_COMPILER_ANALYSIS_ATTENTIONRULE_H

#include "dtensor/Analysis/ShardingRule.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

namespace dtensor::detail {

/// The rule of `op` over its logical loops (B, H, L, E, S, Ev). Each rank
/// computes the attention of its own queries, heads and batch rows, so B,
/// H, L and Ev may be sharded:
///  - B indexes the query, the result, the mask, `rows` and `positions`,
///    and the key and value unless `rows` reads a KV cache by slot (then
///    their batch is a blocked factor of its own).
///  - H indexes the query and the result, and the key and value when they
///    have as many heads; under grouped-query attention their heads are a
///    blocked factor of their own, and H is blocked too (a rank's query heads
///    would read the wrong key heads).
///  - L indexes the query, the result and the mask; it is blocked when the
///    op has `positions` already (a KV cache's per-row positions). A causal
///    attention over a piece of the queries gets the piece's offset as its
///    `positions` when it is partitioned.
///  - E (contracted) and S (merged through a softmax, not a sum) are
///    blocked; the log-sum-exp's accumulation makes no Partial value.
/// A mask dim of size 1 broadcasts and takes no factor. No operand may be
/// Partial.
ShardingRule getAttentionRule(AttentionOp op);

/// The rule of `op`, the forward's with L, E and Ev blocked (dK and dV sum
/// over the queries, the probabilities' gradient over Ev) and d_out
/// allowed to be a Partial sum (the gradients are linear in it).
ShardingRule getAttentionBackwardRule(AttentionBackwardOp op);

// Shared by the two rules.

/// The factors of a rank-4 operand read through `dims` (logical dim i is the
/// operand's dim dims[i]), given the factors of its logical dims.
TensorFactors permutedFactors(llvm::ArrayRef<int64_t> dims,
                              llvm::ArrayRef<unsigned> logical);

/// The size of logical dim `index` of `value`, read through `dims`.
int64_t logicalDimSize(mlir::Value value, llvm::ArrayRef<int64_t> dims,
                       unsigned index);

/// The operand number of the first operand of `range`.
unsigned firstOperandNumber(mlir::MutableOperandRange range);
/// The factors of a mask [B, H, L, S] in logical order, the factors
/// `logical` of those loops; a dim of size 1 broadcasts and takes none.
TensorFactors maskFactors(const ShardingRule &rule, mlir::Value mask,
                          llvm::ArrayRef<unsigned> logical);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ANALYSIS_ATTENTIONRULE_H
