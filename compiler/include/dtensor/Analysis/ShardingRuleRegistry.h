//===- ShardingRuleRegistry.h - the rule of each op -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which rule an op gets: linalg structured ops and elementwise ops their
// rule from indexing maps (LinalgRules), tensor and shape ops without
// indexing maps their explicit rule (ShapeOpRules). The rule types
// themselves are in ShardingRule.h, the building blocks of explicit rules in
// ShardingRuleBuilder.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ANALYSIS_SHARDINGRULEREGISTRY_H
#define DTENSOR_ANALYSIS_SHARDINGRULEREGISTRY_H

#include "dtensor/Analysis/ShardingRule.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace dtensor {

/// The sharding rule of `op`, or std::nullopt when the op has none (it is
/// then kept replicated).
std::optional<ShardingRule> getShardingRule(mlir::Operation *op);

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_SHARDINGRULEREGISTRY_H
