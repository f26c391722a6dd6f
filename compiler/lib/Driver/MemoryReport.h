//===- MemoryReport.h - The memory report of dtensor-compile ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-compile --memory-report: the memory account of the per-rank
// program (dtensor/Reports/MemoryAnalysis.h), whose allocations are read
// inside the target's lowering pipeline, once bufferized and its
// deallocations placed.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_DRIVER_MEMORYREPORT_H
#define DTENSOR_COMPILER_DRIVER_MEMORYREPORT_H

#include "dtensor/Reports/MemoryAnalysis.h"

#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>

namespace dtensor::driver {

/// What adds, to a lowering pipeline after bufferization, the pass that
/// gives `analysis` the bufferized program's allocations.
std::function<void(mlir::OpPassManager &)>
readAllocationsInto(memory::MemoryAnalysis &analysis);

/// Prints the report of `analysis` as `format` ("text" or "json") to `file`,
/// or to standard output when `file` is empty.
mlir::LogicalResult writeMemoryReport(mlir::ModuleOp module,
                                      const memory::MemoryAnalysis &analysis,
                                      llvm::StringRef format,
                                      llvm::StringRef file);

} // namespace dtensor::driver

#endif // DTENSOR_COMPILER_DRIVER_MEMORYREPORT_H
