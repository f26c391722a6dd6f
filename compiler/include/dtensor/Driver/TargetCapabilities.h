//===- TargetCapabilities.h - What a codegen target offers -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The stages before code generation shape the per-rank program for the
// target (a fused op where the target has a kernel for it, a ring of shifts
// that only such an op can consume). They ask these capabilities rather
// than the target's name, so that a new target states what it has in one
// place and no codegen pass runs before codegen.
//
//===----------------------------------------------------------------------===//
#ifndef DTENSOR_DRIVER_TARGETCAPABILITIES_H
#define DTENSOR_DRIVER_TARGETCAPABILITIES_H

#include "llvm/ADT/StringRef.h"

namespace dtensor::driver {

struct TargetCapabilities {
  /// The target lowers dtensor.attention (f32) to a fused kernel: the
  /// distribute pipeline keeps the op whole, folds the views around it after
  /// partitioning (--dtensor-fold-attention-views) and may compute attention
  /// over gathered keys as a ring (--dtensor-ring-attention). Without it the
  /// op is decomposed into linalg before propagation
  /// (--dtensor-decompose-attention).
  bool attentionKernel = false;
};

/// The capabilities of `target` ("cpu" or "cuda"), less what the user turned
/// off: `fusedAttention` false (dtensor-compile --no-fused-attention), or
/// `emulateGpuKernels` (the CPU running the CUDA target's kernel mapping,
/// which has what the CUDA target has).
TargetCapabilities getTargetCapabilities(llvm::StringRef target,
                                         bool fusedAttention,
                                         bool emulateGpuKernels);

} // namespace dtensor::driver

#endif // DTENSOR_DRIVER_TARGETCAPABILITIES_H
