//===- RowWrites.h - The row writes the runtime checks ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The manifest's per-entry "row_writes" (dtensor/Formats/Manifest.h): the
// dtensor.write_rows ops of an entry whose indices the runtime can check
// before a step because they are the entry's own inputs.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_DRIVER_ROWWRITES_H
#define DTENSOR_COMPILER_DRIVER_ROWWRITES_H

#include "dtensor/Formats/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace dtensor::driver {

/// The row writes of entry `function`, partitioned (per-rank types, global
/// shapes in the manifest), whose arguments the manifest describes as
/// `arguments` (one per argument, in order): every dtensor.write_rows in its
/// body whose cache is a state argument, directly or through a chain of
/// write_rows results, and whose slots and positions are input arguments
/// replicated on every mesh dim (after partitioning an argument used as it
/// is holds the whole tensor), with a static row count. Each distinct one
/// once, in program order.
std::vector<rt::RowWriteInfo>
collectRowWrites(mlir::func::FuncOp function,
                 const std::vector<const rt::TensorInfo *> &arguments);

} // namespace dtensor::driver

#endif // DTENSOR_COMPILER_DRIVER_ROWWRITES_H
