//===- InitAllPasses.h - Passes and pipelines of dtensor-opt ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Registers every dtensor pass, stage by stage, and the named pipelines:
// --dtensor-distribute, --dtensor-cpu-lowering and --dtensor-gpu-lowering.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_INITALLPASSES_H
#define DTENSOR_INITALLPASSES_H

namespace dtensor {

/// Registers the passes and pipelines with MLIR's global pass registry.
void registerAllPasses();

} // namespace dtensor

#endif // DTENSOR_INITALLPASSES_H
