//===- GenerationTest.cpp - Prefill chunks and the decode step ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "dtensor/Tooling/Generation.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

// llama_tiny_kv's entries: decode (4 x 1), prefill_16/64/256 (1 x N).
std::vector<StepShape> ladder() {
  return {{"decode", 4, 1},
          {"prefill_16", 1, 16},
          {"prefill_64", 1, 64},
          {"prefill_256", 1, 256}};
}

std::string describe(const std::vector<StepShape> &steps,
                     const std::vector<PrefillChunk> &chunks) {
  std::string text;
  for (const PrefillChunk &chunk : chunks)
    text += steps[chunk.step].entry + "@" + std::to_string(chunk.offset) +
            "+" + std::to_string(chunk.length) + " ";
  return text;
}

TEST(GenerationTest, PrefillTakesTheShortestEntryThatHoldsThePrompt) {
  std::string error;
  std::vector<StepShape> steps = ladder();
  EXPECT_EQ(describe(steps, planPrefill(steps, 1, 256, error)), "decode@0+1 ");
  EXPECT_EQ(describe(steps, planPrefill(steps, 2, 256, error)),
            "prefill_16@0+2 ");
  EXPECT_EQ(describe(steps, planPrefill(steps, 16, 256, error)),
            "prefill_16@0+16 ");
  EXPECT_EQ(describe(steps, planPrefill(steps, 17, 256, error)),
            "prefill_64@0+17 ");
  EXPECT_EQ(describe(steps, planPrefill(steps, 256, 256, error)),
            "prefill_256@0+256 ");
  EXPECT_TRUE(error.empty());
}

TEST(GenerationTest, LongPromptsGoInChunksThatStayInTheCache) {
  std::string error;
  std::vector<StepShape> steps = {{"decode", 2, 1}, {"prefill_8", 1, 8}};
  // 8 + 8 + 3 (padded to 8: positions 16..23 fit 24).
  EXPECT_EQ(describe(steps, planPrefill(steps, 19, 24, error)),
            "prefill_8@0+8 prefill_8@8+8 prefill_8@16+3 ");
  // In a cache of 20 the last chunk cannot pad to 8: one token at a time.
  EXPECT_EQ(describe(steps, planPrefill(steps, 19, 20, error)),
            "prefill_8@0+8 prefill_8@8+8 decode@16+1 decode@17+1 "
            "decode@18+1 ");
  EXPECT_TRUE(error.empty());
}

TEST(GenerationTest, FewerRowsWinAmongEqualLengths) {
  std::string error;
  std::vector<StepShape> steps = {{"wide", 8, 4}, {"narrow", 1, 4}};
  EXPECT_EQ(describe(steps, planPrefill(steps, 3, 16, error)),
            "narrow@0+3 ");
}

TEST(GenerationTest, PromptsThatCannotBePrefilled) {
  std::string error;
  std::vector<StepShape> steps = ladder();
  EXPECT_TRUE(planPrefill(steps, 0, 256, error).empty());
  EXPECT_EQ(error, "the prompt is empty");
  EXPECT_TRUE(planPrefill(steps, 257, 256, error).empty());
  EXPECT_EQ(error, "the prompt has 257 tokens; the cache holds 256 positions");
  std::vector<StepShape> wide = {{"prefill_8", 1, 8}};
  EXPECT_TRUE(planPrefill(wide, 5, 6, error).empty());
  EXPECT_EQ(error, "no entry fits tokens 0..4 of the prompt in a cache of 6 "
                   "positions");
}

TEST(GenerationTest, DecodeUsesTheNarrowestOneTokenStepThatHoldsTheRows) {
  EXPECT_EQ(pickDecodeStep(ladder(), 3), 0);
  std::vector<StepShape> steps = {
      {"decode_8", 8, 1}, {"decode_2", 2, 1}, {"wide", 16, 2}};
  EXPECT_EQ(pickDecodeStep(steps, 1), 1);
  EXPECT_EQ(pickDecodeStep(steps, 2), 1);
  EXPECT_EQ(pickDecodeStep(steps, 3), 0);
  // More rows than any step: the widest, run as many times as it takes.
  EXPECT_EQ(pickDecodeStep(steps, 20), 0);
  EXPECT_EQ(pickDecodeStep({{"prefill", 1, 16}}, 1), -1);
}

} // namespace
