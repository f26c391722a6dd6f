//===- TargetCapabilitiesTest.cpp - what each target states ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Driver/TargetCapabilities.h"

#include <gtest/gtest.h>

using dtensor::driver::getTargetCapabilities;

// Only the CPU runtime has the fused attention kernel.
TEST(TargetCapabilitiesTest, CpuHasTheAttentionKernel) {
  EXPECT_TRUE(getTargetCapabilities("cpu", /*fusedAttention=*/true,
                                    /*emulateGpuKernels=*/false)
                  .attentionKernel);
  EXPECT_FALSE(getTargetCapabilities("cuda", true, false).attentionKernel);
}

// --no-fused-attention turns it off; emulating the CUDA target's kernels
// on the CPU has what the CUDA target has.
TEST(TargetCapabilitiesTest, UserChoicesTurnItOff) {
  EXPECT_FALSE(getTargetCapabilities("cpu", false, false).attentionKernel);
  EXPECT_FALSE(getTargetCapabilities("cpu", true, true).attentionKernel);
  EXPECT_FALSE(getTargetCapabilities("cuda", false, true).attentionKernel);
}
