//===- StepProgressTest.cpp - The per-step JSON log record ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/StepProgress.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

TEST(StepProgressTest, RecordIsOneJsonObjectInOrder) {
  EXPECT_EQ(StepProgress::record(2, 7, 1.5, 2000.0,
                                 {{"loss", 5.25}, {"grad_norm", 0.5}}),
            R"({"step":2,"batch":7,"ms":1.5,"tokens_per_s":2000.0,)"
            R"("loss":5.25,"grad_norm":0.5})");
  // Without --data there are no tokens per second.
  EXPECT_EQ(StepProgress::record(0, 0, 3.0, 0.0, {}),
            R"({"step":0,"batch":0,"ms":3.0})");
}
