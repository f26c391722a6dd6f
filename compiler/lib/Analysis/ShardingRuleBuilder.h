//===- ShardingRuleBuilder.h - parts of explicit rules ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAnalysis: what the explicit rules of ShapeOpRules are
// written with. A rule is built by adding factors, then the factors of each
// operand and result, then the Partial flows.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ANALYSIS_SHARDINGRULEBUILDER_H
#define DTENSOR_COMPILER_ANALYSIS_SHARDINGRULEBUILDER_H

#include "dtensor/Analysis/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"

namespace dtensor::detail {

/// Adds a parallel factor of `size` (blocked: it must not be sharded) and
/// returns its index.
unsigned addFactor(ShardingRule &rule, int64_t size, bool blocked = false);

/// Adds one new parallel factor per dim of `type` and returns them.
TensorFactors addIdentityFactors(ShardingRule &rule,
                                 mlir::RankedTensorType type);

/// Adds tensor operand `operandNumber` (its position among all operands)
/// indexed by `factors`.
void addOperand(ShardingRule &rule, unsigned operandNumber,
                TensorFactors factors);

/// Partial values of every kind pass through ops that only move data: adds
/// the flow through `operands` (indices into rule.operands).
void addDataMovementFlow(ShardingRule &rule,
                         llvm::ArrayRef<unsigned> operands);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ANALYSIS_SHARDINGRULEBUILDER_H
