//===- LinalgRules.h - rules from indexing maps -----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAnalysis: the rules of linalg structured ops and of
// elementwise ops, which ShardingRuleRegistry dispatches to.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ANALYSIS_LINALGRULES_H
#define DTENSOR_COMPILER_ANALYSIS_LINALGRULES_H

#include "dtensor/Analysis/ShardingRule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace dtensor::detail {

/// The rule of a linalg op on tensors, from its indexing maps and iterator
/// types; std::nullopt for an op on buffers.
std::optional<ShardingRule> getLinalgRule(mlir::linalg::LinalgOp op);

/// The rule of an elementwise op whose operands and results are tensors of
/// one shape; std::nullopt for any other form.
std::optional<ShardingRule> getElementwiseRule(mlir::Operation *op);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ANALYSIS_LINALGRULES_H
