//===- AttentionShapes.cpp - Shape checks of the attention ops ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <string>

using namespace mlir;

namespace dtensor::attention_shapes {

bool differ(int64_t a, int64_t b) {
  return a != b && !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b);
}

int64_t size(const Operand &operand, int64_t dim) {
  return cast<RankedTensorType>(operand.value.getType())
      .getDimSize(operand.dims[dim]);
}

LogicalResult verifyOperandTypes(Operation *op, ArrayRef<Operand> operands,
                                 Type element) {
  if (!isa<FloatType>(element))
    return op->emitOpError()
           << "element type must be a float type, not " << element;
  for (const Operand &operand : operands) {
    auto type = cast<RankedTensorType>(operand.value.getType());
    if (type.getRank() != 4)
      return op->emitOpError()
             << operand.name << " must have rank 4, not " << type.getRank();
    SmallVector<int64_t> sorted(operand.dims);
    llvm::sort(sorted);
    if (sorted != SmallVector<int64_t>{0, 1, 2, 3})
      return op->emitOpError()
             << operand.name << "'s dims must be a permutation of [0, 4)";
    if (type.getElementType() != element)
      return op->emitOpError()
             << operand.name << " must have the query's element type";
  }
  return success();
}

FailureOr<Sizes> verifyShapes(Operation *op, const Operand &q, const Operand &k,
                              const Operand &v, const Operand &out,
                              bool sameBatch, StringRef batchNote,
                              StringRef outName) {
  Sizes sizes{size(q, 0), size(q, 1), size(q, 2), size(k, 1), size(k, 2)};
  if (differ(size(k, 3), size(q, 3)))
    return op->emitOpError() << "key and query need the same last dim E";
  if (differ(size(v, 0), size(k, 0)) || differ(size(v, 1), sizes.kvHeads) ||
      differ(size(v, 2), sizes.keys))
    return op->emitOpError() << "value must have the key's batch, heads and "
                                "sequence";
  if (!ShapedType::isDynamic(sizes.heads) &&
      !ShapedType::isDynamic(sizes.kvHeads) &&
      (sizes.kvHeads == 0 ? sizes.heads != 0
                          : sizes.heads % sizes.kvHeads != 0))
    return op->emitOpError()
           << "query heads " << sizes.heads
           << " are not a multiple of key/value heads " << sizes.kvHeads;
  if (sameBatch && differ(size(k, 0), sizes.batch))
    return op->emitOpError()
           << "key batch " << size(k, 0) << " differs from query batch "
           << sizes.batch << batchNote;
  if (differ(size(out, 0), sizes.batch) || differ(size(out, 1), sizes.heads) ||
      differ(size(out, 2), sizes.queries) || differ(size(out, 3), size(v, 3)))
    return op->emitOpError()
           << outName << " must be [B, H, L, Ev] in logical order";
  return sizes;
}

LogicalResult verifyBatchIndices(Operation *op, StringRef name, Value indices,
                                 int64_t batch) {
  if (!indices)
    return success();
  auto type = cast<RankedTensorType>(indices.getType());
  if (type.getRank() != 1 || differ(type.getDimSize(0), batch) ||
      !type.getElementType().isInteger(64))
    return op->emitOpError()
           << name << " must be tensor<"
           << (ShapedType::isDynamic(batch) ? std::string("?")
                                            : std::to_string(batch))
           << "xi64>";
  return success();
}

LogicalResult verifyMask(Operation *op, Value mask, const Sizes &sizes,
                         Type element) {
  if (!mask)
    return success();
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t logical[] = {sizes.batch, sizes.heads, sizes.queries, sizes.keys};
  bool broadcasts = type.getRank() == 4 && type.getElementType() == element;
  for (int64_t dim = 0; broadcasts && dim < 4; ++dim)
    broadcasts = !differ(type.getDimSize(dim), logical[dim]) ||
                 type.getDimSize(dim) == 1;
  if (!broadcasts)
    return op->emitOpError() << "mask must broadcast to [B, H, L, S] (each "
                                "dim equal or 1), of the query's element type";
  return success();
}

} // namespace dtensor::attention_shapes
