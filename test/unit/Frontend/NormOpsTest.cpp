//===- NormOpsTest.cpp - layer_norm, rms_norm -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>

using namespace dtensor::frontend::test;

namespace {

using NormOpsTest = OpTest;

/// Normalizes each run of `group` values of x (two-pass variance).
std::vector<double> layerNormRef(const Tensor &x, int64_t group, double eps,
                                 const Tensor *weight, const Tensor *bias) {
  std::vector<double> y;
  for (int64_t start = 0; start < x.size(); start += group) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < group; ++i)
      mean += x.values[start + i];
    mean /= group;
    for (int64_t i = 0; i < group; ++i)
      var += std::pow(x.values[start + i] - mean, 2);
    var /= group;
    for (int64_t i = 0; i < group; ++i) {
      double v = (x.values[start + i] - mean) / std::sqrt(var + eps);
      if (weight)
        v *= weight->values[i];
      if (bias)
        v += bias->values[i];
      y.push_back(v);
    }
  }
  return y;
}

std::vector<double> rmsNormRef(const Tensor &x, int64_t group, double eps,
                               const Tensor *weight) {
  std::vector<double> y;
  for (int64_t start = 0; start < x.size(); start += group) {
    double squares = 0;
    for (int64_t i = 0; i < group; ++i)
      squares += x.values[start + i] * x.values[start + i];
    double scale = 1 / std::sqrt(squares / group + eps);
    for (int64_t i = 0; i < group; ++i)
      y.push_back(x.values[start + i] * scale *
                  (weight ? weight->values[i] : 1));
  }
  return y;
}

TEST_F(NormOpsTest, LayerNorm) {
  Tensor x = noise(Dtype::F32, {2, 3, 8}, 2);
  expectNear(
      runOne(R"({"op": "layer_norm", "inputs": ["x"], "output": "y"})", {x}),
      {2, 3, 8}, layerNormRef(x, 8, 1e-5, nullptr, nullptr), 1e-5);
}

TEST_F(NormOpsTest, LayerNormAffineOverTwoDims) {
  Tensor x = noise(Dtype::F32, {2, 3, 4}, 2);
  Tensor w = noise(Dtype::F32, {3, 4}, 1, 2),
         b = noise(Dtype::F32, {3, 4}, 1, 3);
  expectNear(runOne(R"({"op": "layer_norm", "inputs": ["x", "w", "b"],
                        "output": "y", "normalized_shape": [3, 4],
                        "eps": 0.1})",
                    {x, w, b}),
             {2, 3, 4}, layerNormRef(x, 12, 0.1, &w, &b), 1e-5);
}

TEST_F(NormOpsTest, LayerNormHalf) {
  Tensor x = noise(Dtype::BF16, {4, 16}, 3);
  Tensor w = noise(Dtype::BF16, {16}, 1, 2);
  expectNear(runOne(R"({"op": "layer_norm", "inputs": ["x", "w"],
                        "output": "y", "normalized_shape": 16})",
                    {x, w}),
             {4, 16},
             roundTo(Dtype::BF16, layerNormRef(x, 16, 1e-5, &w, nullptr)),
             8e-3);
}

TEST_F(NormOpsTest, RmsNorm) {
  Tensor x = noise(Dtype::F32, {3, 8}, 2);
  Tensor w = noise(Dtype::F32, {8}, 1, 2);
  // The default eps is the f32 machine epsilon.
  expectNear(
      runOne(R"({"op": "rms_norm", "inputs": ["x", "w"], "output": "y"})",
             {x, w}),
      {3, 8}, rmsNormRef(x, 8, 1.1920928955078125e-07, &w), 1e-5);
  expectNear(runOne(R"({"op": "rms_norm", "inputs": ["x"], "output": "y",
                        "eps": 0.5})",
                    {x}),
             {3, 8}, rmsNormRef(x, 8, 0.5, nullptr), 1e-5);
}

TEST_F(NormOpsTest, RmsNormHalfDefaultEps) {
  // A tiny input shows the eps: the f16 machine epsilon 2^-10.
  Tensor x = tensor(Dtype::F16, {1, 2}, {0.0078125, -0.0078125});
  Tensor y =
      runOne(R"({"op": "rms_norm", "inputs": ["x"], "output": "y"})", {x});
  expectNear(y, {1, 2},
             roundTo(Dtype::F16, rmsNormRef(x, 2, 1.0 / 1024, nullptr)), 1e-3);
}

TEST_F(NormOpsTest, Errors) {
  Tensor x = noise(Dtype::F32, {8, 32});
  EXPECT_EQ(buildError(R"({"op": "layer_norm", "inputs": ["x"], "output": "y",
                           "normalized_shape": [64]})",
                       {x}),
            "$.model.ops[0].normalized_shape (layer_norm): normalized_shape "
            "[64] is not a non-empty list of the last dims of input 'x' "
            "[8, 32]");
  EXPECT_EQ(buildError(R"({"op": "rms_norm", "inputs": ["x"], "output": "y",
                           "normalized_shape": []})",
                       {x}),
            "$.model.ops[0].normalized_shape (rms_norm): normalized_shape [] "
            "is not a non-empty list of the last dims of input 'x' [8, 32]");
  EXPECT_EQ(buildError(R"({"op": "layer_norm", "inputs": ["x", "w"],
                           "output": "y"})",
                       {x, noise(Dtype::F32, {8})}),
            "$.model.ops[0].inputs[1] (layer_norm): input 'w' has shape [8]; "
            "expected [32] (normalized_shape)");
  EXPECT_EQ(buildError(R"({"op": "rms_norm", "inputs": ["x"], "output": "y",
                           "eps": "small"})",
                       {x}),
            "$.model.ops[0].eps: expected a number, got the string \"small\"");
  EXPECT_EQ(buildError(R"({"op": "layer_norm", "inputs": ["x"],
                           "output": "y"})",
                       {tensor(Dtype::F32, {}, {1})}),
            "$.model.ops[0].inputs[0] (layer_norm): input 'x' has shape []; "
            "expected at least one dim to normalize");
}

} // namespace
