//===- IndexBounds.h - The index inputs the runtime checks ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The manifest's per-entry "index_bounds" (dtensor/Formats/Manifest.h) of a
// training step's entries: inputs whose values index the rows of a table
// (the token ids of an embedding) or name classes (a cross-entropy's
// targets, dtensor.class_index). Read from the global function, before
// partitioning, where the gather still reads the whole input; the runtime
// then checks each rank's shard before a step, so that an id outside the
// vocabulary is an error on every rank and changes no parameter, as
// PyTorch's embedding and cross_entropy raise.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_DRIVER_INDEXBOUNDS_H
#define DTENSOR_COMPILER_DRIVER_INDEXBOUNDS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace dtensor::driver {

/// An argument of a function whose values must lie in [0, bound): the row
/// count of `table` (its dtensor.name, "" when the table is no argument) or
/// the class count of a cross-entropy; `ignoreIndex`, when set, is allowed
/// too (no class).
struct IndexBound {
  unsigned argument = 0;
  int64_t bound = 0;
  std::string table;
  std::optional<int64_t> ignoreIndex;
};

/// The index bounds of global function `function`: each tensor.gather whose
/// indices are an integer argument, directly or through reshapes, casts,
/// layout constraints and elementwise integer conversions, and whose source
/// has a static size along the gathered dim; each op's dtensor.class_index
/// operand traced the same way. Each argument once, with the smallest
/// bound, and an ignore_index only when every use allows the same one.
std::vector<IndexBound> collectIndexBounds(mlir::func::FuncOp function);

} // namespace dtensor::driver

#endif // DTENSOR_COMPILER_DRIVER_INDEXBOUNDS_H
