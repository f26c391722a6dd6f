//===- ShardingRuleRegistry.cpp - the rule of each op ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/ShardingRuleRegistry.h"

#include "AttentionRule.h"
#include "LinalgRules.h"
#include "ScatterAddRule.h"
#include "ShapeOpRules.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/OpDefinition.h"

using namespace mlir;
using namespace dtensor;

std::optional<ShardingRule> dtensor::getShardingRule(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return detail::getLinalgRule(linalgOp);
  if (std::optional<ShardingRule> rule = detail::getShapeOpRule(op))
    return rule;
  if (auto attention = dyn_cast<AttentionOp>(op))
    return detail::getAttentionRule(attention);
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return detail::getScatterAddRule(scatter);
  if (auto backward = dyn_cast<AttentionBackwardOp>(op))
    return detail::getAttentionBackwardRule(backward);
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() > 0)
    return detail::getElementwiseRule(op);
  return std::nullopt;
}
