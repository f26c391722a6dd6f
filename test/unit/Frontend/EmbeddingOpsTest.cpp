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

} // namespace
