//===- AttentionRule.cpp - the sharding rule of dtensor.attention ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionRule.h"

#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::detail;

namespace {
/// The factors of a rank-4 operand read through `dims` (logical dim i is the
/// operand's dim dims[i]), given the factors of its logical dims.
TensorFactors permuted(ArrayRef<int64_t> dims, ArrayRef<unsigned> logical) {
  TensorFactors factors(dims.size());
  for (auto [index, dim] : llvm::enumerate(dims))
    factors[dim] = logical[index];
  return factors;
}

int64_t logicalSize(Value value, ArrayRef<int64_t> dims, unsigned index) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dims[index]);
}

unsigned operandNumber(MutableOperandRange range) {
  return range[0].getOperandNumber();
}
} // namespace

ShardingRule dtensor::detail::getAttentionRule(AttentionOp op) {
  ArrayRef<int64_t> queryDims = op.getQueryDims(), keyDims = op.getKeyDims(),
                    valueDims = op.getValueDims(),
                    resultDims = op.getResultDims();
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  ShardingRule rule;
  unsigned batch = addFactor(rule, logicalSize(query, queryDims, 0));
  int64_t heads = logicalSize(query, queryDims, 1);
  int64_t keyHeads = logicalSize(key, keyDims, 1);
  bool grouped = heads != keyHeads || ShapedType::isDynamic(heads);
  unsigned head = addFactor(rule, heads, /*blocked=*/grouped);
  unsigned queries = addFactor(rule, logicalSize(query, queryDims, 2),
                               /*blocked=*/op.getPositions() != nullptr);
  unsigned embed = addFactor(rule, logicalSize(query, queryDims, 3),
                             /*blocked=*/true);
  unsigned keys = addFactor(rule, logicalSize(key, keyDims, 2),
                            /*blocked=*/true);
  unsigned valueEmbed = addFactor(rule, logicalSize(value, valueDims, 3));
  unsigned keyBatch = op.getRows()
                          ? addFactor(rule, logicalSize(key, keyDims, 0),
                                      /*blocked=*/true)
                          : batch;
  unsigned keyHead =
      grouped ? addFactor(rule, keyHeads, /*blocked=*/true) : head;

  addOperand(rule, operandNumber(op.getQueryMutable()),
             permuted(queryDims, {batch, head, queries, embed}));
  addOperand(rule, operandNumber(op.getKeyMutable()),
             permuted(keyDims, {keyBatch, keyHead, keys, embed}));
  addOperand(rule, operandNumber(op.getValueMutable()),
             permuted(valueDims, {keyBatch, keyHead, keys, valueEmbed}));
  if (Value mask = op.getMask()) {
    // [B, H, L, S] in logical order, any dim of size 1 broadcast.
    auto type = cast<RankedTensorType>(mask.getType());
    const unsigned logical[] = {batch, head, queries, keys};
    TensorFactors factors(4);
    for (unsigned dim = 0; dim < 4; ++dim)
      if (type.getDimSize(dim) == rule.factors[logical[dim]].size)
        factors[dim] = logical[dim];
    addOperand(rule, operandNumber(op.getMaskMutable()), std::move(factors));
  }
  if (op.getRows())
    addOperand(rule, operandNumber(op.getRowsMutable()), TensorFactors{batch});
  if (op.getPositions())
    addOperand(rule, operandNumber(op.getPositionsMutable()),
               TensorFactors{batch});
  TensorFactors result =
      permuted(resultDims, {batch, head, queries, valueEmbed});
  addOperand(rule, operandNumber(op.getInitMutable()), result);
  TensorFactors logSumExp{batch, head, queries};
  if (op.getLogSumExpInit())
    addOperand(rule, operandNumber(op.getLogSumExpInitMutable()), logSumExp);
  rule.results.push_back(std::move(result));
  if (op.getLogSumExp())
    rule.results.push_back(std::move(logSumExp));
  return rule;
}
