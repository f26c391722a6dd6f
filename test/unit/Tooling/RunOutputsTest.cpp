//===- RunOutputsTest.cpp - A run session's outputs -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunOutputs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace dtensor::tooling;

namespace {

TEST(RunOutputsTest, DescribesAnOutputsRange) {
  RunTensor tensor{"y", DTENSOR_OUTPUT, DTENSOR_F32, {2, 2}, 0};
  std::vector<float> values = {-1.0f, 2.5f, 0.5f, 2.0f};
  EXPECT_EQ(
      describeOutput(tensor, reinterpret_cast<const uint8_t *>(values.data())),
      "output y: f32[2x2] min -1 max 2.5 mean 1");
}

TEST(RunOutputsTest, DescribesIntegers) {
  RunTensor tensor{"ids", DTENSOR_OUTPUT, DTENSOR_I64, {3}, 0};
  std::vector<int64_t> values = {7, 1234567, -2};
  EXPECT_EQ(
      describeOutput(tensor, reinterpret_cast<const uint8_t *>(values.data())),
      "output ids: i64[3] min -2 max 1.23457e+06 mean 411524");
}

TEST(RunOutputsTest, EmptyOutputIsZeros) {
  RunTensor tensor{"e", DTENSOR_OUTPUT, DTENSOR_F32, {0, 3}, 0};
  EXPECT_EQ(describeOutput(tensor, nullptr),
            "output e: f32[0x3] min 0 max 0 mean 0");
}

} // namespace
