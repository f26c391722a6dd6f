//===- EmbeddingOps.cpp - embedding, index_select -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A lookup is a tensor.gather of table rows. Its sharding rule treats the
// vocab dim as a sum reduction: with the table sharded on it, partition
// gives each rank a masked lookup of the rows it holds (zeros elsewhere) and
// the partial results are summed. An id outside [0, V) gives a row of zeros,
// on one rank as on many (the CPU lowering of an unsharded gather checks
// the range too). index_select is the same gather along any dim; the other
// dims of its source pass through the gather's sharding rule, so a cache
// sharded on its heads stays sharded when rows are selected from it.
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

EmitResult ops::emitIndexSelect(OpEmitter &emitter) {
  RankedTensorType source = emitter.inputType(0);
  RankedTensorType index = emitter.inputType(1);
  if (failed(checkMinRank(emitter, 0, 1, "a tensor with a dim to select")))
    return failure();
  FailureOr<int64_t> dim = emitter.getDim("dim", source.getRank());
  if (failed(dim) || failed(checkIntInput(emitter, 1)))
    return failure();
  if (index.getRank() != 1)
    return emitter.emitInputError(1)
           << "index '" << emitter.inputName(1) << "' has shape "
           << formatShape(index.getShape())
           << "; expected a 1-D tensor of indices [N]";

  // gather(x, index[N, 1], gather_dims [dim]) gives [N, x's other dims];
  // the selected dim then moves back to `dim`.
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  Value indices = insertUnitDims(b, loc, emitter.input(1), {1});
  auto indicesType = cast<RankedTensorType>(indices.getType());
  RankedTensorType gatheredType = tensor::GatherOp::inferResultType(
      source, indicesType, /*gatherDims=*/{*dim}, /*rankReduced=*/true);
  Value gathered = tensor::GatherOp::create(
      b, loc, gatheredType, emitter.input(0), indices, ArrayRef<int64_t>{*dim});
  // Result dim d reads gathered dim d + 1 before `dim`, 0 at `dim`, d after.
  SmallVector<int64_t> permutation;
  for (int64_t d = 0; d < source.getRank(); ++d)
    permutation.push_back(d < *dim ? d + 1 : d == *dim ? 0 : d);
  return SmallVector<Value>{createTranspose(b, loc, gathered, permutation)};
}
