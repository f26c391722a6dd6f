//===- CacheOps.cpp - cache_write -----------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cache_write writes new rows (keys or values of a step) into a cache
// `[S, M, ...]` at a slot and a starting position per row: one
// dtensor.write_rows. Its trailing dims (KV heads, head dim) may be sharded;
// a row whose slot or positions fall outside the cache is skipped.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

/// Input `i` must be a 1-D i32 or i64 tensor of `rows` elements, one per
/// row of values.
static LogicalResult checkRowIndices(OpEmitter &emitter, unsigned i,
                                     int64_t rows) {
  RankedTensorType type = emitter.inputType(i);
  Type element = type.getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return emitter.emitInputError(i)
           << "input '" << emitter.inputName(i) << "' has dtype "
           << formatDtype(element) << "; expected i32 or i64";
  if (type.getRank() == 1 && type.getDimSize(0) == rows)
    return success();
  return emitter.emitInputError(i)
         << "input '" << emitter.inputName(i) << "' has shape "
         << formatShape(type.getShape()) << "; expected [" << rows
         << "], one entry per row of values '" << emitter.inputName(1) << "'";
}

EmitResult ops::emitCacheWrite(OpEmitter &emitter) {
  if (failed(checkMinRank(emitter, 0, 2, "[S, M, ...]")))
    return failure();
  RankedTensorType cache = emitter.inputType(0);
  RankedTensorType values = emitter.inputType(1);
  ArrayRef<int64_t> rest = cache.getShape().drop_front(2);
  if (values.getRank() != cache.getRank() ||
      values.getShape().drop_front(2) != rest) {
    SmallVector<int64_t> expected(rest);
    std::string shape = formatShape(expected);
    return emitter.emitInputError(1)
           << "input '" << emitter.inputName(1) << "' has shape "
           << formatShape(values.getShape()) << "; cache '"
           << emitter.inputName(0) << "' " << formatShape(cache.getShape())
           << " expects [B, T" << (rest.empty() ? "" : ", ") << shape.substr(1);
  }
  if (failed(checkSameDtype(emitter, 1, 0)))
    return failure();
  int64_t rows = values.getDimSize(1), positions = cache.getDimSize(1);
  if (rows > positions)
    return emitter.emitInputError(1)
           << "input '" << emitter.inputName(1) << "' writes " << rows
           << " positions per row but cache '" << emitter.inputName(0)
           << "' holds " << positions;
  if (failed(checkRowIndices(emitter, 2, values.getDimSize(0))) ||
      failed(checkRowIndices(emitter, 3, values.getDimSize(0))))
    return failure();
  Value result =
      WriteRowsOp::create(emitter.builder, emitter.loc, cache, emitter.input(1),
                          emitter.input(0), emitter.input(2), emitter.input(3));
  return SmallVector<Value>{result};
}
