//===- EmbeddingOpsTest.cpp - embedding -----------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

using namespace dtensor::frontend::test;

namespace {

using EmbeddingOpsTest = OpTest;

TEST_F(EmbeddingOpsTest, Lookup) {
  Tensor table = ramp(Dtype::F32, {5, 3}, 1);
  Tensor ids = tensor(Dtype::I64, {2, 2}, {4, 0, 2, 2});
  expectNear(runOne(R"({"op": "embedding", "inputs": ["ids", "table"],
                        "output": "y"})",
                    {ids, table}),
             {2, 2, 3}, {12, 13, 14, 0, 1, 2, 6, 7, 8, 6, 7, 8}, 0);
}

TEST_F(EmbeddingOpsTest, OutOfRangeIdsGiveZeros) {
  Tensor table = ramp(Dtype::BF16, {4, 2}, 1, 1);
  Tensor ids = tensor(Dtype::I32, {4}, {-1, 3, 4, 1000});
  expectNear(runOne(R"({"op": "embedding", "inputs": ["ids", "table"],
                        "output": "y"})",
                    {ids, table}),
             {4, 2}, {0, 0, 7, 8, 0, 0, 0, 0}, 0);
}

TEST_F(EmbeddingOpsTest, ScalarId) {
  Tensor table = ramp(Dtype::I64, {3, 2}, 1);
  expectNear(runOne(R"({"op": "embedding", "inputs": ["ids", "table"],
                        "output": "y"})",
                    {tensor(Dtype::I32, {}, {1}), table}),
             {2}, {2, 3}, 0);
}

TEST_F(EmbeddingOpsTest, IsAGather) {
  ASSERT_TRUE(
      build(R"({"op": "embedding", "inputs": ["ids", "table"],
                        "output": "y"})",
            {tensor(Dtype::I64, {2}, {0, 1}), ramp(Dtype::F32, {5, 3}, 1)}));
  std::string ir = printModule();
  EXPECT_NE(ir.find("tensor.gather"), std::string::npos) << ir;
}

TEST_F(EmbeddingOpsTest, Errors) {
  EXPECT_EQ(buildError(R"({"op": "embedding", "inputs": ["ids", "table"],
                           "output": "y"})",
                       {ramp(Dtype::F32, {2}, 1), ramp(Dtype::F32, {5, 3}, 1)}),
            "$.model.ops[0].inputs[0] (embedding): input 'ids' has dtype f32; "
            "expected an integer tensor (i32 or i64)");
  EXPECT_EQ(buildError(R"({"op": "embedding", "inputs": ["ids", "table"],
                           "output": "y"})",
                       {ramp(Dtype::I64, {2}, 1), ramp(Dtype::F32, {5}, 1)}),
            "$.model.ops[0].inputs[1] (embedding): table 'table' has shape "
            "[5]; expected [V, D]");
}

TEST_F(EmbeddingOpsTest, IndexSelect) {
  // Rows of a [slots, T, H] cache, repeated and reordered.
  Tensor cache = ramp(Dtype::F32, {4, 2, 3}, 1);
  Tensor slots = tensor(Dtype::I64, {3}, {3, 0, 3});
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": 0})",
                    {cache, slots}),
             {3, 2, 3},
             {18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 18, 19, 20, 21, 22, 23},
             0);
  // Along a middle dim (negative), i32 indices, an integer source.
  Tensor x = ramp(Dtype::I64, {2, 3, 2}, 1);
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": -2})",
                    {x, tensor(Dtype::I32, {2}, {2, 1})}),
             {2, 2, 2}, {4, 5, 2, 3, 10, 11, 8, 9}, 0);
  // The last dim; an empty index.
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": 2})",
                    {x, tensor(Dtype::I64, {3}, {1, 1, 0})}),
             {2, 3, 3},
             {1, 1, 0, 3, 3, 2, 5, 5, 4, 7, 7, 6, 9, 9, 8, 11, 11, 10}, 0);
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": 1})",
                    {x, tensor(Dtype::I64, {0}, {})}),
             {2, 0, 2}, {}, 0);
}

TEST_F(EmbeddingOpsTest, IndexSelectOutOfRangeGivesZeros) {
  // PyTorch raises; the model plan gives a slice of zeros, negative
  // indices included (no wrap-around).
  Tensor x = ramp(Dtype::BF16, {3, 2}, 1, 1);
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": 0})",
                    {x, tensor(Dtype::I32, {4}, {-1, 2, 3, 0})}),
             {4, 2}, {0, 0, 5, 6, 0, 0, 1, 2}, 0);
  expectNear(runOne(R"({"op": "index_select", "inputs": ["x", "i"],
                        "output": "y", "dim": 1})",
                    {x, tensor(Dtype::I64, {3}, {1, -2, 2})}),
             {3, 3}, {2, 0, 0, 4, 0, 0, 6, 0, 0}, 0);
}

TEST_F(EmbeddingOpsTest, IndexSelectErrors) {
  Tensor x = ramp(Dtype::F32, {4, 3}, 1);
  EXPECT_EQ(buildError(R"({"op": "index_select", "inputs": ["x", "i"],
                           "output": "y", "dim": 0})",
                       {x, ramp(Dtype::F32, {2}, 1)}),
            "$.model.ops[0].inputs[1] (index_select): input 'i' has dtype "
            "f32; expected an integer tensor (i32 or i64)");
  EXPECT_EQ(buildError(R"({"op": "index_select", "inputs": ["x", "i"],
                           "output": "y", "dim": 0})",
                       {x, tensor(Dtype::I64, {}, {1})}),
            "$.model.ops[0].inputs[1] (index_select): index 'i' has shape "
            "[]; expected a 1-D tensor of indices [N]");
  EXPECT_EQ(buildError(R"({"op": "index_select", "inputs": ["x", "i"],
                           "output": "y", "dim": -3})",
                       {x, tensor(Dtype::I64, {1}, {1})}),
            "$.model.ops[0].dim (index_select): dim -3 is out of range for a "
            "tensor of rank 2 (expected -2 to 1)");
  EXPECT_EQ(buildError(R"({"op": "index_select", "inputs": ["x", "i"],
                           "output": "y"})",
                       {x, tensor(Dtype::I64, {1}, {1})}),
            "$.model.ops[0] (index_select): missing attribute 'dim'");
}

} // namespace
