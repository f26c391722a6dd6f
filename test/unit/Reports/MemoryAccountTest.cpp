//===- MemoryAccountTest.cpp - Tests of the memory account's arithmetic ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Reports/MemoryAccount.h"

#include <gtest/gtest.h>

using namespace dtensor::memory;

namespace {

TEST(PeakLiveBytes, NoRangesIsZero) { EXPECT_EQ(peakLiveBytes({}), 0); }

TEST(PeakLiveBytes, DisjointRangesTakeTheLargest) {
  EXPECT_EQ(peakLiveBytes({{0, 1, 10}, {2, 3, 30}, {4, 9, 20}}), 30);
}

TEST(PeakLiveBytes, RangesMeetingAtAPointOverlapThere) {
  // The first ends at 2 and the second begins at 2: both live at 2.
  EXPECT_EQ(peakLiveBytes({{0, 2, 10}, {2, 5, 30}}), 40);
  EXPECT_EQ(peakLiveBytes({{0, 1, 10}, {2, 5, 30}}), 30);
}

TEST(PeakLiveBytes, NestedAndStaggeredRanges) {
  // Point 3 has a, b and c live (10 + 20 + 40); point 6 has a and d.
  std::vector<LiveRange> ranges{{0, 8, 10}, {1, 4, 20}, {3, 3, 40}, {5, 7, 25}};
  EXPECT_EQ(peakLiveBytes(ranges), 70);
}

TEST(PeakLiveBytes, ABackwardRangeIsLiveAtItsBeginOnly) {
  EXPECT_EQ(peakLiveBytes({{4, 2, 8}, {3, 3, 5}}), 8);
  EXPECT_EQ(peakLiveBytes({{4, 2, 8}, {4, 6, 5}}), 13);
}

TEST(ExactSizeCacheBytes, EachSizeKeepsItsMostLiveAtOnce) {
  EXPECT_EQ(exactSizeCacheBytes({}), 0);
  // Two 10-byte buffers live at once (points 1-2), then a third alone: the
  // cache keeps two; the 30-byte buffers never overlap: it keeps one.
  std::vector<LiveRange> ranges{
      {0, 2, 10}, {1, 3, 10}, {5, 6, 10}, {0, 0, 30}, {4, 4, 30}};
  EXPECT_EQ(exactSizeCacheBytes(ranges), 2 * 10 + 30);
  // Above the peak (40 at points 0-2): a freed buffer of one size is not
  // reused for another.
  EXPECT_EQ(peakLiveBytes(ranges), 40);
}

RankMemory rank(int64_t id, int64_t parameters, int64_t transient) {
  RankMemory memory;
  memory.rank = id;
  memory.parameters = parameters;
  memory.optimizerState = 2 * parameters + 4;
  memory.inputsOutputs = 12;
  memory.gradients = parameters;
  memory.savedActivations = 100;
  memory.transientPeak = transient;
  memory.lastUsePeak = transient - 1;
  memory.cachedBuffers = transient + 10;
  return memory;
}

TEST(RankMemory, PeakAddsPersistentInputsAndTransient) {
  RankMemory memory = rank(0, 100, 50);
  memory.otherState = 7;
  EXPECT_EQ(memory.persistent(), 100 + 204 + 7);
  EXPECT_EQ(memory.peak(), 311 + 12 + 50);
}

TEST(EntryMemory, LargestRankAndDifferences) {
  EntryMemory entry{"train_step", true, {rank(0, 100, 50), rank(1, 90, 40)}};
  EXPECT_EQ(largestRank(entry), 0u);
  EXPECT_TRUE(ranksDiffer(entry));
  entry.ranks = {rank(0, 90, 40), rank(1, 100, 50), rank(2, 100, 50)};
  EXPECT_EQ(largestRank(entry), 1u);
  entry.ranks = {rank(0, 90, 40), rank(1, 90, 40)};
  EXPECT_FALSE(ranksDiffer(entry));
  EXPECT_EQ(largestRank(entry), 0u);
}

TEST(FormatMemoryText, EvenRanksShareOneRow) {
  EntryMemory entry{"mlp", false, {rank(0, 90, 40), rank(1, 90, 40)}};
  std::string text = formatMemoryText({entry});
  EXPECT_EQ(text,
            "memory per rank (bytes)\n"
            "  entry  rank   parameters  optimizer_state  other_state  "
            "inputs_outputs  gradients  saved_activations  transient_peak  "
            "last_use_peak  cached_buffers  peak  unknown_sizes\n"
            "  mlp    all 0  90          184              0            12"
            "              -          -                  40              39"
            "             50              326   0\n");
}

TEST(FormatMemoryText, UnevenRanksListEachRank) {
  EntryMemory entry{"train_step", true, {rank(0, 90, 40), rank(1, 100, 50)}};
  std::string text = formatMemoryText({entry});
  EXPECT_NE(text.find("train_step  max 1"), std::string::npos) << text;
  EXPECT_NE(text.find("train_step  0 "), std::string::npos) << text;
  EXPECT_NE(text.find("train_step  1 "), std::string::npos) << text;
  // Rank 1: 100 + 204 + 12 + 50.
  EXPECT_NE(text.find(" 366 "), std::string::npos) << text;
}

TEST(FormatMemoryJson, TrainingFiguresOnlyForTrainingSteps) {
  EntryMemory step{"train_step", true, {rank(3, 10, 5)}};
  EntryMemory eval{"eval_step", false, {rank(3, 10, 5)}};
  EXPECT_EQ(formatMemoryJson({step, eval}),
            "{\"entries\": [{\"name\": \"train_step\", \"training\": true, "
            "\"max_rank\": 3, \"ranks\": [{\"rank\": 3, \"parameters\": 10, "
            "\"optimizer_state\": 24, \"other_state\": 0, "
            "\"inputs_outputs\": 12, \"gradients\": 10, "
            "\"saved_activations\": 100, \"transient_peak\": 5, "
            "\"last_use_peak\": 4, \"cached_buffers\": 15, "
            "\"persistent\": 34, \"peak\": 51, "
            "\"unknown_sizes\": 0}]}, "
            "{\"name\": \"eval_step\", \"training\": false, \"max_rank\": 3, "
            "\"ranks\": [{\"rank\": 3, \"parameters\": 10, "
            "\"optimizer_state\": 24, \"other_state\": 0, "
            "\"inputs_outputs\": 12, \"transient_peak\": 5, "
            "\"last_use_peak\": 4, \"cached_buffers\": 15, "
            "\"persistent\": 34, \"peak\": 51, "
            "\"unknown_sizes\": 0}]}]}\n");
}

} // namespace
