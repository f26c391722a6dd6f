//===- FactoryOpsTest.cpp - arange, full, zeros, ones ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>

using namespace dtensor::frontend::test;

namespace {

using FactoryOpsTest = OpTest;

TEST_F(FactoryOpsTest, ArangeIntegers) {
  // Integer bounds give i64, as torch.arange.
  Tensor y = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                        "end": 5})",
                    {});
  EXPECT_EQ(y.dtype, Dtype::I64);
  expectNear(y, {5}, {0, 1, 2, 3, 4}, 0);
  // A negative step; the length rounds up: ceil((-1 - 7) / -3) = 3.
  Tensor down = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                           "start": 7, "end": -1, "step": -3,
                           "dtype": "i32"})",
                       {});
  EXPECT_EQ(down.dtype, Dtype::I32);
  expectNear(down, {3}, {7, 4, 1}, 0);
  Tensor odd = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                          "start": -4, "end": 6, "step": 4})",
                      {});
  expectNear(odd, {3}, {-4, 0, 4}, 0);
  // An empty range.
  expectNear(runOne(R"({"op": "arange", "inputs": [], "output": "y",
                        "start": 3, "end": 3})",
                    {}),
             {0}, {}, 0);
  // Beyond 2^53, exactly.
  Tensor big = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                          "start": 9007199254740993, "end": 9007199254740995})",
                      {});
  ASSERT_EQ(big.shape, std::vector<int64_t>{2});
}

TEST_F(FactoryOpsTest, ArangeFloats) {
  // A float bound gives f32: start + i * step, ceil((end - start) / step)
  // elements.
  Tensor y = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                        "start": 0, "end": 1, "step": 0.3})",
                    {});
  EXPECT_EQ(y.dtype, Dtype::F32);
  expectNear(y, {4}, roundTo(Dtype::F32, {0, 0.3, 0.6, 0.9}), 0);
  Tensor half = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                           "start": 2.5, "end": -1, "step": -0.5})",
                       {});
  expectNear(half, {7}, {2.5, 2, 1.5, 1, 0.5, 0, -0.5}, 0);
  // Integer bounds with a float dtype; f16 and bf16 round the values.
  Tensor f = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                        "end": 3, "dtype": "f32"})",
                    {});
  EXPECT_EQ(f.dtype, Dtype::F32);
  expectNear(f, {3}, {0, 1, 2}, 0);
  Tensor bf = runOne(R"({"op": "arange", "inputs": [], "output": "y",
                         "start": 250, "end": 262, "step": 3,
                         "dtype": "bf16"})",
                     {});
  EXPECT_EQ(bf.dtype, Dtype::BF16);
  expectNear(bf, {4}, roundTo(Dtype::BF16, {250, 253, 256, 259}), 0);
}

TEST_F(FactoryOpsTest, ArangeErrors) {
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y"})", {}),
            "$.model.ops[0] (arange): missing attribute 'end'");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "end": 3, "step": 0})",
                       {}),
            "$.model.ops[0].step (arange): step must not be 0");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "end": -3})",
                       {}),
            "$.model.ops[0].end (arange): step 1 leads away from end -3 "
            "(start 0)");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "end": 3, "step": -1})",
                       {}),
            "$.model.ops[0].step (arange): step -1 leads away from end 3 "
            "(start 0)");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "start": 0.5, "end": 3, "dtype": "i32"})",
                       {}),
            "$.model.ops[0].start (arange): dtype i32 needs integer start, "
            "end and step; start is 0.5");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "start": -2147483649, "end": 0,
                           "dtype": "i32"})",
                       {}),
            "$.model.ops[0] (arange): arange value -2147483649 does not fit "
            "the dtype i32");
  EXPECT_EQ(buildError(R"({"op": "arange", "inputs": [], "output": "y",
                           "end": 3, "dtype": "bool"})",
                       {}),
            "$.model.ops[0].dtype: expected one of \"f32\", \"f16\", "
            "\"bf16\", \"i32\", \"i64\"; got the string \"bool\"");
}

TEST_F(FactoryOpsTest, FullZerosOnes) {
  Tensor y = runOne(R"({"op": "full", "inputs": [], "output": "y",
                        "shape": [2, 3], "value": -2.5})",
                    {});
  EXPECT_EQ(y.dtype, Dtype::F32);
  expectNear(y, {2, 3}, std::vector<double>(6, -2.5), 0);
  Tensor i = runOne(R"({"op": "full", "inputs": [], "output": "y",
                        "shape": [3], "value": -7, "dtype": "i32"})",
                    {});
  EXPECT_EQ(i.dtype, Dtype::I32);
  expectNear(i, {3}, {-7, -7, -7}, 0);
  Tensor h = runOne(R"({"op": "full", "inputs": [], "output": "y",
                        "shape": [2], "value": 0.1, "dtype": "f16"})",
                    {});
  EXPECT_EQ(h.dtype, Dtype::F16);
  expectNear(h, {2}, roundTo(Dtype::F16, {0.1, 0.1}), 0);

  Tensor z = runOne(R"({"op": "zeros", "inputs": [], "output": "y",
                        "shape": [2, 2], "dtype": "i64"})",
                    {});
  EXPECT_EQ(z.dtype, Dtype::I64);
  expectNear(z, {2, 2}, {0, 0, 0, 0}, 0);
  Tensor o = runOne(R"({"op": "ones", "inputs": [], "output": "y",
                        "shape": [3]})",
                    {});
  EXPECT_EQ(o.dtype, Dtype::F32);
  expectNear(o, {3}, {1, 1, 1}, 0);
  Tensor b = runOne(R"({"op": "ones", "inputs": [], "output": "y",
                        "shape": [], "dtype": "bf16"})",
                    {});
  EXPECT_EQ(b.dtype, Dtype::BF16);
  expectNear(b, {}, {1}, 0);
  expectNear(runOne(R"({"op": "zeros", "inputs": [], "output": "y",
                        "shape": [0, 4]})",
                    {}),
             {0, 4}, {}, 0);
}

TEST_F(FactoryOpsTest, FullErrors) {
  EXPECT_EQ(buildError(R"({"op": "full", "inputs": [], "output": "y",
                           "shape": [2]})",
                       {}),
            "$.model.ops[0] (full): missing attribute 'value'");
  EXPECT_EQ(buildError(R"({"op": "zeros", "inputs": [], "output": "y"})", {}),
            "$.model.ops[0] (zeros): missing attribute 'shape'");
  EXPECT_EQ(
      buildError(R"({"op": "ones", "inputs": [], "output": "y",
                           "shape": [2, -3]})",
                 {}),
      "$.model.ops[0].shape (ones): shape [2, -3] has a negative size -3");
  EXPECT_EQ(buildError(R"({"op": "full", "inputs": [], "output": "y",
                           "shape": [2], "value": 0.5, "dtype": "i64"})",
                       {}),
            "$.model.ops[0].value (full): the result has dtype i64, so 'value' "
            "must be an integer, not 0.5 (torch.full would truncate it)");
  EXPECT_EQ(
      buildError(R"({"op": "full", "inputs": [], "output": "y",
                           "shape": [2], "value": 3000000000, "dtype": "i32"})",
                 {}),
      "$.model.ops[0].value (full): value 3000000000 does not fit the dtype "
      "i32 of the result");
  EXPECT_EQ(buildError(R"({"op": "full", "inputs": [], "output": "y",
                           "shape": [2], "value": 1e5, "dtype": "f16"})",
                       {}),
            "$.model.ops[0].value (full): value 100000 does not fit the dtype "
            "f16 of the result (it would overflow to infinity)");
}

} // namespace
