//===- LinearOpsTest.cpp - linear, matmul, bmm ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

using namespace dtensor::frontend::test;

namespace {

using LinearOpsTest = OpTest;

/// y[r, o] = sum_i x[r, i] w[o, i] (+ b[o]) over rows r of x.
std::vector<double> linearRef(const Tensor &x, const Tensor &w,
                              const Tensor *bias) {
  int64_t in = x.shape.back(), out = w.shape[0];
  int64_t rows = x.size() / in;
  std::vector<double> y;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double sum = bias ? bias->values[o] : 0;
      for (int64_t i = 0; i < in; ++i)
        sum += x.values[r * in + i] * w.values[o * in + i];
      y.push_back(sum);
    }
  return y;
}

TEST_F(LinearOpsTest, Linear2D) {
  Tensor x = noise(Dtype::F32, {3, 5}), w = noise(Dtype::F32, {4, 5}, 1, 2);
  Tensor y = runOne(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                    {x, w});
  expectNear(y, {3, 4}, linearRef(x, w, nullptr), 1e-5);
  // A 2-D linear is one GEMM call.
  EXPECT_EQ(getMatmulCallCount(), 1);
}

TEST_F(LinearOpsTest, Linear3DWithBias) {
  Tensor x = noise(Dtype::F32, {2, 3, 5}), w = noise(Dtype::F32, {4, 5}, 1, 2);
  Tensor b = noise(Dtype::F32, {4}, 1, 3);
  Tensor y =
      runOne(R"({"op": "linear", "inputs": ["x", "w", "b"], "output": "y"})",
             {x, w, b});
  expectNear(y, {2, 3, 4}, linearRef(x, w, &b), 1e-5);
  // One GEMM with M = 2 x 3.
  EXPECT_EQ(getMatmulCallCount(), 1);
}

TEST_F(LinearOpsTest, LinearIsOneContractionOverAllDims) {
  ASSERT_TRUE(build(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                    {noise(Dtype::F32, {2, 3, 5}), noise(Dtype::F32, {4, 5})}));
  std::string ir = printModule();
  EXPECT_EQ(ir.find("collapse_shape"), std::string::npos) << ir;
  EXPECT_NE(ir.find("iterator_types = [\"parallel\", \"parallel\", "
                    "\"parallel\", \"reduction\"]"),
            std::string::npos)
      << ir;
}

TEST_F(LinearOpsTest, Linear1D) {
  Tensor x = noise(Dtype::F32, {5}), w = noise(Dtype::F32, {4, 5}, 1, 2);
  Tensor y = runOne(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                    {x, w});
  expectNear(y, {4}, linearRef(x, w, nullptr), 1e-5);
  // A matrix-vector product has no M dim: loops.
  EXPECT_EQ(getMatmulCallCount(), 0);
}

TEST_F(LinearOpsTest, LinearF16AndBF16) {
  for (Dtype dtype : {Dtype::F16, Dtype::BF16}) {
    Tensor x = noise(dtype, {2, 8}), w = noise(dtype, {3, 8}, 1, 2);
    Tensor b = noise(dtype, {3}, 1, 3);
    Tensor y =
        runOne(R"({"op": "linear", "inputs": ["x", "w", "b"], "output": "y"})",
               {x, w, b});
    // Accumulated in f32, rounded once.
    expectNear(y, {2, 3}, roundTo(dtype, linearRef(x, w, &b)),
               dtype == Dtype::F16 ? 1e-3 : 8e-3);
    EXPECT_EQ(y.dtype, dtype);
  }
}

TEST_F(LinearOpsTest, LinearErrors) {
  Tensor x = noise(Dtype::F32, {8, 64});
  EXPECT_EQ(
      buildError(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                 {x, noise(Dtype::F32, {64})}),
      "$.model.ops[0].inputs[1] (linear): weight 'w' has shape [64]; expected "
      "[out, in]");
  EXPECT_EQ(
      buildError(
          R"({"op": "linear", "inputs": ["x", "w", "b"], "output": "y"})",
          {x, noise(Dtype::F32, {16, 64}), noise(Dtype::F32, {8})}),
      "$.model.ops[0].inputs[2] (linear): input 'b' has shape [8]; expected "
      "[16] (the out dim of the weight, [out, in] = [16, 64])");
  EXPECT_EQ(
      buildError(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                 {x, noise(Dtype::F16, {16, 64})}),
      "$.model.ops[0].inputs[1] (linear): input 'w' has dtype f16 but 'x' "
      "has f32; dtypes must be equal (there is no type promotion)");
  EXPECT_EQ(
      buildError(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                 {tensor(Dtype::F32, {}, {1}), noise(Dtype::F32, {16, 64})}),
      "$.model.ops[0].inputs[0] (linear): input 'x' has shape []; expected "
      "[..., in] (rank at least 1)");
}

TEST_F(LinearOpsTest, Matmul) {
  Tensor a = noise(Dtype::F32, {2, 3, 4}),
         b = noise(Dtype::F32, {2, 4, 5}, 1, 2);
  Tensor y = runOne(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                    {a, b});
  std::vector<double> expected;
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k)
          sum += a.at({p, i, k}) * b.at({p, k, j});
        expected.push_back(sum);
      }
  expectNear(y, {2, 3, 5}, expected, 1e-5);
  EXPECT_EQ(getMatmulCallCount(), 1);
}

TEST_F(LinearOpsTest, MatmulSharedRhs) {
  Tensor a = noise(Dtype::F32, {2, 2, 3, 4}),
         b = noise(Dtype::F32, {4, 5}, 1, 2);
  Tensor y = runOne(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                    {a, b});
  std::vector<double> expected;
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t j = 0; j < 5; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k)
        sum += a.values[r * 4 + k] * b.at({k, j});
      expected.push_back(sum);
    }
  expectNear(y, {2, 2, 3, 5}, expected, 1e-5);
  // The batch dims of a with a shared b are rows of one GEMM.
  EXPECT_EQ(getMatmulCallCount(), 1);
}

TEST_F(LinearOpsTest, MatmulErrors) {
  EXPECT_EQ(
      buildError(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {2, 3, 4}), noise(Dtype::F32, {3, 4, 5})}),
      "$.model.ops[0] (matmul): batch dims of 'a' [2, 3, 4] and 'b' [3, 4, 5] "
      "differ; matmul needs them equal, or the second input 2-D");
  EXPECT_EQ(
      buildError(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {3, 4}), noise(Dtype::F32, {5, 6})}),
      "$.model.ops[0] (matmul): inner dims differ: 'a' [3, 4] has k = 4 but "
      "'b' [5, 6] has k = 5");
  EXPECT_EQ(
      buildError(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {4}), noise(Dtype::F32, {4, 6})}),
      "$.model.ops[0].inputs[0] (matmul): input 'a' has shape [4]; expected "
      "[..., m, k] (rank at least 2)");
  EXPECT_EQ(
      buildError(R"({"op": "matmul", "inputs": ["a", "b"], "output": "y"})",
                 {ramp(Dtype::I64, {2, 2}, 1), ramp(Dtype::I64, {2, 2}, 1)}),
      "$.model.ops[0].inputs[0] (matmul): input 'a' has dtype i64; matmul "
      "needs a floating-point tensor (f32, f16 or bf16)");
}

TEST_F(LinearOpsTest, Bmm) {
  Tensor a = noise(Dtype::BF16, {2, 3, 4}),
         b = noise(Dtype::BF16, {2, 4, 2}, 1, 2);
  Tensor y =
      runOne(R"({"op": "bmm", "inputs": ["a", "b"], "output": "y"})", {a, b});
  std::vector<double> expected;
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k)
          sum += a.at({p, i, k}) * b.at({p, k, j});
        expected.push_back(sum);
      }
  expectNear(y, {2, 3, 2}, roundTo(Dtype::BF16, expected), 8e-3);
}

TEST_F(LinearOpsTest, BmmErrors) {
  EXPECT_EQ(
      buildError(R"({"op": "bmm", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {3, 4}), noise(Dtype::F32, {2, 4, 5})}),
      "$.model.ops[0].inputs[0] (bmm): input 'a' has shape [3, 4]; expected "
      "[B, m, k]");
  EXPECT_EQ(
      buildError(R"({"op": "bmm", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {2, 3, 4}), noise(Dtype::F32, {3, 4, 5})}),
      "$.model.ops[0] (bmm): batch sizes differ: 'a' [2, 3, 4] and 'b' "
      "[3, 4, 5]");
  EXPECT_EQ(
      buildError(R"({"op": "bmm", "inputs": ["a", "b"], "output": "y"})",
                 {noise(Dtype::F32, {2, 3, 4}), noise(Dtype::F32, {2, 5, 5})}),
      "$.model.ops[0] (bmm): inner dims differ: 'a' [2, 3, 4] has k = 4 but "
      "'b' [2, 5, 5] has k = 5");
}

} // namespace
