//===- TimedLoopTest.cpp - A run session's warmup and timed steps ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/TimedLoop.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

TEST(TimedLoopTest, SummaryTakesTheUpperMedianAndTheLeast) {
  TimeSummary odd = summarizeTimes({3.0, 1.0, 2.0});
  EXPECT_EQ(odd.median, 2.0);
  EXPECT_EQ(odd.min, 1.0);
  TimeSummary even = summarizeTimes({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(even.median, 3.0);
  EXPECT_EQ(even.min, 1.0);
  TimeSummary none = summarizeTimes({});
  EXPECT_EQ(none.median, 0.0);
  EXPECT_EQ(none.min, 0.0);
}

TEST(TimedLoopTest, DescribesStepsAndRanks) {
  EXPECT_EQ(describeStepTimes(1, 1, {1.5, 1.25}),
            "ran 1 step on 1 rank: median 1.500 ms, min 1.250 ms");
  EXPECT_EQ(describeStepTimes(10, 4, {12.3456, 0.0004}),
            "ran 10 steps on 4 ranks: median 12.346 ms, min 0.000 ms");
}

TEST(TimedLoopTest, LongTimesAreWhole) {
  std::string line = describeStepTimes(2, 2, {1e20, 1e20});
  EXPECT_EQ(line, "ran 2 steps on 2 ranks: median 100000000000000000000.000 "
                  "ms, min 100000000000000000000.000 ms");
}

} // namespace
