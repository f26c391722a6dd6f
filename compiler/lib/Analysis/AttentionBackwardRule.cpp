//===- AttentionBackwardRule.cpp - the rule of dtensor.attention_backward -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The forward's factors (B, H, L, E, S, Ev) over the gradients: dQ is
// indexed as the query, dK as the key and dV as the value. Each rank
// computes the gradients of its batch rows and heads; L is blocked too,
// since dK and dV sum over the queries (a rank with a piece of them would
// hold a partial sum that the rule has no reduction factor for).
//
//===----------------------------------------------------------------------===//

#include "AttentionRule.h"

#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::detail;

ShardingRule dtensor::detail::getAttentionBackwardRule(AttentionBackwardOp op) {
  ArrayRef<int64_t> queryDims = op.getQueryDims(), keyDims = op.getKeyDims(),
                    valueDims = op.getValueDims(),
                    resultDims = op.getResultDims();
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  ShardingRule rule;
  unsigned batch = addFactor(rule, logicalDimSize(query, queryDims, 0));
  int64_t heads = logicalDimSize(query, queryDims, 1);
  int64_t keyHeads = logicalDimSize(key, keyDims, 1);
  // Under grouped-query attention a rank's query heads must read the key
  // heads it holds, and its dK/dV sum over the whole group: both blocked.
  bool grouped = heads != keyHeads || ShapedType::isDynamic(heads);
  unsigned head = addFactor(rule, heads, /*blocked=*/grouped);
  unsigned queries =
      addFactor(rule, logicalDimSize(query, queryDims, 2), /*blocked=*/true);
  unsigned embed =
      addFactor(rule, logicalDimSize(query, queryDims, 3), /*blocked=*/true);
  unsigned keys =
      addFactor(rule, logicalDimSize(key, keyDims, 2), /*blocked=*/true);
  unsigned valueEmbed =
      addFactor(rule, logicalDimSize(value, valueDims, 3), /*blocked=*/true);
  unsigned keyHead =
      grouped ? addFactor(rule, keyHeads, /*blocked=*/true) : head;

  TensorFactors queryFactors =
      permutedFactors(queryDims, {batch, head, queries, embed});
  TensorFactors keyFactors =
      permutedFactors(keyDims, {batch, keyHead, keys, embed});
  TensorFactors valueFactors =
      permutedFactors(valueDims, {batch, keyHead, keys, valueEmbed});
  TensorFactors outFactors =
      permutedFactors(resultDims, {batch, head, queries, valueEmbed});
  addOperand(rule, firstOperandNumber(op.getQueryMutable()), queryFactors);
  addOperand(rule, firstOperandNumber(op.getKeyMutable()), keyFactors);
  addOperand(rule, firstOperandNumber(op.getValueMutable()), valueFactors);
  addOperand(rule, firstOperandNumber(op.getOutMutable()), outFactors);
  unsigned dOut = rule.operands.size();
  addOperand(rule, firstOperandNumber(op.getDOutMutable()), outFactors);
  addOperand(rule, firstOperandNumber(op.getLseMutable()),
             TensorFactors{batch, head, queries});
  if (Value mask = op.getMask())
    addOperand(rule, firstOperandNumber(op.getMaskMutable()),
               maskFactors(rule, mask, {batch, head, queries, keys}));
  if (op.getPositions())
    addOperand(rule, firstOperandNumber(op.getPositionsMutable()),
               TensorFactors{batch});
  addOperand(rule, firstOperandNumber(op.getDQueryInitMutable()), queryFactors);
  addOperand(rule, firstOperandNumber(op.getDKeyInitMutable()), keyFactors);
  addOperand(rule, firstOperandNumber(op.getDValueInitMutable()), valueFactors);
  rule.results = {queryFactors, keyFactors, valueFactors};
  // The gradients are linear in d_out (the probabilities come from the
  // query, key and lse; rowsum(d_out * out) is linear in d_out): a Partial
  // sum of d_out gives Partial sums of the three.
  PartialFlow flow;
  flow.operands.push_back(dOut);
  flow.kinds = {ReductionKind::Sum};
  rule.partialFlows.push_back(std::move(flow));
  return rule;
}
