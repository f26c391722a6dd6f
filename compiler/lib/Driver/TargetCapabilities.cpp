//===- TargetCapabilities.cpp - What a code generation target offers ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Driver/TargetCapabilities.h"

using namespace dtensor::driver;

TargetCapabilities dtensor::driver::getTargetCapabilities(
    llvm::StringRef target, bool fusedAttention, bool emulateGpuKernels) {
  TargetCapabilities capabilities;
  // The CPU runtime has the fused attention kernel (dtensor_rt_attention);
  // the CUDA runtime has none, and emulating its kernels on the CPU must not
  // use one either.
  bool cpu = target == "cpu" && !emulateGpuKernels;
  capabilities.attentionKernel = cpu && fusedAttention;
  return capabilities;
}
