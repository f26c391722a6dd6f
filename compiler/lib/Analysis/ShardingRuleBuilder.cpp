//===- ShardingRuleBuilder.cpp - building blocks of explicit rules --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ShardingRuleBuilder.h"

#include "dtensor/Analysis/PartialFlow.h"

using namespace mlir;
using namespace dtensor;

unsigned dtensor::detail::addFactor(ShardingRule &rule, int64_t size,
                                    bool blocked) {
  ShardingFactor factor;
  factor.size = size;
  factor.blocked = blocked;
  rule.factors.push_back(factor);
  return rule.factors.size() - 1;
}

TensorFactors dtensor::detail::addIdentityFactors(ShardingRule &rule,
                                                  RankedTensorType type) {
  TensorFactors factors;
  for (int64_t size : type.getShape())
    factors.push_back(addFactor(rule, size));
  return factors;
}

void dtensor::detail::addOperand(ShardingRule &rule, unsigned operandNumber,
                                 TensorFactors factors) {
  rule.tensorOperands.push_back(operandNumber);
  rule.operands.push_back(std::move(factors));
}

void dtensor::detail::addDataMovementFlow(ShardingRule &rule,
                                          ArrayRef<unsigned> operands) {
  rule.partialFlows.push_back(
      PartialFlow{SmallVector<unsigned>(operands), getAllReductionKinds()});
}
