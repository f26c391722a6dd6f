//===- ScatterAddRule.cpp - the sharding rule of dtensor.scatter_add ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ScatterAddRule.h"

#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::detail;

ShardingRule dtensor::detail::getScatterAddRule(ScatterAddOp op) {
  RankedTensorType updates = op.getUpdates().getType();
  RankedTensorType init = op.getInit().getType();
  ShardingRule rule;
  unsigned rows = addFactor(rule, updates.getDimSize(0));
  rule.factors[rows].kind = ShardingFactor::Kind::Reduction;
  rule.factors[rows].combiner = ReductionKind::Sum;
  unsigned tableRows = addFactor(rule, init.getDimSize(0));
  TensorFactors updateFactors{rows}, initFactors{tableRows};
  for (int64_t dim = 1; dim < init.getRank(); ++dim) {
    int64_t size = init.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      size = updates.getDimSize(dim);
    unsigned factor = addFactor(rule, size);
    updateFactors.push_back(factor);
    initFactors.push_back(factor);
  }
  addOperand(rule, 0, std::move(updateFactors));
  addOperand(rule, 1, initFactors);
  addOperand(rule, 2, TensorFactors{rows});
  rule.results.push_back(std::move(initFactors));
  // The operands, in order: updates 0, init 1, indices 2.
  rule.initOperands.push_back(1);
  rule.partialFlows.push_back(
      PartialFlow{{0, 1}, {ReductionKind::Sum, ReductionKind::Avg}});
  return rule;
}
