//===- SoftmaxOpsTest.cpp - softmax, log_softmax, cross_entropy -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>

using namespace dtensor::frontend::test;

namespace {

using SoftmaxOpsTest = OpTest;

/// log_softmax of x[rows, cols] along dim 1 (or 0 when `columns`).
std::vector<double> logSoftmaxRef(const Tensor &x, bool columns) {
  int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<double> y(x.values.size());
  int64_t outer = columns ? cols : rows, inner = columns ? rows : cols;
  for (int64_t o = 0; o < outer; ++o) {
    auto at = [&](int64_t i) { return columns ? i * cols + o : o * cols + i; };
    double max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < inner; ++i)
      max = std::max(max, x.values[at(i)]);
    for (int64_t i = 0; i < inner; ++i)
      sum += std::exp(x.values[at(i)] - max);
    for (int64_t i = 0; i < inner; ++i)
      y[at(i)] = x.values[at(i)] - max - std::log(sum);
  }
  return y;
}

std::vector<double> expOf(std::vector<double> values) {
  for (double &v : values)
    v = std::exp(v);
  return values;
}

TEST_F(SoftmaxOpsTest, Softmax) {
  Tensor x = noise(Dtype::F32, {3, 5}, 4);
  expectNear(
      runOne(R"({"op": "softmax", "inputs": ["x"], "output": "y"})", {x}),
      {3, 5}, expOf(logSoftmaxRef(x, false)), 1e-6);
  expectNear(runOne(R"({"op": "softmax", "inputs": ["x"], "output": "y",
                        "dim": 0})",
                    {x}),
             {3, 5}, expOf(logSoftmaxRef(x, true)), 1e-6);
}

TEST_F(SoftmaxOpsTest, LogSoftmax) {
  Tensor x = noise(Dtype::F32, {3, 5}, 4);
  expectNear(runOne(R"({"op": "log_softmax", "inputs": ["x"], "output": "y",
                 "dim": -1})",
                    {x}),
             {3, 5}, logSoftmaxRef(x, false), 1e-6);
}

TEST_F(SoftmaxOpsTest, SoftmaxLargeValuesAndHalf) {
  // Shifting by the max keeps exp finite.
  Tensor x = tensor(Dtype::F16, {1, 3}, {1000, 1001, 999});
  Tensor y =
      runOne(R"({"op": "softmax", "inputs": ["x"], "output": "y"})", {x});
  EXPECT_EQ(y.dtype, Dtype::F16);
  expectNear(y, {1, 3}, roundTo(Dtype::F16, expOf(logSoftmaxRef(x, false))),
             1e-3);
}

TEST_F(SoftmaxOpsTest, SoftmaxIsReductionsNotLinalgSoftmax) {
  ASSERT_TRUE(build(R"({"op": "softmax", "inputs": ["x"], "output": "y"})",
                    {noise(Dtype::F32, {3, 5})}));
  std::string ir = printModule();
  EXPECT_EQ(ir.find("linalg.softmax"), std::string::npos) << ir;
  EXPECT_NE(ir.find("arith.maximumf"), std::string::npos) << ir;
}

TEST_F(SoftmaxOpsTest, SoftmaxErrors) {
  EXPECT_EQ(buildError(R"({"op": "softmax", "inputs": ["x"], "output": "y"})",
                       {ramp(Dtype::I32, {3}, 1)}),
            "$.model.ops[0].inputs[0] (softmax): input 'x' has dtype i32; "
            "softmax needs a floating-point tensor (f32, f16 or bf16)");
}

/// The per-row losses of cross_entropy (0 for ignored rows).
std::vector<double> crossEntropyRef(const Tensor &logits, const Tensor &target,
                                    int64_t ignoreIndex) {
  std::vector<double> logProbs = logSoftmaxRef(logits, false);
  int64_t classes = logits.shape[1];
  std::vector<double> losses;
  for (int64_t n = 0; n < logits.shape[0]; ++n) {
    int64_t t = static_cast<int64_t>(target.values[n]);
    losses.push_back(t == ignoreIndex ? 0 : -logProbs[n * classes + t]);
  }
  return losses;
}

TEST_F(SoftmaxOpsTest, CrossEntropyReductions) {
  Tensor logits = noise(Dtype::F32, {4, 6}, 3);
  Tensor target = tensor(Dtype::I64, {4}, {5, 0, -100, 2});
  std::vector<double> losses = crossEntropyRef(logits, target, -100);
  double total = losses[0] + losses[1] + losses[3];
  expectNear(runOne(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                        "output": "y"})",
                    {logits, target}),
             {}, {total / 3}, 1e-6);
  expectNear(runOne(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                        "output": "y", "reduction": "sum"})",
                    {logits, target}),
             {}, {total}, 1e-6);
  expectNear(runOne(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                        "output": "y", "reduction": "none"})",
                    {logits, target}),
             {4}, losses, 1e-6);
}

TEST_F(SoftmaxOpsTest, CrossEntropyIgnoreIndexAndI32) {
  Tensor logits = noise(Dtype::BF16, {3, 4}, 3);
  Tensor target = tensor(Dtype::I32, {3}, {3, 1, 1});
  std::vector<double> losses = crossEntropyRef(logits, target, 1);
  Tensor y = runOne(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                        "output": "y", "ignore_index": 1})",
                    {logits, target});
  EXPECT_EQ(y.dtype, Dtype::BF16);
  expectNear(y, {}, roundTo(Dtype::BF16, {losses[0]}), 8e-3);
  // Every target ignored: 0 / 0, as PyTorch.
  Tensor all = tensor(Dtype::I32, {3}, {1, 1, 1});
  expectNear(runOne(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                        "output": "y", "ignore_index": 1})",
                    {logits, all}),
             {}, {NAN}, 0);
}

TEST_F(SoftmaxOpsTest, CrossEntropyErrors) {
  Tensor logits = noise(Dtype::F32, {4, 6});
  EXPECT_EQ(buildError(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                           "output": "y"})",
                       {logits, ramp(Dtype::F32, {4}, 1)}),
            "$.model.ops[0].inputs[1] (cross_entropy): input 't' has dtype "
            "f32; expected an integer tensor (i32 or i64)");
  EXPECT_EQ(buildError(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                           "output": "y"})",
                       {logits, ramp(Dtype::I64, {3}, 1)}),
            "$.model.ops[0].inputs[1] (cross_entropy): input 't' has shape "
            "[3]; expected [4] (one class index per row of the logits [4, 6])");
  EXPECT_EQ(
      buildError(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                           "output": "y"})",
                 {noise(Dtype::F32, {2, 4, 6}), ramp(Dtype::I64, {2}, 1)}),
      "$.model.ops[0].inputs[0] (cross_entropy): input 'l' has shape "
      "[2, 4, 6]; expected [N, C]");
  EXPECT_EQ(buildError(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                           "output": "y", "reduction": "max"})",
                       {logits, ramp(Dtype::I64, {4}, 1)}),
            "$.model.ops[0].reduction: expected one of \"mean\", \"sum\", "
            "\"none\"; got the string \"max\"");
  EXPECT_EQ(buildError(R"({"op": "cross_entropy", "inputs": ["l", "t"],
                           "output": "y", "ignore_index": 3000000000})",
                       {logits, ramp(Dtype::I32, {4}, 1)}),
            "$.model.ops[0].ignore_index (cross_entropy): ignore_index "
            "3000000000 does not fit the dtype i32 of target 't'");
}

} // namespace
