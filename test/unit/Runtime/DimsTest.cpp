//===- DimsTest.cpp - Sizes and strides kept inline -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Dims.h"

#include <gtest/gtest.h>

using dtensor::rt::Dims;

namespace {

std::vector<int64_t> iota(size_t count) {
  std::vector<int64_t> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<int64_t>(i) * 3 - 1;
  return values;
}

TEST(DimsTest, BuildsLikeAVector) {
  Dims empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  Dims listed = {4, 5, 6};
  EXPECT_EQ(listed.vector(), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(listed.back(), 6);
  Dims filled(3, 7);
  EXPECT_EQ(filled.vector(), (std::vector<int64_t>{7, 7, 7}));
  filled.resize(5);
  EXPECT_EQ(filled.vector(), (std::vector<int64_t>{7, 7, 7, 0, 0}));
  filled.resize(1);
  filled.resize(2);
  EXPECT_EQ(filled.vector(), (std::vector<int64_t>{7, 0}));
  listed = {1};
  EXPECT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed, Dims({1}));
  EXPECT_NE(listed, Dims({1, 0}));
}

// Up to kInline dims stay inline; more go to the heap and keep every value,
// through growth, copies and shrinking.
TEST(DimsTest, EveryRankAroundTheInlineCapacity) {
  for (size_t count = 0; count <= 2 * Dims::kInline + 1; ++count) {
    std::vector<int64_t> values = iota(count);
    Dims assigned(values);
    EXPECT_EQ(assigned.vector(), values) << count;
    Dims pushed;
    for (int64_t value : values)
      pushed.push_back(value);
    EXPECT_EQ(pushed.vector(), values) << count;
    Dims copy = pushed;
    EXPECT_EQ(copy, pushed) << count;
    if (count > 0) {
      copy[count - 1] = 12345;
      EXPECT_EQ(pushed.vector(), values) << "a copy shares nothing";
    }
    Dims target = {9, 9};
    target = assigned;
    EXPECT_EQ(target.vector(), values) << count;
    target = target; // self-assignment keeps the values
    EXPECT_EQ(target.vector(), values) << count;
  }
}

} // namespace
