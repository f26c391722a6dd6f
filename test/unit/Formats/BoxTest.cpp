//===- BoxTest.cpp - Box copies against an element-wise reference ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Box.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace dtensor::rt;

namespace {

/// Element-wise reference: the global linear index of each box element.
std::vector<int64_t> referenceIndices(const std::vector<int64_t> &globalShape,
                                      const std::vector<int64_t> &offset,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> result;
  int64_t count = numElements(shape);
  for (int64_t local = 0; local < count; ++local) {
    int64_t rest = local, global = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t coord = offset[d] + rest % shape[d];
      rest /= shape[d];
      global += coord * stride;
      stride *= globalShape[d];
    }
    result.push_back(global);
  }
  return result;
}

struct BoxCase {
  std::vector<int64_t> globalShape, offset, shape;
};

void checkBox(const BoxCase &c) {
  int64_t globalCount = numElements(c.globalShape);
  std::vector<int32_t> global(globalCount);
  std::iota(global.begin(), global.end(), 0);
  std::vector<int64_t> expected =
      referenceIndices(c.globalShape, c.offset, c.shape);

  std::vector<int32_t> local(expected.size() + 1, -1); // +1: no overrun
  copyBoxOut(global.data(), c.globalShape, c.offset, c.shape, sizeof(int32_t),
             local.data());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(local[i], expected[i]) << "element " << i;
  EXPECT_EQ(local.back(), -1) << "copyBoxOut wrote past the box";

  // Copying the box back into a zeroed tensor restores exactly those
  // elements.
  std::vector<int32_t> restored(globalCount, -1);
  copyBoxIn(local.data(), c.globalShape, c.offset, c.shape, sizeof(int32_t),
            restored.data());
  std::vector<int32_t> expectedRestored(globalCount, -1);
  for (int64_t index : expected)
    expectedRestored[index] = static_cast<int32_t>(index);
  EXPECT_EQ(restored, expectedRestored);

  // Runs cover the box exactly, in order, and are maximal.
  int64_t nextLocal = 0;
  int64_t runs = 0;
  forEachBoxRun(c.globalShape, c.offset, c.shape,
                [&](int64_t globalElem, int64_t localElem, int64_t elems) {
                  EXPECT_EQ(localElem, nextLocal);
                  EXPECT_GT(elems, 0);
                  for (int64_t i = 0; i < elems; ++i)
                    EXPECT_EQ(globalElem + i, expected[localElem + i]);
                  nextLocal += elems;
                  ++runs;
                  return true;
                });
  EXPECT_EQ(nextLocal, static_cast<int64_t>(expected.size()));
}

TEST(BoxTest, CopiesMatchReference) {
  const BoxCase cases[] = {
      {{10}, {3}, {4}},
      {{10}, {0}, {10}},
      {{4, 6}, {1, 2}, {2, 3}},
      {{4, 6}, {1, 0}, {2, 6}},
      {{4, 6}, {0, 5}, {4, 1}},
      {{3, 4, 5}, {1, 1, 1}, {2, 2, 3}},
      {{3, 4, 5}, {1, 0, 0}, {1, 4, 5}},
      {{3, 4, 5}, {0, 2, 0}, {3, 2, 5}},
      {{3, 4, 5}, {2, 3, 4}, {1, 1, 1}},
      {{2, 3, 4, 5}, {1, 1, 0, 2}, {1, 2, 4, 3}},
      {{7, 1, 3}, {2, 0, 0}, {3, 1, 3}},
  };
  for (const BoxCase &c : cases) {
    SCOPED_TRACE(::testing::Message() << "global rank " << c.globalShape.size()
                                      << ", first offset " << c.offset[0]);
    checkBox(c);
  }
}

TEST(BoxTest, RunsAreMerged) {
  auto countRuns = [](const BoxCase &c) {
    int64_t runs = 0;
    forEachBoxRun(c.globalShape, c.offset, c.shape,
                  [&](int64_t, int64_t, int64_t) {
                    ++runs;
                    return true;
                  });
    return runs;
  };
  EXPECT_EQ(countRuns({{8, 16}, {2, 0}, {4, 16}}), 1); // rows: one run
  EXPECT_EQ(countRuns({{8, 16}, {0, 4}, {8, 4}}), 8);  // columns: per row
  EXPECT_EQ(countRuns({{4, 6, 8}, {0, 2, 0}, {4, 3, 8}}), 4);
  EXPECT_EQ(countRuns({{4, 6, 8}, {0, 0, 0}, {4, 6, 8}}), 1);
}

TEST(BoxTest, EmptyBoxCopiesNothing) {
  std::vector<int32_t> global(12, 7);
  int32_t sentinel = -1;
  copyBoxOut(global.data(), {3, 4}, {1, 4}, {2, 0}, 4, &sentinel);
  EXPECT_EQ(sentinel, -1);
  copyBoxIn(&sentinel, {3, 4}, {3, 0}, {0, 4}, 4, global.data());
  EXPECT_EQ(global, std::vector<int32_t>(12, 7));
  bool called = false;
  forEachBoxRun({3, 4}, {0, 0}, {3, 0}, [&](int64_t, int64_t, int64_t) {
    called = true;
    return true;
  });
  EXPECT_FALSE(called);
}

TEST(BoxTest, ScalarCopiesOneElement) {
  double global = 2.5, local = 0;
  copyBoxOut(&global, {}, {}, {}, sizeof(double), &local);
  EXPECT_EQ(local, 2.5);
  local = -1;
  copyBoxIn(&local, {}, {}, {}, sizeof(double), &global);
  EXPECT_EQ(global, -1);
}

TEST(BoxTest, EarlyStop) {
  int64_t runs = 0;
  bool completed =
      forEachBoxRun({4, 4}, {0, 1}, {4, 2},
                    [&](int64_t, int64_t, int64_t) { return ++runs < 2; });
  EXPECT_FALSE(completed);
  EXPECT_EQ(runs, 2);
}

TEST(BoxTest, NumElements) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({3, 0, 5}), 0);
  EXPECT_EQ(numElements({3, 4}), 12);
  EXPECT_EQ(numElements({-1}), -1);
  EXPECT_EQ(numElements({int64_t(1) << 40, int64_t(1) << 40}), -1);
}

} // namespace

namespace {

// A [3, 10] tensor whose dim 1 is held head-tail by rank 0 of 2 (pieces
// [0, 3) and [9, 10)) and whose dim 0 is held whole.
TEST(BoxPieces, HeadTailBlockCopiesOutAndBackIn) {
  std::vector<int64_t> globalShape{3, 10};
  std::vector<std::vector<dtensor::layout::Range>> pieces{
      {{0, 3}}, dtensor::layout::headTailRanges(10, 2, 0)};
  std::vector<BoxPiece> boxes = boxPieces(pieces);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].globalOffset, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(boxes[0].localOffset, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(boxes[0].shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(boxes[1].globalOffset, (std::vector<int64_t>{0, 9}));
  EXPECT_EQ(boxes[1].localOffset, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(boxes[1].shape, (std::vector<int64_t>{3, 1}));

  std::vector<int32_t> global(30);
  std::iota(global.begin(), global.end(), 0);
  std::vector<int32_t> local(12 + 1, -1);
  copyPiecesOut(global.data(), globalShape, pieces, sizeof(int32_t),
                local.data());
  EXPECT_EQ(local, (std::vector<int32_t>{0, 1, 2, 9, 10, 11, 12, 19, 20, 21, 22,
                                         29, -1}));
  std::vector<int32_t> restored(30, -1);
  copyPiecesIn(local.data(), globalShape, pieces, sizeof(int32_t),
               restored.data());
  for (int32_t i = 0; i < 30; ++i)
    EXPECT_EQ(restored[i], (i % 10 < 3 || i % 10 == 9) ? i : -1) << i;
}

TEST(BoxPieces, EmptyPiecesAreLeftOut) {
  // 3 over 4 ranks head-tail: rank 3 holds piece 3 (empty) and piece 4
  // ([3, 3), empty too); rank 1 holds [1, 2) and piece 6 (empty).
  std::vector<std::vector<dtensor::layout::Range>> one{
      dtensor::layout::headTailRanges(3, 4, 1)};
  ASSERT_EQ(boxPieces(one).size(), 1u);
  EXPECT_EQ(boxPieces(one)[0].globalOffset, (std::vector<int64_t>{1}));
  std::vector<std::vector<dtensor::layout::Range>> none{
      dtensor::layout::headTailRanges(3, 4, 3)};
  ASSERT_EQ(boxPieces(none).size(), 1u);
  EXPECT_EQ(numElements(boxPieces(none)[0].shape), 0);
}

} // namespace
