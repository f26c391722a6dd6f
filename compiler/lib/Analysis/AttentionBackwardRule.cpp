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

ShardingRule dtensor::detail::getAttentionBackwardRule(AttentionBackwardOp op) {
  ArrayRef<int64_t> queryDims = op.getQueryDims(), keyDims = op.getKeyDims(),
                    valueDims = op.getValueDims(),
                    resultDims = op.getResultDims();
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  ShardingRule rule;
  unsigned batch = addFactor(rule, logicalSize(query, queryDims, 0));
  int64_t heads = logicalSize(query, queryDims, 1);
  int64_t keyHeads = logicalSize(key, keyDims, 1);
  // Under grouped-query attention a rank's query heads must read the key
  // heads it holds, and its dK/dV sum over the whole group: both blocked.
  bool grouped = heads != keyHeads || ShapedType::isDynamic(heads);
  unsigned head = addFactor(rule, heads, /*blocked=*/grouped);
  unsigned queries =
      addFactor(rule, logicalSize(query, queryDims, 2), /*blocked=*/true);
  unsigned embed =
      addFactor(rule, logicalSize(query, queryDims, 3), /*blocked=*/true);
  unsigned keys =
      addFactor(rule, logicalSize(key, keyDims, 2), /*blocked=*/true);
  unsigned valueEmbed =
      addFactor(rule, logicalSize(value, valueDims, 3), /*blocked=*/true);
  unsigned keyHead =
      grouped ? addFactor(rule, keyHeads, /*blocked=*/true) : head;

  TensorFactors queryFactors =
      permuted(queryDims, {batch, head, queries, embed});
  TensorFactors keyFactors = permuted(keyDims, {batch, keyHead, keys, embed});
  TensorFactors valueFactors =
      permuted(valueDims, {batch, keyHead, keys, valueEmbed});
  TensorFactors outFactors =
      permuted(resultDims, {batch, head, queries, valueEmbed});
  addOperand(rule, operandNumber(op.getQueryMutable()), queryFactors);
  addOperand(rule, operandNumber(op.getKeyMutable()), keyFactors);
  addOperand(rule, operandNumber(op.getValueMutable()), valueFactors);
  addOperand(rule, operandNumber(op.getOutMutable()), outFactors);
  unsigned dOut = rule.operands.size();
  addOperand(rule, operandNumber(op.getDOutMutable()), outFactors);
  addOperand(rule, operandNumber(op.getLseMutable()),
             TensorFactors{batch, head, queries});
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
  if (op.getPositions())
    addOperand(rule, operandNumber(op.getPositionsMutable()),
               TensorFactors{batch});
  addOperand(rule, operandNumber(op.getDQueryInitMutable()), queryFactors);
  addOperand(rule, operandNumber(op.getDKeyInitMutable()), keyFactors);
  addOperand(rule, operandNumber(op.getDValueInitMutable()), valueFactors);
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
