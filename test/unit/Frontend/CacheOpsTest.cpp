//===- CacheOpsTest.cpp - cache_write -------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

using namespace dtensor::frontend::test;

namespace {

using CacheOpsTest = OpTest;

constexpr const char *kCacheWrite =
    R"({"op": "cache_write", "inputs": ["cache", "values", "slots",
        "positions"], "output": "new_cache"})";

/// The reference: cache[slots[b], positions[b] + t, ...] = values[b, t, ...]
/// for rows inside the cache, in order of b; other rows skipped.
std::vector<double> writeRows(const Tensor &cache, const Tensor &values,
                              const Tensor &slots, const Tensor &positions) {
  std::vector<double> out = cache.values;
  int64_t numSlots = cache.shape[0], length = cache.shape[1];
  int64_t rows = values.shape[0], count = values.shape[1];
  int64_t inner = 1;
  for (size_t dim = 2; dim < cache.shape.size(); ++dim)
    inner *= cache.shape[dim];
  for (int64_t b = 0; b < rows; ++b) {
    auto slot = static_cast<int64_t>(slots.values[b]);
    auto start = static_cast<int64_t>(positions.values[b]);
    if (slot < 0 || slot >= numSlots || start < 0 || start + count > length)
      continue;
    for (int64_t t = 0; t < count; ++t)
      for (int64_t i = 0; i < inner; ++i)
        out[((slot * length) + start + t) * inner + i] =
            values.values[(b * count + t) * inner + i];
  }
  return out;
}

TEST_F(CacheOpsTest, WritesRowsAtSlotsAndPositions) {
  Tensor cache = ramp(Dtype::F32, {3, 5, 2, 2}, 1);
  Tensor values = ramp(Dtype::F32, {2, 2, 2, 2}, -1, -1);
  Tensor slots = tensor(Dtype::I64, {2}, {2, 0});
  Tensor positions = tensor(Dtype::I64, {2}, {3, 0});
  std::vector<double> expected = writeRows(cache, values, slots, positions);
  // Spot checks of the reference itself: row 0 lands in slot 2 at 3..4.
  EXPECT_EQ(expected[((2 * 5) + 3) * 4], -1);
  EXPECT_EQ(expected[((2 * 5) + 2) * 4], cache.values[((2 * 5) + 2) * 4]);
  expectNear(runOne(kCacheWrite, {cache, values, slots, positions}),
             {3, 5, 2, 2}, expected, 0);
}

TEST_F(CacheOpsTest, RowsOutsideTheCacheAreSkipped) {
  // Slot -1, slot 3 (of 3), position -1 and position 4 (+2 > 5) are skipped;
  // position 3 (+2 = 5) is the last that fits.
  Tensor cache = ramp(Dtype::F32, {3, 5, 3}, 1);
  Tensor values = noise(Dtype::F32, {6, 2, 3}, 10, 7);
  Tensor slots = tensor(Dtype::I32, {6}, {-1, 3, 1, 1, 0, 2});
  Tensor positions = tensor(Dtype::I64, {6}, {0, 0, -1, 4, 3, 0});
  std::vector<double> expected = writeRows(cache, values, slots, positions);
  // Only rows 4 and 5 change anything: 2 rows of 2 positions of 3.
  int changed = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    changed += expected[i] != cache.values[i];
  EXPECT_EQ(changed, 12);
  expectNear(runOne(kCacheWrite, {cache, values, slots, positions}), {3, 5, 3},
             expected, 0);
}

TEST_F(CacheOpsTest, LaterRowsWinWhereRowsOverlap) {
  Tensor cache = ramp(Dtype::I64, {2, 4, 1}, 1);
  Tensor values = tensor(Dtype::I64, {2, 2, 1}, {10, 11, 20, 21});
  Tensor slots = tensor(Dtype::I64, {2}, {1, 1});
  Tensor positions = tensor(Dtype::I32, {2}, {1, 2});
  expectNear(runOne(kCacheWrite, {cache, values, slots, positions}), {2, 4, 1},
             {0, 1, 2, 3, 4, 10, 20, 21}, 0);
}

TEST_F(CacheOpsTest, Bf16WithoutTrailingDims) {
  Tensor cache = ramp(Dtype::BF16, {2, 3}, 1);
  Tensor values = tensor(Dtype::BF16, {1, 3}, {-1, -2, -3});
  Tensor index = tensor(Dtype::I32, {1}, {1});
  Tensor start = tensor(Dtype::I32, {1}, {0});
  expectNear(runOne(kCacheWrite, {cache, values, index, start}), {2, 3},
             {0, 1, 2, -1, -2, -3}, 0);
}

TEST_F(CacheOpsTest, IsAWriteRows) {
  ASSERT_TRUE(
      build(kCacheWrite,
            {ramp(Dtype::F32, {2, 4, 3}, 1), ramp(Dtype::F32, {1, 1, 3}, 1),
             tensor(Dtype::I64, {1}, {0}), tensor(Dtype::I64, {1}, {0})}));
  std::string ir = printModule();
  EXPECT_NE(ir.find("dtensor.write_rows"), std::string::npos) << ir;
}

TEST_F(CacheOpsTest, Errors) {
  Tensor index = tensor(Dtype::I64, {1}, {0});
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {4}, 1),
                               ramp(Dtype::F32, {1, 1}, 1), index, index}),
      "$.model.ops[0].inputs[0] (cache_write): input 'cache' has shape "
      "[4]; expected [S, M, ...] (rank at least 2)");
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                               ramp(Dtype::F32, {1, 1, 2}, 1), index, index}),
      "$.model.ops[0].inputs[1] (cache_write): input 'values' has shape "
      "[1, 1, 2]; cache 'cache' [2, 4, 3] expects [B, T, 3]");
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4}, 1),
                               ramp(Dtype::F32, {1, 1, 1}, 1), index, index}),
      "$.model.ops[0].inputs[1] (cache_write): input 'values' has shape "
      "[1, 1, 1]; cache 'cache' [2, 4] expects [B, T]");
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                               ramp(Dtype::F16, {1, 1, 3}, 1), index, index}),
      "$.model.ops[0].inputs[1] (cache_write): input 'values' has dtype "
      "f16 but 'cache' has f32; dtypes must be equal (there is no type "
      "promotion)");
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                               ramp(Dtype::F32, {1, 5, 3}, 1), index, index}),
      "$.model.ops[0].inputs[1] (cache_write): input 'values' writes 5 "
      "positions per row but cache 'cache' holds 4");
  EXPECT_EQ(buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                                     ramp(Dtype::F32, {1, 1, 3}, 1),
                                     ramp(Dtype::F32, {1}, 1), index}),
            "$.model.ops[0].inputs[2] (cache_write): input 'slots' has dtype "
            "f32; expected i32 or i64");
  EXPECT_EQ(
      buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                               ramp(Dtype::F32, {2, 1, 3}, 1), index, index}),
      "$.model.ops[0].inputs[2] (cache_write): input 'slots' has shape "
      "[1]; expected [2], one entry per row of values 'values'");
  EXPECT_EQ(buildError(kCacheWrite, {ramp(Dtype::F32, {2, 4, 3}, 1),
                                     ramp(Dtype::F32, {1, 1, 3}, 1), index,
                                     tensor(Dtype::I32, {1, 1}, {0})}),
            "$.model.ops[0].inputs[3] (cache_write): input 'positions' has "
            "shape [1, 1]; expected [1], one entry per row of values "
            "'values'");
}

} // namespace
