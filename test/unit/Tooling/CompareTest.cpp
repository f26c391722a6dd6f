//===- CompareTest.cpp - An output against its reference ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/Compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace dtensor::tooling;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

Comparison compareF64(const std::vector<double> &expected,
                      const std::vector<double> &actual,
                      std::optional<double> tolerance = std::nullopt) {
  EXPECT_EQ(expected.size(), actual.size());
  return compareWithReference(DTENSOR_F64, expected.data(), actual.data(),
                              expected.size(), tolerance);
}

TEST(CompareTest, DefaultTolerances) {
  EXPECT_EQ(defaultTolerance(DTENSOR_F32), 1e-5);
  EXPECT_EQ(defaultTolerance(DTENSOR_F64), 1e-5);
  EXPECT_EQ(defaultTolerance(DTENSOR_F16), 1e-2);
  EXPECT_EQ(defaultTolerance(DTENSOR_BF16), 1e-2);
  EXPECT_EQ(defaultTolerance(DTENSOR_I64), 0);
}

TEST(CompareTest, EqualValues) {
  Comparison c = compareF64({1, -2, 3}, {1, -2, 3});
  EXPECT_TRUE(c.ok);
  EXPECT_TRUE(c.floatingPoint);
  EXPECT_EQ(c.count, 3u);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.maxAbsError, 0);
  EXPECT_EQ(c.maxRelError, 0);
  EXPECT_EQ(c.tolerance, 1e-5);
}

TEST(CompareTest, ErrorIsRelativeToTheLargestReferenceMagnitude) {
  // |error| 0.001 at an entry of 0.001 (100% there), but the largest
  // reference magnitude is 100: 1e-5 relative.
  Comparison c = compareF64({100, 0.001, -50}, {100, 0.002, -50});
  EXPECT_DOUBLE_EQ(c.maxAbsError, 0.001);
  EXPECT_DOUBLE_EQ(c.maxRelError, 1e-5);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_TRUE(c.ok); // 1e-5 <= 1e-5
  // Just above the tolerance.
  c = compareF64({100, 0.001, -50}, {100, 0.0021, -50});
  EXPECT_FALSE(c.ok);
  // The largest error wins, wherever it is; the sign does not matter.
  c = compareF64({10, -10}, {10.5, -11});
  EXPECT_DOUBLE_EQ(c.maxAbsError, 1);
  EXPECT_DOUBLE_EQ(c.maxRelError, 0.1);
}

TEST(CompareTest, GivenTolerance) {
  Comparison c = compareF64({1, 2}, {1, 2.1}, 0.1);
  EXPECT_EQ(c.tolerance, 0.1);
  EXPECT_TRUE(c.ok);
  c = compareF64({1, 2}, {1, 2.1}, 0.04);
  EXPECT_FALSE(c.ok);
  c = compareF64({1, 2}, {1, 2}, 0.0);
  EXPECT_TRUE(c.ok);
}

TEST(CompareTest, ZeroReferenceIsAbsolute) {
  Comparison c = compareF64({0, 0}, {0, 1e-6});
  EXPECT_EQ(c.maxRelError, 1e-6);
  EXPECT_TRUE(c.ok);
  c = compareF64({0, 0}, {0, 1e-4});
  EXPECT_FALSE(c.ok);
}

TEST(CompareTest, NaNs) {
  // NaN on both sides agrees.
  Comparison c = compareF64({kNaN, 1}, {kNaN, 1});
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.mismatches, 0u);
  // On one side only: a mismatch whatever the tolerance.
  c = compareF64({kNaN, 1}, {0, 1}, 1e30);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.nanMismatches, 1u);
  EXPECT_EQ(c.mismatches, 1u);
  c = compareF64({2, 1}, {2, kNaN}, 1e30);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.nanMismatches, 1u);
}

TEST(CompareTest, Infinities) {
  Comparison c = compareF64({kInf, -kInf, 1}, {kInf, -kInf, 1});
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.maxAbsError, 0);
  c = compareF64({kInf, 1}, {-kInf, 1}, 1e30);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.maxAbsError, kInf);
  c = compareF64({1, 2}, {1, kInf}, 1e30);
  EXPECT_FALSE(c.ok);
  // An infinite reference does not hide a finite error elsewhere.
  c = compareF64({kInf, 1}, {kInf, 1.5});
  EXPECT_DOUBLE_EQ(c.maxRelError, 0.5);
  EXPECT_FALSE(c.ok);
}

TEST(CompareTest, LowPrecisionFloats) {
  uint16_t expected[] = {0x3c00, 0x4000}; // f16 1, 2
  uint16_t actual[] = {0x3c00, 0x4001};   // 2 + 2^-9
  Comparison c =
      compareWithReference(DTENSOR_F16, expected, actual, 2, std::nullopt);
  EXPECT_EQ(c.tolerance, 1e-2);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 1.0 / 512);
  EXPECT_TRUE(c.ok);
  uint16_t bf16Expected[] = {0x3f80}; // 1
  uint16_t bf16Actual[] = {0x3f90};   // 1.125
  c = compareWithReference(DTENSOR_BF16, bf16Expected, bf16Actual, 1,
                           std::nullopt);
  EXPECT_DOUBLE_EQ(c.maxRelError, 0.125);
  EXPECT_FALSE(c.ok);
  float f32Expected[] = {1.0f}, f32Actual[] = {1.0f + 1e-7f};
  c = compareWithReference(DTENSOR_F32, f32Expected, f32Actual, 1,
                           std::nullopt);
  EXPECT_TRUE(c.ok);
}

TEST(CompareTest, IntegersMustBeEqual) {
  int64_t expected[] = {1, 2, 3, 4};
  int64_t actual[] = {1, 2, 3, 4};
  Comparison c =
      compareWithReference(DTENSOR_I64, expected, actual, 4, std::nullopt);
  EXPECT_TRUE(c.ok);
  EXPECT_FALSE(c.floatingPoint);
  actual[2] = 30;
  actual[3] = 5;
  // A tolerance does not apply to integers.
  c = compareWithReference(DTENSOR_I64, expected, actual, 4, 1e30);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 2u);
  uint8_t boolExpected[] = {1, 0}, boolActual[] = {2, 0}; // both true
  c = compareWithReference(DTENSOR_BOOL, boolExpected, boolActual, 2,
                           std::nullopt);
  EXPECT_TRUE(c.ok);
  int8_t i8Expected[] = {-1}, i8Actual[] = {1};
  EXPECT_FALSE(
      compareWithReference(DTENSOR_I8, i8Expected, i8Actual, 1, std::nullopt)
          .ok);
}

TEST(CompareTest, Empty) {
  Comparison c = compareF64({}, {});
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.count, 0u);
}

TEST(CompareTest, Description) {
  EXPECT_EQ(describeComparison("y", compareF64({100, 1}, {100, 1.0005})),
            "check y: max abs error 0.0005, max rel error 5e-06 "
            "(tolerance 1e-05): ok");
  EXPECT_EQ(describeComparison("y", compareF64({1, 1}, {1, 2})),
            "check y: max abs error 1, max rel error 1 (tolerance 1e-05): "
            "MISMATCH");
  EXPECT_EQ(describeComparison("y", compareF64({kNaN, 1, kNaN}, {0, 1, 0})),
            "check y: max abs error 0, max rel error 0, 2 elements NaN on "
            "one side only (tolerance 1e-05): MISMATCH");
  int32_t expected[] = {1, 2, 3}, actual[] = {1, 0, 3};
  EXPECT_EQ(describeComparison("next_token",
                               compareWithReference(DTENSOR_I32, expected,
                                                    expected, 3)),
            "check next_token: 0 of 3 elements differ: ok");
  EXPECT_EQ(describeComparison("next_token",
                               compareWithReference(DTENSOR_I32, expected,
                                                    actual, 3)),
            "check next_token: 1 of 3 elements differ: MISMATCH");
}

} // namespace
