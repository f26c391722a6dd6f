//===- RunInputsTest.cpp - A run session's inputs and weights -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunInputs.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

TEST(RunInputsTest, RankPathReplacesEveryField) {
  EXPECT_EQ(rankPath("x.{rank}.npy", 3), "x.3.npy");
  EXPECT_EQ(rankPath("{rank}/x.{rank}.npy", 12), "12/x.12.npy");
  EXPECT_EQ(rankPath("x.npy", 1), "x.npy");
  EXPECT_EQ(rankPath("{rank}", 0), "0");
  // Only the whole field counts.
  EXPECT_EQ(rankPath("{ran}{rank", 2), "{ran}{rank");
}

TEST(RunInputsTest, MissingWeightNamesTheWeightsFile) {
  RunTensor weight{"w", DTENSOR_WEIGHT, DTENSOR_F32, {4, 8}, 0};
  EXPECT_EQ(missingValueMessage(weight),
            "weight 'w' (f32[4x8]) has no value: give "
            "--weights FILE.safetensors or --random-inputs SEED");
}

TEST(RunInputsTest, MissingInputNamesItsFlags) {
  RunTensor input{"ids", DTENSOR_INPUT, DTENSOR_I64, {2}, 1};
  EXPECT_EQ(missingValueMessage(input),
            "input 'ids' (i64[2]) has no value: give --input ids=FILE.npy, "
            "--input-local ids=FILE.{rank}.npy or --random-inputs SEED");
}

} // namespace
