//===- ReductionOpsTest.cpp - sum, mean, max, argmax ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>

using namespace dtensor::frontend::test;

namespace {

using ReductionOpsTest = OpTest;

TEST_F(ReductionOpsTest, SumOverOneDim) {
  Tensor x = ramp(Dtype::F32, {2, 3, 4}, 1);
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k)
      expected.push_back(x.at({i, 0, k}) + x.at({i, 1, k}) + x.at({i, 2, k}));
  expectNear(runOne(R"({"op": "sum", "inputs": ["x"], "output": "y",
                        "dim": 1})",
                    {x}),
             {2, 4}, expected, 0);
  expectNear(runOne(R"({"op": "sum", "inputs": ["x"], "output": "y",
                        "dim": -2, "keepdim": true})",
                    {x}),
             {2, 1, 4}, expected, 0);
}

TEST_F(ReductionOpsTest, SumOverAll) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  expectNear(runOne(R"({"op": "sum", "inputs": ["x"], "output": "y"})", {x}),
             {}, {15}, 0);
  // An empty list also reduces every dim (PyTorch).
  expectNear(runOne(R"({"op": "sum", "inputs": ["x"], "output": "y",
                        "dim": [], "keepdim": true})",
                    {x}),
             {1, 1}, {15}, 0);
}

TEST_F(ReductionOpsTest, SumOfIntegersIsI64) {
  // 7e9 does not fit in i32.
  Tensor x = tensor(Dtype::I32, {2, 2}, {1e9, 2e9, 2e9, 2e9});
  Tensor y = runOne(R"({"op": "sum", "inputs": ["x"], "output": "y",
                        "dim": [0, 1]})",
                    {x});
  EXPECT_EQ(y.dtype, Dtype::I64);
  expectNear(y, {}, {7e9}, 0);
}

TEST_F(ReductionOpsTest, SumHalfAccumulatesInF32) {
  // 2048 + 1 + 1 ... is exact in f32 but stalls at 2048 in f16.
  std::vector<double> values(9, 1);
  values[0] = 2048;
  Tensor x = tensor(Dtype::F16, {9}, values);
  expectNear(runOne(R"({"op": "sum", "inputs": ["x"], "output": "y"})", {x}),
             {}, {2056}, 0);
}

TEST_F(ReductionOpsTest, Mean) {
  Tensor x = ramp(Dtype::F32, {2, 3, 4}, 1);
  std::vector<double> expected;
  for (int64_t j = 0; j < 3; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k)
        sum += x.at({i, j, k});
    expected.push_back(sum / 8);
  }
  expectNear(runOne(R"({"op": "mean", "inputs": ["x"], "output": "y",
                        "dim": [2, 0]})",
                    {x}),
             {3}, expected, 1e-7);
  expectNear(runOne(R"({"op": "mean", "inputs": ["x"], "output": "y",
                        "dim": [0, 2], "keepdim": true})",
                    {x}),
             {1, 3, 1}, expected, 1e-7);
}

TEST_F(ReductionOpsTest, MeanOfNothingIsNan) {
  Tensor x = tensor(Dtype::F32, {2, 0}, {});
  expectNear(runOne(R"({"op": "mean", "inputs": ["x"], "output": "y",
                        "dim": 1})",
                    {x}),
             {2}, {NAN, NAN}, 0);
}

TEST_F(ReductionOpsTest, Max) {
  Tensor x = noise(Dtype::F32, {3, 4}, 5);
  std::vector<double> expected;
  for (int64_t i = 0; i < 3; ++i) {
    double max = -INFINITY;
    for (int64_t j = 0; j < 4; ++j)
      max = std::max(max, x.at({i, j}));
    expected.push_back(max);
  }
  expectNear(runOne(R"({"op": "max", "inputs": ["x"], "output": "y",
                        "dim": 1})",
                    {x}),
             {3}, expected, 0);
  Tensor ints = tensor(Dtype::I64, {2, 2}, {-5, -7, -9, -6});
  expectNear(runOne(R"({"op": "max", "inputs": ["x"], "output": "y"})", {ints}),
             {}, {-5}, 0);
  Tensor withNan = tensor(Dtype::BF16, {3}, {1, NAN, 2});
  expectNear(
      runOne(R"({"op": "max", "inputs": ["x"], "output": "y"})", {withNan}), {},
      {NAN}, 0);
}

TEST_F(ReductionOpsTest, Argmax) {
  Tensor x = tensor(Dtype::F32, {2, 4}, {1, 7, 7, 3, -1, -2, -0.5, -3});
  // The first index of the max.
  Tensor y = runOne(R"({"op": "argmax", "inputs": ["x"], "output": "y",
                        "dim": 1})",
                    {x});
  EXPECT_EQ(y.dtype, Dtype::I64);
  expectNear(y, {2}, {1, 2}, 0);
  expectNear(runOne(R"({"op": "argmax", "inputs": ["x"], "output": "y",
                        "dim": 0, "keepdim": true})",
                    {x}),
             {1, 4}, {0, 0, 0, 0}, 0);
  // Without a dim: the index into the flattened tensor.
  expectNear(runOne(R"({"op": "argmax", "inputs": ["x"], "output": "y"})", {x}),
             {}, {1}, 0);
}

TEST_F(ReductionOpsTest, ArgmaxNanAndIntegers) {
  Tensor x = tensor(Dtype::F16, {5}, {1, NAN, 3, NAN, 2});
  expectNear(runOne(R"({"op": "argmax", "inputs": ["x"], "output": "y",
                        "dim": 0})",
                    {x}),
             {}, {1}, 0);
  Tensor ints = tensor(Dtype::I32, {4}, {-3, 9, 9, 2});
  expectNear(runOne(R"({"op": "argmax", "inputs": ["x"], "output": "y",
                        "dim": 0})",
                    {ints}),
             {}, {1}, 0);
}

TEST_F(ReductionOpsTest, Errors) {
  Tensor x = noise(Dtype::F32, {2, 3});
  EXPECT_EQ(buildError(R"({"op": "sum", "inputs": ["x"], "output": "y",
                           "dim": [0, -2]})",
                       {x}),
            "$.model.ops[0].dim (sum): dim 0 appears more than once");
  EXPECT_EQ(buildError(R"({"op": "mean", "inputs": ["x"], "output": "y",
                           "dim": [3]})",
                       {x}),
            "$.model.ops[0].dim (mean): dim 3 is out of range for a tensor of "
            "rank 2 (expected -2 to 1)");
  EXPECT_EQ(buildError(R"({"op": "mean", "inputs": ["x"], "output": "y"})",
                       {ramp(Dtype::I32, {2}, 1)}),
            "$.model.ops[0].inputs[0] (mean): input 'x' has dtype i32; mean "
            "needs a floating-point tensor (f32, f16 or bf16)");
  EXPECT_EQ(buildError(R"({"op": "max", "inputs": ["x"], "output": "y",
                           "dim": 1})",
                       {tensor(Dtype::F32, {2, 0}, {})}),
            "$.model.ops[0] (max): cannot reduce dim 1 of size 0 of input 'x' "
            "[2, 0]: the result has no value");
  EXPECT_EQ(buildError(R"({"op": "argmax", "inputs": ["x"], "output": "y",
                           "dim": [1]})",
                       {x}),
            "$.model.ops[0].dim: expected an integer, got an array");
}

} // namespace
