//===- AttentionRule.cpp - the sharding rule of dtensor.attention ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionRule.h"

#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::detail;

TensorFactors dtensor::detail::permutedFactors(ArrayRef<int64_t> dims,
                                               ArrayRef<unsigned> logical) {
  TensorFactors factors(dims.size());
  for (auto [index, dim] : llvm::enumerate(dims))
    factors[dim] = logical[index];
  return factors;
}

int64_t dtensor::detail::logicalDimSize(Value value, ArrayRef<int64_t> dims,
                                        unsigned index) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dims[index]);
}

unsigned dtensor::detail::firstOperandNumber(MutableOperandRange range) {
  return range[0].getOperandNumber();
}

TensorFactors dtensor::detail::maskFactors(const ShardingRule &rule, Value mask,
                                           ArrayRef<unsigned> logical) {
  auto type = cast<RankedTensorType>(mask.getType());
  TensorFactors factors(4);
  for (unsigned dim = 0; dim < 4; ++dim)
    if (type.getDimSize(dim) == rule.factors[logical[dim]].size)
      factors[dim] = logical[dim];
  return factors;
}

ShardingRule dtensor::detail::getAttentionRule(AttentionOp op) {
  ArrayRef<int64_t> queryDims = op.getQueryDims(), keyDims = op.getKeyDims(),
                    valueDims = op.getValueDims(),
                    resultDims = op.getResultDims();
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  ShardingRule rule;
  unsigned batch = addFactor(rule, logicalDimSize(query, queryDims, 0));
  int64_t heads = logicalDimSize(query, queryDims, 1);
  int64_t keyHeads = logicalDimSize(key, keyDims, 1);
  bool grouped = heads != keyHeads || ShapedType::isDynamic(heads);
  unsigned head = addFactor(rule, heads, /*blocked=*/grouped);
  unsigned queries = addFactor(rule, logicalDimSize(query, queryDims, 2),
                               /*blocked=*/op.getPositions() != nullptr);
  unsigned embed = addFactor(rule, logicalDimSize(query, queryDims, 3),
                             /*blocked=*/true);
  unsigned keys = addFactor(rule, logicalDimSize(key, keyDims, 2),
                            /*blocked=*/true);
  unsigned valueEmbed = addFactor(rule, logicalDimSize(value, valueDims, 3));
  unsigned keyBatch = op.getRows()
                          ? addFactor(rule, logicalDimSize(key, keyDims, 0),
                                      /*blocked=*/true)
                          : batch;
  unsigned keyHead =
      grouped ? addFactor(rule, keyHeads, /*blocked=*/true) : head;

  addOperand(rule, firstOperandNumber(op.getQueryMutable()),
             permutedFactors(queryDims, {batch, head, queries, embed}));
  addOperand(rule, firstOperandNumber(op.getKeyMutable()),
             permutedFactors(keyDims, {keyBatch, keyHead, keys, embed}));
  addOperand(rule, firstOperandNumber(op.getValueMutable()),
             permutedFactors(valueDims, {keyBatch, keyHead, keys, valueEmbed}));
  if (Value mask = op.getMask())
    addOperand(rule, firstOperandNumber(op.getMaskMutable()),
               maskFactors(rule, mask, {batch, head, queries, keys}));
  if (op.getRows())
    addOperand(rule, firstOperandNumber(op.getRowsMutable()),
               TensorFactors{batch});
  if (op.getPositions())
    addOperand(rule, firstOperandNumber(op.getPositionsMutable()),
               TensorFactors{batch});
  TensorFactors result =
      permutedFactors(resultDims, {batch, head, queries, valueEmbed});
  addOperand(rule, firstOperandNumber(op.getInitMutable()), result);
  TensorFactors logSumExp{batch, head, queries};
  if (op.getLogSumExpInit())
    addOperand(rule, firstOperandNumber(op.getLogSumExpInitMutable()),
               logSumExp);
  rule.results.push_back(std::move(result));
  if (op.getLogSumExp())
    rule.results.push_back(std::move(logSumExp));
  return rule;
}
