//===- SamplingTest.cpp - Tests of next-token sampling --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The counter-based uniform numbers (a function of their key alone), the
// inverse-CDF draw at its boundaries, greedy decoding through the
// processors; test/Tools/dtensor-sample compares the processors with
// transformers'.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Sampling.h"

#include <gtest/gtest.h>

#include <set>

using namespace dtensor::tooling;

namespace {

TEST(SamplingTest, CounterUniformDependsOnItsKeyOnly) {
  std::set<double> seen;
  for (uint64_t index = 0; index < 100; ++index) {
    double u = counterUniform(7, 0, index);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_EQ(u, counterUniform(7, 0, index));
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_NE(counterUniform(7, 0, 3), counterUniform(7, 1, 3));
  EXPECT_NE(counterUniform(7, 0, 3), counterUniform(8, 0, 3));
}

TEST(SamplingTest, DrawsByTheCumulativeDistribution) {
  std::vector<double> probabilities = {0.25, 0.0, 0.5, 0.25};
  EXPECT_EQ(drawToken(probabilities, 0.0), 0);
  EXPECT_EQ(drawToken(probabilities, 0.2499), 0);
  EXPECT_EQ(drawToken(probabilities, 0.25), 2);
  EXPECT_EQ(drawToken(probabilities, 0.7499), 2);
  EXPECT_EQ(drawToken(probabilities, 0.75), 3);
  // A total a little under 1: the last possible token.
  EXPECT_EQ(drawToken({0.5, 0.4999999, 0.0}, 0.99999999), 1);
}

TEST(SamplingTest, GreedyAppliesPenaltiesAndBias) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f};
  SamplingParams greedy;
  greedy.temperature = 0;
  EXPECT_TRUE(greedy.greedyArgmax());
  EXPECT_EQ(sampleToken(logits.data(), 3, greedy, {}, {}, 0), 1);
  SamplingParams biased = greedy;
  biased.logitBias[2] = 1.5;
  EXPECT_FALSE(biased.greedyArgmax());
  EXPECT_EQ(sampleToken(logits.data(), 3, biased, {}, {}, 0), 2);
  SamplingParams penalised = greedy;
  penalised.repetitionPenalty = 2; // 3 / 2 < 2
  EXPECT_EQ(sampleToken(logits.data(), 3, penalised, {1}, {}, 0), 2);
  SamplingParams frequency = greedy;
  frequency.frequencyPenalty = 1; // 3 - 2 < 2
  EXPECT_EQ(sampleToken(logits.data(), 3, frequency, {}, {1, 1}, 0), 2);
}

TEST(SamplingTest, FiltersKeepAtLeastOneToken) {
  std::vector<float> logits = {0.0f, 5.0f, 1.0f};
  SamplingParams params;
  params.topP = 0.01;
  params.minP = 0.99;
  params.topK = 1;
  std::vector<double> probabilities =
      softmax(processLogits(logits.data(), 3, params, {}, {}));
  EXPECT_EQ(probabilities, (std::vector<double>{0.0, 1.0, 0.0}));
}

} // namespace
