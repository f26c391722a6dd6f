//===- RandomTest.cpp - Sharding-independent tensor factories -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Random.h"

#include "dtensor/Formats/Box.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace dtensor::rt;

namespace {

template <typename T>
std::vector<T> fill(Factory factory, uint64_t seed, DType dtype,
                    const std::vector<int64_t> &globalShape,
                    const std::vector<int64_t> &offset,
                    const std::vector<int64_t> &shape, double value = 0) {
  std::vector<T> out(std::max<int64_t>(numElements(shape), 1));
  std::string error = fillBox(factory, value, seed, dtype, globalShape, offset,
                              shape, out.data());
  EXPECT_EQ(error, "");
  out.resize(numElements(shape));
  return out;
}

TEST(RandomTest, BoxesAgreeWithTheWholeTensor) {
  const std::vector<int64_t> globalShape = {5, 7, 6};
  for (Factory factory : {Factory::Rand, Factory::Randn}) {
    SCOPED_TRACE(factoryName(factory));
    std::vector<float> whole = fill<float>(factory, 42, DType::F32, globalShape,
                                           {0, 0, 0}, globalShape);
    const std::vector<std::vector<int64_t>> boxes = {
        {0, 0, 0, 5, 7, 3}, {2, 3, 1, 2, 2, 4}, {4, 6, 5, 1, 1, 1},
        {1, 0, 0, 3, 7, 6}, {0, 2, 0, 5, 3, 6}, {3, 0, 0, 0, 7, 6}};
    for (const std::vector<int64_t> &box : boxes) {
      std::vector<int64_t> offset(box.begin(), box.begin() + 3);
      std::vector<int64_t> shape(box.begin() + 3, box.end());
      std::vector<float> expected(numElements(shape));
      copyBoxOut(whole.data(), globalShape, offset, shape, sizeof(float),
                 expected.data());
      EXPECT_EQ(
          fill<float>(factory, 42, DType::F32, globalShape, offset, shape),
          expected);
    }
  }
}

TEST(RandomTest, ValuesDependOnTheGlobalIndexOnly) {
  // Element 13 of a 1-D tensor of 20 is element (2, 3) of a 4x5 tensor.
  std::vector<double> flat =
      fill<double>(Factory::Randn, 7, DType::F64, {20}, {13}, {1});
  std::vector<double> square =
      fill<double>(Factory::Randn, 7, DType::F64, {4, 5}, {2, 3}, {1, 1});
  EXPECT_EQ(flat, square);
}

TEST(RandomTest, SeedsDiffer) {
  std::vector<float> a =
      fill<float>(Factory::Rand, 1, DType::F32, {64}, {0}, {64});
  std::vector<float> b =
      fill<float>(Factory::Rand, 2, DType::F32, {64}, {0}, {64});
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i)
    same += a[i] == b[i];
  EXPECT_LT(same, 2);
  EXPECT_EQ(a, fill<float>(Factory::Rand, 1, DType::F32, {64}, {0}, {64}));
}

TEST(RandomTest, Moments) {
  const int64_t n = 100000;
  for (DType dtype : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype));
    std::vector<double> uniformValues, normalValues;
    if (dtype == DType::F32) {
      for (float v : fill<float>(Factory::Rand, 3, dtype, {n}, {0}, {n}))
        uniformValues.push_back(v);
      for (float v : fill<float>(Factory::Randn, 3, dtype, {n}, {0}, {n}))
        normalValues.push_back(v);
    } else {
      uniformValues = fill<double>(Factory::Rand, 3, dtype, {n}, {0}, {n});
      normalValues = fill<double>(Factory::Randn, 3, dtype, {n}, {0}, {n});
    }
    auto moments = [](const std::vector<double> &values) {
      double mean = 0, variance = 0;
      for (double v : values)
        mean += v;
      mean /= values.size();
      for (double v : values)
        variance += (v - mean) * (v - mean);
      return std::make_pair(mean, variance / values.size());
    };
    for (double v : uniformValues) {
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
    }
    // Standard errors: uniform mean 0.0009, normal mean 0.0032.
    auto [uMean, uVar] = moments(uniformValues);
    EXPECT_NEAR(uMean, 0.5, 0.005);
    EXPECT_NEAR(uVar, 1.0 / 12, 0.002);
    auto [nMean, nVar] = moments(normalValues);
    EXPECT_NEAR(nMean, 0.0, 0.015);
    EXPECT_NEAR(nVar, 1.0, 0.02);
    int beyond3 = 0;
    for (double v : normalValues)
      beyond3 += std::fabs(v) > 3;
    EXPECT_NEAR(beyond3, 270, 80); // 0.27% of samples
  }
}

TEST(RandomTest, HalfPrecisionRandStaysBelowOne) {
  const int64_t n = 20000;
  for (DType dtype : {DType::F16, DType::BF16}) {
    std::vector<uint16_t> bits =
        fill<uint16_t>(Factory::Rand, 9, dtype, {n}, {0}, {n});
    double sum = 0;
    for (uint16_t b : bits) {
      float v = dtype == DType::F16 ? halfToFloat(b) : bf16ToFloat(b);
      ASSERT_GE(v, 0.0f);
      ASSERT_LT(v, 1.0f);
      sum += v;
    }
    EXPECT_NEAR(sum / n, 0.5, 0.01) << dtypeName(dtype);
  }
  // f16 randn is the f32 randn rounded.
  std::vector<float> f32 =
      fill<float>(Factory::Randn, 5, DType::F32, {16}, {0}, {16});
  std::vector<uint16_t> f16 =
      fill<uint16_t>(Factory::Randn, 5, DType::F16, {16}, {0}, {16});
  for (int i = 0; i < 16; ++i)
    EXPECT_NEAR(halfToFloat(f16[i]), f32[i], std::fabs(f32[i]) * 1e-3 + 1e-4);
}

TEST(RandomTest, Constants) {
  EXPECT_EQ(fill<float>(Factory::Zeros, 0, DType::F32, {2, 2}, {0, 0}, {2, 2}),
            std::vector<float>(4, 0.0f));
  EXPECT_EQ(fill<double>(Factory::Ones, 0, DType::F64, {3}, {1}, {2}),
            std::vector<double>(2, 1.0));
  EXPECT_EQ(fill<double>(Factory::Full, 0, DType::F64, {3}, {0}, {3}, 2.5),
            std::vector<double>(3, 2.5));
  EXPECT_EQ(fill<uint16_t>(Factory::Full, 0, DType::F16, {2}, {0}, {2}, -2),
            std::vector<uint16_t>(2, 0xc000));
  EXPECT_EQ(fill<uint16_t>(Factory::Ones, 0, DType::BF16, {2}, {0}, {2}),
            std::vector<uint16_t>(2, 0x3f80));
  EXPECT_EQ(fill<int32_t>(Factory::Full, 0, DType::I32, {3}, {0}, {3}, -7.9),
            std::vector<int32_t>(3, -7));
  EXPECT_EQ(fill<int64_t>(Factory::Ones, 0, DType::I64, {2}, {0}, {2}),
            std::vector<int64_t>(2, 1));
  EXPECT_EQ(fill<int64_t>(Factory::Zeros, 0, DType::I64, {2}, {0}, {2}),
            std::vector<int64_t>(2, 0));
  EXPECT_EQ(fill<int8_t>(Factory::Full, 0, DType::I8, {2}, {0}, {2}, -128),
            std::vector<int8_t>(2, -128));
  EXPECT_EQ(fill<uint8_t>(Factory::Full, 0, DType::Bool, {2}, {0}, {2}, 0.5),
            std::vector<uint8_t>(2, 1));
  EXPECT_EQ(fill<uint8_t>(Factory::Zeros, 0, DType::Bool, {2}, {0}, {2}),
            std::vector<uint8_t>(2, 0));
  EXPECT_EQ(fill<float>(Factory::Full, 0, DType::F32, {}, {}, {}, 4),
            std::vector<float>(1, 4.0f));
  EXPECT_TRUE(fill<float>(Factory::Rand, 0, DType::F32, {4, 0}, {0, 0}, {4, 0})
                  .empty());
}

TEST(RandomTest, Errors) {
  int64_t out[4];
  EXPECT_EQ(fillBox(Factory::Rand, 0, 1, DType::I64, {4}, {0}, {4}, out),
            "rand: i64 tensors can only be made by zeros, ones or full "
            "(random values need a floating-point dtype)");
  EXPECT_EQ(fillBox(Factory::Randn, 0, 1, DType::Bool, {4}, {0}, {4}, out),
            "randn: bool tensors can only be made by zeros, ones or full "
            "(random values need a floating-point dtype)");
  EXPECT_EQ(fillBox(Factory::Full, 128, 1, DType::I8, {4}, {0}, {4}, out),
            "full: the fill value 128.000000 does not fit i8");
  EXPECT_TRUE(fillBox(Factory::Full, NAN, 1, DType::I32, {4}, {0}, {4}, out) !=
              "");
  EXPECT_EQ(fillBox(Factory::Zeros, 0, 1, DType::F32, {4}, {2}, {3}, out),
            "zeros: the box [2, 2 + 3) of dim 0 is outside [0, 4)");
  EXPECT_EQ(fillBox(Factory::Ones, 0, 1, DType::F32, {4}, {0, 0}, {4}, out),
            "ones: the box has rank 2/1, the tensor rank 1");
}

TEST(RandomTest, FactoryNames) {
  for (Factory factory : {Factory::Zeros, Factory::Ones, Factory::Full,
                          Factory::Rand, Factory::Randn})
    EXPECT_EQ(parseFactory(factoryName(factory)), factory);
  EXPECT_FALSE(parseFactory("normal"));
}

} // namespace

namespace {

using namespace dtensor::rt::counter_rng;

TEST(CounterRngTest, StepSeedsDifferAcrossStepsAndSeeds) {
  // Steps 0..999 of seeds 0..3: all distinct, and none a weight's stream
  // seed of the same run seed (a different domain).
  std::vector<uint64_t> seeds;
  for (uint64_t run = 0; run < 4; ++run)
    for (uint64_t step = 0; step < 1000; ++step)
      seeds.push_back(stepSeed(run, step));
  std::vector<uint64_t> sorted = seeds;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_NE(stepSeed(0, 0), streamSeed(0, nameHash("")));
  // A pure function of (seed, step).
  EXPECT_EQ(stepSeed(7, 3), stepSeed(7, 3));
  static_assert(stepSeed(1, 2) == stepSeed(1, 2));
}

TEST(CounterRngTest, StreamSeedsOfNamesDiffer) {
  uint64_t step = stepSeed(0, 0);
  EXPECT_NE(streamSeed(step, nameHash("mask")),
            streamSeed(step, nameHash("noise")));
  EXPECT_NE(streamSeed(step, nameHash("a")), streamSeed(step + 1, nameHash("a")));
  // FNV-1a's published test vectors.
  static_assert(nameHash("") == 0xcbf29ce484222325ull);
  static_assert(nameHash("a") == 0xaf63dc4c8601ec8cull);
}

TEST(CounterRngTest, FillBoxDrawsTheElementWords) {
  // fillBox's f32 rand is the top 24 bits of word 0 of each element.
  const uint64_t seed = 11;
  std::vector<float> values =
      fill<float>(Factory::Rand, seed, DType::F32, {3, 4}, {0, 0}, {3, 4});
  uint64_t key = streamKey(seed);
  for (uint64_t i = 0; i < 12; ++i)
    EXPECT_EQ(values[i], std::ldexp(static_cast<float>(
                                        elementWord(key, i, 0) >> 40),
                                    -24))
        << "element " << i;
  // Randn: Box-Muller over both words' top 53 bits.
  std::vector<double> normal =
      fill<double>(Factory::Randn, seed, DType::F64, {5}, {0}, {5});
  for (uint64_t i = 0; i < 5; ++i) {
    double u0 = std::ldexp(static_cast<double>(elementWord(key, i, 0) >> 11), -53);
    double u1 = std::ldexp(static_cast<double>(elementWord(key, i, 1) >> 11), -53);
    EXPECT_EQ(normal[i], std::sqrt(-2.0 * std::log(1.0 - u0)) *
                             std::cos(6.283185307179586476925286766559 * u1))
        << "element " << i;
  }
}

} // namespace
