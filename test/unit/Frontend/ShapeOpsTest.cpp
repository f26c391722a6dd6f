//===- ShapeOpsTest.cpp - transpose, reshape, expand, concat, slice -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "OpHarness.h"

using namespace dtensor::frontend::test;

namespace {

using ShapeOpsTest = OpTest;

TEST_F(ShapeOpsTest, Transpose) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  expectNear(runOne(R"({"op": "transpose", "inputs": ["x"], "output": "y",
                        "dim0": 0, "dim1": 1})",
                    {x}),
             {3, 2}, {0, 3, 1, 4, 2, 5}, 0);
}

TEST_F(ShapeOpsTest, Permute) {
  Tensor x = ramp(Dtype::I64, {2, 3, 4}, 1);
  Tensor y = runOne(R"({"op": "permute", "inputs": ["x"], "output": "y",
                        "dims": [2, 0, -2]})",
                    {x});
  std::vector<double> expected;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        expected.push_back(x.at({i, j, k}));
  expectNear(y, {4, 2, 3}, expected, 0);
}

TEST_F(ShapeOpsTest, PermuteErrors) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  EXPECT_EQ(buildError(R"({"op": "permute", "inputs": ["x"], "output": "y",
                           "dims": [0, 0]})",
                       {x}),
            "$.model.ops[0].dims (permute): dims [0, 0] is not a permutation "
            "of the dims of input 'x' [2, 3] (rank 2)");
  EXPECT_EQ(buildError(R"({"op": "permute", "inputs": ["x"], "output": "y",
                           "dims": [1, 0, 2]})",
                       {x}),
            "$.model.ops[0].dims (permute): dims [1, 0, 2] is not a "
            "permutation of the dims of input 'x' [2, 3] (rank 2)");
}

TEST_F(ShapeOpsTest, Reshape) {
  Tensor x = ramp(Dtype::F32, {2, 3, 4}, 1);
  for (const char *op : {
           R"({"op": "reshape", "inputs": ["x"], "output": "y",
               "shape": [6, 4]})",
           R"({"op": "view", "inputs": ["x"], "output": "y",
               "shape": [4, -1]})",
           R"({"op": "reshape", "inputs": ["x"], "output": "y",
               "shape": [1, 24, 1]})",
           R"({"op": "reshape", "inputs": ["x"], "output": "y",
               "shape": [2, 3, 2, 2]})",
           R"({"op": "reshape", "inputs": ["x"], "output": "y",
               "shape": [3, 8]})"}) {
    SCOPED_TRACE(op);
    std::optional<std::vector<Tensor>> y = run(op, {x});
    ASSERT_TRUE(y);
    // Row-major order is kept.
    EXPECT_EQ(y->front().values, x.values);
  }
  EXPECT_EQ(runOne(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                       "shape": [3, 8]})",
                   {x})
                .shape,
            (std::vector<int64_t>{3, 8}));
  Tensor scalar = tensor(Dtype::F32, {1, 1}, {4});
  expectNear(runOne(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                        "shape": []})",
                    {scalar}),
             {}, {4}, 0);
  Tensor empty = tensor(Dtype::F32, {0, 3}, {});
  expectNear(runOne(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                        "shape": [3, 0, 2]})",
                    {empty}),
             {3, 0, 2}, {}, 0);
}

TEST_F(ShapeOpsTest, ReshapeKeepsUnmergedDims) {
  // [B, S, H*D] -> [B, S, H, D] only expands the last dim.
  ASSERT_TRUE(build(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                        "shape": [2, 3, 2, 2]})",
                    {ramp(Dtype::F32, {2, 3, 4}, 1)}));
  std::string ir = printModule();
  EXPECT_EQ(ir.find("collapse_shape"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tensor.expand_shape %arg0 [[0], [1], [2, 3]]"),
            std::string::npos)
      << ir;
}

TEST_F(ShapeOpsTest, ReshapeErrors) {
  Tensor x = ramp(Dtype::F32, {3, 8}, 1);
  EXPECT_EQ(buildError(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                           "shape": [4, 5]})",
                       {x}),
            "$.model.ops[0].shape (reshape): shape [4, 5] has 20 elements but "
            "input 'x' [3, 8] has 24");
  EXPECT_EQ(buildError(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                           "shape": [-1, -1]})",
                       {x}),
            "$.model.ops[0].shape (reshape): shape [-1, -1] has more than one "
            "-1");
  EXPECT_EQ(buildError(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                           "shape": [-1, 5]})",
                       {x}),
            "$.model.ops[0].shape (reshape): shape [-1, 5] cannot hold the 24 "
            "elements of input 'x' [3, 8]");
  EXPECT_EQ(buildError(R"({"op": "reshape", "inputs": ["x"], "output": "y",
                           "shape": [-2, 12]})",
                       {x}),
            "$.model.ops[0].shape (reshape): shape [-2, 12] has a negative "
            "size");
  EXPECT_EQ(
      buildError(R"({"op": "view", "inputs": ["x"], "output": "y",
                           "shape": [0, -1]})",
                 {tensor(Dtype::F32, {0, 4}, {})}),
      "$.model.ops[0].shape (view): the -1 in shape [0, -1] is ambiguous: "
      "the other sizes have 0 elements");
}

TEST_F(ShapeOpsTest, Concat) {
  Tensor a = ramp(Dtype::F32, {2, 2}, 1), b = ramp(Dtype::F32, {2, 1}, 1, 10);
  Tensor c = ramp(Dtype::F32, {2, 3}, 1, 20);
  expectNear(runOne(R"({"op": "concat", "inputs": ["a", "b", "c"],
                        "output": "y", "dim": -1})",
                    {a, b, c}),
             {2, 6}, {0, 1, 10, 20, 21, 22, 2, 3, 11, 23, 24, 25}, 0);
  expectNear(runOne(R"({"op": "concat", "inputs": ["a", "a"],
                        "output": "y"})",
                    {a, a}),
             {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3}, 0);
}

TEST_F(ShapeOpsTest, ConcatErrors) {
  Tensor a = ramp(Dtype::F32, {2, 2}, 1);
  EXPECT_EQ(buildError(R"({"op": "concat", "inputs": ["a", "b"],
                           "output": "y", "dim": 1})",
                       {a, ramp(Dtype::F32, {3, 2}, 1)}),
            "$.model.ops[0].inputs[1] (concat): input 'b' has shape [3, 2] but "
            "'a' has [2, 2]; inputs must have equal sizes except in dim 1");
  EXPECT_EQ(buildError(R"({"op": "concat", "inputs": ["a", "b"],
                           "output": "y"})",
                       {a, ramp(Dtype::I32, {2, 2}, 1)}),
            "$.model.ops[0].inputs[1] (concat): input 'b' has dtype i32 but "
            "'a' has f32; dtypes must be equal (there is no type promotion)");
}

TEST_F(ShapeOpsTest, Split) {
  Tensor x = ramp(Dtype::F32, {5, 2}, 1);
  std::optional<std::vector<Tensor>> pieces =
      run(R"({"op": "split", "inputs": ["x"], "outputs": ["a", "b", "c"],
              "split_size_or_sections": 2})",
          {x});
  ASSERT_TRUE(pieces);
  ASSERT_EQ(pieces->size(), 3u);
  expectNear((*pieces)[0], {2, 2}, {0, 1, 2, 3}, 0);
  expectNear((*pieces)[1], {2, 2}, {4, 5, 6, 7}, 0);
  expectNear((*pieces)[2], {1, 2}, {8, 9}, 0);
  pieces = run(R"({"op": "split", "inputs": ["x"], "outputs": ["a", "b"],
                   "split_size_or_sections": [1, 1], "dim": 1})",
               {x});
  ASSERT_TRUE(pieces);
  expectNear((*pieces)[0], {5, 1}, {0, 2, 4, 6, 8}, 0);
  expectNear((*pieces)[1], {5, 1}, {1, 3, 5, 7, 9}, 0);
}

TEST_F(ShapeOpsTest, SplitErrors) {
  Tensor x = ramp(Dtype::F32, {5, 2}, 1);
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"],
                           "outputs": ["a", "b"],
                           "split_size_or_sections": 2})",
                       {x}),
            "$.model.ops[0] (split): splitting dim 0 of size 5 into pieces of "
            "2 gives 3 outputs, but the op lists 2");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"],
                           "outputs": ["a", "b"],
                           "split_size_or_sections": [2, 2]})",
                       {x}),
            "$.model.ops[0].split_size_or_sections (split): sections [2, 2] "
            "add up to 4 but dim 0 of input 'x' [5, 2] has size 5");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"], "outputs": ["a"],
                           "split_size_or_sections": [5]})",
                       {ramp(Dtype::F32, {3}, 1)}),
            "$.model.ops[0].split_size_or_sections (split): sections [5] add "
            "up to 5 but dim 0 of input 'x' [3] has size 3");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"],
                           "outputs": ["a", "b"],
                           "split_size_or_sections": [2, 3, 0]})",
                       {x}),
            "$.model.ops[0] (split): sections [2, 3, 0] give 3 outputs, but "
            "the op lists 2");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"],
                           "outputs": ["a", "b"],
                           "split_size_or_sections": [6, -1]})",
                       {x}),
            "$.model.ops[0].split_size_or_sections (split): sections [6, -1] "
            "has a negative size");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"], "outputs": ["a"],
                           "split_size_or_sections": 0})",
                       {x}),
            "$.model.ops[0].split_size_or_sections (split): split size 0 must "
            "be positive");
  EXPECT_EQ(buildError(R"({"op": "split", "inputs": ["x"],
                           "outputs": ["a"]})",
                       {x}),
            "$.model.ops[0] (split): missing attribute "
            "'split_size_or_sections'");
}

TEST_F(ShapeOpsTest, Slice) {
  Tensor x = ramp(Dtype::BF16, {2, 6}, 1);
  expectNear(runOne(R"({"op": "slice", "inputs": ["x"], "output": "y",
                        "dim": 1, "start": 1, "end": -1, "step": 2})",
                    {x}),
             {2, 2}, {1, 3, 7, 9}, 0);
  // Bounds are clamped.
  expectNear(runOne(R"({"op": "slice", "inputs": ["x"], "output": "y",
                        "dim": -1, "start": -100, "end": 2})",
                    {x}),
             {2, 2}, {0, 1, 6, 7}, 0);
  expectNear(runOne(R"({"op": "slice", "inputs": ["x"], "output": "y",
                        "dim": 1, "start": 4, "end": 9223372036854775807})",
                    {x}),
             {2, 2}, {4, 5, 10, 11}, 0);
  expectNear(runOne(R"({"op": "slice", "inputs": ["x"], "output": "y",
                        "dim": 1, "start": 5, "end": 2})",
                    {x}),
             {2, 0}, {}, 0);
  expectNear(runOne(R"({"op": "slice", "inputs": ["x"], "output": "y",
                        "start": 1})",
                    {x}),
             {1, 6}, {6, 7, 8, 9, 10, 11}, 0);
}

TEST_F(ShapeOpsTest, SliceErrors) {
  EXPECT_EQ(buildError(R"({"op": "slice", "inputs": ["x"], "output": "y",
                           "step": 0})",
                       {ramp(Dtype::F32, {4}, 1)}),
            "$.model.ops[0].step (slice): step 0 must be at least 1");
}

TEST_F(ShapeOpsTest, UnsqueezeAndSqueeze) {
  Tensor x = ramp(Dtype::I64, {2, 3}, 1);
  // Unsqueezing keeps the values in order; dims count from the end as
  // torch.unsqueeze's (-1 appends, -3 prepends).
  for (auto [dim, shape] :
       std::initializer_list<std::pair<int64_t, std::vector<int64_t>>>{
           {0, {1, 2, 3}},
           {1, {2, 1, 3}},
           {2, {2, 3, 1}},
           {-1, {2, 3, 1}},
           {-2, {2, 1, 3}},
           {-3, {1, 2, 3}}}) {
    SCOPED_TRACE(dim);
    std::string op =
        R"({"op": "unsqueeze", "inputs": ["x"], "output": "y", "dim": )" +
        std::to_string(dim) + "}";
    Tensor y = runOne(op, {x});
    EXPECT_EQ(y.dtype, Dtype::I64);
    expectNear(y, shape, x.values, 0);
  }

  Tensor u = ramp(Dtype::F32, {1, 2, 1, 3, 1}, 1);
  expectNear(
      runOne(R"({"op": "squeeze", "inputs": ["x"], "output": "y"})", {u}),
      {2, 3}, u.values, 0);
  expectNear(runOne(R"({"op": "squeeze", "inputs": ["x"], "output": "y",
                        "dim": -3})",
                    {u}),
             {1, 2, 3, 1}, u.values, 0);
  // A listed dim whose size is not 1 stays, as torch.squeeze.
  expectNear(runOne(R"({"op": "squeeze", "inputs": ["x"], "output": "y",
                        "dim": [-1, 0, 1]})",
                    {u}),
             {2, 1, 3}, u.values, 0);
  expectNear(runOne(R"({"op": "squeeze", "inputs": ["x"], "output": "y",
                        "dim": 3})",
                    {u}),
             {1, 2, 1, 3, 1}, u.values, 0);
}

TEST_F(ShapeOpsTest, UnsqueezeAndSqueezeErrors) {
  Tensor x = ramp(Dtype::F32, {2, 1}, 1);
  EXPECT_EQ(buildError(R"({"op": "unsqueeze", "inputs": ["x"], "output": "y",
                           "dim": -4})",
                       {x}),
            "$.model.ops[0].dim (unsqueeze): dim -4 is out of range for "
            "unsqueezing a tensor of rank 2 (expected -3 to 2)");
  EXPECT_EQ(
      buildError(R"({"op": "unsqueeze", "inputs": ["x"], "output": "y"})", {x}),
      "$.model.ops[0] (unsqueeze): missing attribute 'dim'");
  EXPECT_EQ(buildError(R"({"op": "squeeze", "inputs": ["x"], "output": "y",
                           "dim": [2]})",
                       {x}),
            "$.model.ops[0].dim (squeeze): dim 2 is out of range for a tensor "
            "of rank 2 (expected -2 to 1)");
  EXPECT_EQ(buildError(R"({"op": "squeeze", "inputs": ["x"], "output": "y",
                           "dim": [1, -1]})",
                       {x}),
            "$.model.ops[0].dim (squeeze): dim 1 appears more than once");
}

TEST_F(ShapeOpsTest, Expand) {
  // [3, 1] -> [2, 3, 4]: a new leading dim, -1 keeps dim 0, dim 1
  // stretches.
  Tensor x = ramp(Dtype::F32, {3, 1}, 1.5, -1);
  Tensor y = runOne(R"({"op": "expand", "inputs": ["x"], "output": "y",
                        "shape": [2, -1, 4]})",
                    {x});
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        expected.push_back(x.at({j, 0}));
  expectNear(y, {2, 3, 4}, expected, 0);

  // Integers; the size kept explicitly, two new dims, one of size 0.
  Tensor ids = ramp(Dtype::I32, {1, 2}, 1, 7);
  Tensor z = runOne(R"({"op": "expand", "inputs": ["x"], "output": "y",
                        "shape": [2, 1, 3, 2]})",
                    {ids});
  EXPECT_EQ(z.dtype, Dtype::I32);
  expectNear(z, {2, 1, 3, 2}, {7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8}, 0);
  expectNear(runOne(R"({"op": "expand", "inputs": ["x"], "output": "y",
                        "shape": [0, 5, -1]})",
                    {ids}),
             {0, 5, 2}, {}, 0);
}

TEST_F(ShapeOpsTest, ExpandErrors) {
  Tensor x = ramp(Dtype::F32, {3, 1}, 1);
  EXPECT_EQ(buildError(R"({"op": "expand", "inputs": ["x"], "output": "y",
                           "shape": [4, 4]})",
                       {x}),
            "$.model.ops[0].shape (expand): shape [4, 4] asks for size 4 in "
            "dim 0, but dim 0 of input 'x' [3, 1] has size 3; only size-1 dims "
            "expand");
  EXPECT_EQ(buildError(R"({"op": "expand", "inputs": ["x"], "output": "y",
                           "shape": [-1, 3, 1]})",
                       {x}),
            "$.model.ops[0].shape (expand): shape [-1, 3, 1] gives the new "
            "leading dim 0 size -1; a new dim needs a size (at least 0)");
  EXPECT_EQ(buildError(R"({"op": "expand", "inputs": ["x"], "output": "y",
                           "shape": [3, -2]})",
                       {x}),
            "$.model.ops[0].shape (expand): shape [3, -2] has a negative size "
            "-2 (only -1, keep the size, is allowed)");
  EXPECT_EQ(buildError(R"({"op": "expand", "inputs": ["x"], "output": "y",
                           "shape": [3]})",
                       {x}),
            "$.model.ops[0].shape (expand): shape [3] has fewer dims than "
            "input 'x' [3, 1]; expand adds leading dims, it cannot remove "
            "any");
}

TEST_F(ShapeOpsTest, RepeatInterleave) {
  // A middle dim: element j of dim 1 is x[:, j / 3, :].
  Tensor x = ramp(Dtype::F32, {2, 2, 3}, 1);
  Tensor y = runOne(R"({"op": "repeat_interleave", "inputs": ["x"],
                        "output": "y", "repeats": 3, "dim": -2})",
                    {x});
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t k = 0; k < 3; ++k)
        expected.push_back(x.at({i, j / 3, k}));
  expectNear(y, {2, 6, 3}, expected, 0);

  Tensor ids = ramp(Dtype::I64, {3}, 1, 5);
  Tensor r = runOne(R"({"op": "repeat_interleave", "inputs": ["x"],
                        "output": "y", "repeats": 2, "dim": 0})",
                    {ids});
  EXPECT_EQ(r.dtype, Dtype::I64);
  expectNear(r, {6}, {5, 5, 6, 6, 7, 7}, 0);
  expectNear(runOne(R"({"op": "repeat_interleave", "inputs": ["x"],
                        "output": "y", "repeats": 1, "dim": 0})",
                    {ids}),
             {3}, ids.values, 0);
  expectNear(runOne(R"({"op": "repeat_interleave", "inputs": ["x"],
                        "output": "y", "repeats": 0, "dim": 1})",
                    {x}),
             {2, 0, 3}, {}, 0);
}

TEST_F(ShapeOpsTest, RepeatInterleaveErrors) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  EXPECT_EQ(buildError(R"({"op": "repeat_interleave", "inputs": ["x"],
                           "output": "y", "repeats": -1, "dim": 0})",
                       {x}),
            "$.model.ops[0].repeats (repeat_interleave): repeats -1 must be at "
            "least 0");
  EXPECT_EQ(buildError(R"({"op": "repeat_interleave", "inputs": ["x"],
                           "output": "y", "repeats": 2, "dim": 2})",
                       {x}),
            "$.model.ops[0].dim (repeat_interleave): dim 2 is out of range for "
            "a tensor of rank 2 (expected -2 to 1)");
}

TEST_F(ShapeOpsTest, CatIsConcat) {
  Tensor a = ramp(Dtype::F32, {2, 1}, 1), b = ramp(Dtype::F32, {2, 2}, 1, 10);
  expectNear(
      runOne(R"({"op": "cat", "inputs": ["a", "b"], "output": "y", "dim": 1})",
             {a, b}),
      {2, 3}, {0, 10, 11, 1, 12, 13}, 0);
}

} // namespace
