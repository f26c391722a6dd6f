//===- EmbeddingOps.cpp - embedding ---------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A lookup is a tensor.gather of table rows. Its sharding rule treats the
// vocab dim as a sum reduction: with the table sharded on it, partition
// gives each rank a masked lookup of the rows it holds (zeros elsewhere) and
// the partial results are summed. An id outside [0, V) gives a row of zeros,
// on one rank as on many (the CPU lowering of an unsharded gather checks
// the range too).
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

EmitResult ops::emitEmbedding(OpEmitter &emitter) {
  if (failed(checkIntInput(emitter, 0)))
    return failure();
  RankedTensorType ids = emitter.inputType(0);
  RankedTensorType table = emitter.inputType(1);
  if (table.getRank() != 2)
    return emitter.emitInputError(1)
           << "table '" << emitter.inputName(1) << "' has shape "
           << formatShape(table.getShape()) << "; expected [V, D]";

  // gather wants the coordinates in a trailing dim: ids[..., 1].
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  Value indices = insertUnitDims(b, loc, emitter.input(0), {ids.getRank()});
  auto indicesType = cast<RankedTensorType>(indices.getType());
  RankedTensorType resultType = tensor::GatherOp::inferResultType(
      table, indicesType, /*gatherDims=*/{0}, /*rankReduced=*/true);
  Value rows = tensor::GatherOp::create(b, loc, resultType, emitter.input(1),
                                        indices, ArrayRef<int64_t>{0});
  return SmallVector<Value>{rows};
}
