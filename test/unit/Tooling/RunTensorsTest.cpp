//===- RunTensorsTest.cpp - The tensors a run session sees ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunTensors.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

std::vector<RunTensor> someTensors() {
  return {{"x", DTENSOR_INPUT, DTENSOR_F32, {2, 3}, 0},
          {"w", DTENSOR_WEIGHT, DTENSOR_BF16, {3, 4}, 1},
          {"cache", DTENSOR_STATE, DTENSOR_F16, {8}, 2},
          {"y", DTENSOR_OUTPUT, DTENSOR_F32, {2, 4}, 3}};
}

TEST(RunTensorsTest, SizesAndType) {
  RunTensor tensor{"x", DTENSOR_INPUT, DTENSOR_F64, {2, 3, 5}, 0};
  EXPECT_EQ(tensor.numElements(), 30u);
  EXPECT_EQ(tensor.bytes(), 240u);
  EXPECT_EQ(tensor.typeString(), "f64[2x3x5]");
  RunTensor scalar{"s", DTENSOR_INPUT, DTENSOR_I32, {}, 0};
  EXPECT_EQ(scalar.numElements(), 1u);
  EXPECT_EQ(scalar.typeString(), "i32[]");
}

TEST(RunTensorsTest, KnownNamesPass) {
  std::vector<RunTensor> tensors = someTensors();
  EXPECT_EQ(unknownTensorError(tensors, "--input",
                               {{"x", "x.npy"}, {"w", "w.npy"}}, false),
            "");
  EXPECT_EQ(unknownTensorError(tensors, "--output", {{"y", "y.npy"}}, true),
            "");
  // State may be set and read.
  EXPECT_EQ(unknownTensorError(tensors, "--input", {{"cache", "c.npy"}}, false),
            "");
  EXPECT_EQ(unknownTensorError(tensors, "--output", {{"cache", "c.npy"}}, true),
            "");
}

TEST(RunTensorsTest, UnknownNamesListTheCandidates) {
  std::vector<RunTensor> tensors = someTensors();
  EXPECT_EQ(
      unknownTensorError(tensors, "--input-local", {{"z", "z.npy"}}, false),
      "--input-local: the program has no input 'z' (it has: x, w, "
      "cache)");
  // An output is not an input, nor an input an output.
  EXPECT_EQ(unknownTensorError(tensors, "--input", {{"y", "y.npy"}}, false),
            "--input: the program has no input 'y' (it has: x, w, cache)");
  EXPECT_EQ(unknownTensorError(tensors, "--output", {{"x", "x.npy"}}, true),
            "--output: the program has no output 'x' (it has: cache, y)");
}

} // namespace
