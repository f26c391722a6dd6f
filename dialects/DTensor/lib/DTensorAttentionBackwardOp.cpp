//===- DTensorAttentionBackwardOp.cpp - dtensor.attention_backward --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The verifier of the attention's gradients: the forward's operands (no
// rows), its result and log-sum-exp, the result's gradient, and three
// inits shaped as the query, the key and the value.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dtensor;

LogicalResult AttentionBackwardOp::verify() {
  struct Operand {
    StringRef name;
    Value value;
    ArrayRef<int64_t> dims;
  } operands[] = {{"query", getQuery(), getQueryDims()},
                  {"key", getKey(), getKeyDims()},
                  {"value", getValue(), getValueDims()},
                  {"out", getOut(), getResultDims()},
                  {"d_out", getDOut(), getResultDims()},
                  {"d_query init", getDQueryInit(), getQueryDims()},
                  {"d_key init", getDKeyInit(), getKeyDims()},
                  {"d_value init", getDValueInit(), getValueDims()}};
  Type element = getQuery().getType().getElementType();
  if (!isa<FloatType>(element))
    return emitOpError() << "element type must be a float type, not "
                         << element;
  for (const Operand &operand : operands) {
    auto type = cast<RankedTensorType>(operand.value.getType());
    if (type.getRank() != 4)
      return emitOpError() << operand.name << " must have rank 4, not "
                           << type.getRank();
    SmallVector<int64_t> sorted(operand.dims);
    llvm::sort(sorted);
    if (sorted != SmallVector<int64_t>{0, 1, 2, 3})
      return emitOpError() << operand.name
                           << "'s dims must be a permutation of [0, 4)";
    if (type.getElementType() != element)
      return emitOpError() << operand.name
                           << " must have the query's element type";
  }
  Value inits[] = {getDQueryInit(), getDKeyInit(), getDValueInit()};
  for (auto [result, init] : llvm::zip_equal(getResults(), inits))
    if (result.getType() != init.getType())
      return emitOpError() << "result type " << result.getType()
                           << " differs from init type " << init.getType();
  auto size = [](const Operand &operand, int64_t dim) {
    return cast<RankedTensorType>(operand.value.getType())
        .getDimSize(operand.dims[dim]);
  };
  // Dynamic sizes (uneven shards) are checked by the runtime kernel; here
  // two sizes disagree only when both are known.
  auto differ = [](int64_t a, int64_t b) {
    return a != b && !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b);
  };
  auto sameLogicalShape = [&](const Operand &a, const Operand &b) {
    for (int64_t dim = 0; dim < 4; ++dim)
      if (differ(size(a, dim), size(b, dim)))
        return false;
    return true;
  };
  const Operand &q = operands[0], &k = operands[1], &v = operands[2],
                &out = operands[3];
  int64_t batch = size(q, 0), heads = size(q, 1), queries = size(q, 2);
  int64_t kvHeads = size(k, 1), keys = size(k, 2);
  if (differ(size(k, 3), size(q, 3)))
    return emitOpError() << "key and query need the same last dim E";
  if (differ(size(v, 0), size(k, 0)) || differ(size(v, 1), kvHeads) ||
      differ(size(v, 2), keys))
    return emitOpError() << "value must have the key's batch, heads and "
                            "sequence";
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      (kvHeads == 0 ? heads != 0 : heads % kvHeads != 0))
    return emitOpError() << "query heads " << heads
                         << " are not a multiple of key/value heads "
                         << kvHeads;
  if (differ(size(k, 0), batch))
    return emitOpError() << "key batch " << size(k, 0)
                         << " differs from query batch " << batch;
  if (differ(size(out, 0), batch) || differ(size(out, 1), heads) ||
      differ(size(out, 2), queries) || differ(size(out, 3), size(v, 3)))
    return emitOpError() << "out must be [B, H, L, Ev] in logical order";
  if (!sameLogicalShape(out, operands[4]))
    return emitOpError() << "d_out must have the logical shape of out";
  for (unsigned index = 5; index < 8; ++index)
    if (!sameLogicalShape(operands[index], operands[index - 5]))
      return emitOpError() << operands[index].name
                           << " must have the logical shape of "
                           << operands[index - 5].name;
  auto lse = cast<RankedTensorType>(getLse().getType());
  if (lse.getRank() != 3 || lse.getElementType() != element ||
      differ(lse.getDimSize(0), batch) || differ(lse.getDimSize(1), heads) ||
      differ(lse.getDimSize(2), queries))
    return emitOpError() << "lse must be [B, H, L] in logical order, of the "
                            "query's element type";
  if (Value positions = getPositions()) {
    auto type = cast<RankedTensorType>(positions.getType());
    if (type.getRank() != 1 || differ(type.getDimSize(0), batch) ||
        !type.getElementType().isInteger(64))
      return emitOpError() << "positions must be tensor<"
                           << (ShapedType::isDynamic(batch)
                                   ? std::string("?")
                                   : std::to_string(batch))
                           << "xi64>";
    if (!getCausal())
      return emitOpError() << "positions need causal";
  }
  if (Value mask = getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    int64_t logical[] = {batch, heads, queries, keys};
    bool broadcasts = type.getRank() == 4 && type.getElementType() == element;
    for (int64_t dim = 0; broadcasts && dim < 4; ++dim)
      broadcasts = !differ(type.getDimSize(dim), logical[dim]) ||
                   type.getDimSize(dim) == 1;
    if (!broadcasts)
      return emitOpError() << "mask must broadcast to [B, H, L, S] (each dim "
                              "equal or 1), of the query's element type";
  }
  return success();
}
