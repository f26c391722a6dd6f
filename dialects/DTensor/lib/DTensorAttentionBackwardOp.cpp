//===- DTensorAttentionBackwardOp.cpp - dtensor.attention_backward --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The verifier of the attention's gradients: the forward's operands (no
// rows), its result and log-sum-exp, the result's gradient, and three
// inits shaped as the query, the key and the value.
//
//===----------------------------------------------------------------------===//

#include "AttentionShapes.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dtensor;

LogicalResult AttentionBackwardOp::verify() {
  using namespace attention_shapes;
  Operand operands[] = {{"query", getQuery(), getQueryDims()},
                        {"key", getKey(), getKeyDims()},
                        {"value", getValue(), getValueDims()},
                        {"out", getOut(), getResultDims()},
                        {"d_out", getDOut(), getResultDims()},
                        {"d_query init", getDQueryInit(), getQueryDims()},
                        {"d_key init", getDKeyInit(), getKeyDims()},
                        {"d_value init", getDValueInit(), getValueDims()}};
  Type element = getQuery().getType().getElementType();
  if (failed(verifyOperandTypes(*this, operands, element)))
    return failure();
  Value inits[] = {getDQueryInit(), getDKeyInit(), getDValueInit()};
  for (auto [result, init] : llvm::zip_equal(getResults(), inits))
    if (result.getType() != init.getType())
      return emitOpError() << "result type " << result.getType()
                           << " differs from init type " << init.getType();
  auto sameLogicalShape = [&](const Operand &a, const Operand &b) {
    for (int64_t dim = 0; dim < 4; ++dim)
      if (differ(size(a, dim), size(b, dim)))
        return false;
    return true;
  };
  FailureOr<Sizes> sizes =
      verifyShapes(*this, operands[0], operands[1], operands[2], operands[3],
                   /*sameBatch=*/true, "", "out");
  if (failed(sizes))
    return failure();
  if (!sameLogicalShape(operands[3], operands[4]))
    return emitOpError() << "d_out must have the logical shape of out";
  for (unsigned index = 5; index < 8; ++index)
    if (!sameLogicalShape(operands[index], operands[index - 5]))
      return emitOpError() << operands[index].name
                           << " must have the logical shape of "
                           << operands[index - 5].name;
  auto lse = cast<RankedTensorType>(getLse().getType());
  if (lse.getRank() != 3 || lse.getElementType() != element ||
      differ(lse.getDimSize(0), sizes->batch) ||
      differ(lse.getDimSize(1), sizes->heads) ||
      differ(lse.getDimSize(2), sizes->queries))
    return emitOpError() << "lse must be [B, H, L] in logical order, of the "
                            "query's element type";
  if (failed(
          verifyBatchIndices(*this, "positions", getPositions(), sizes->batch)))
    return failure();
  if (getPositions() && !getCausal())
    return emitOpError() << "positions need causal";
  return verifyMask(*this, getMask(), *sizes, element);
}
