//===- InitTest.cpp - Weight initializers and affine fills ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Init.h"

#include "dtensor/Formats/Box.h"
#include "dtensor/Formats/Random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dtensor::rt;

namespace {

const std::vector<int64_t> kShape = {6, 10};

std::vector<float> fillWhole(const Initializer &init, uint64_t seed) {
  std::vector<float> out(numElements(kShape));
  EXPECT_EQ(fillInitializer(init, seed, DType::F32, kShape, {0, 0}, kShape,
                            out.data()),
            "");
  return out;
}

std::vector<double> draw(Factory factory, uint64_t seed) {
  std::vector<double> out(numElements(kShape));
  EXPECT_EQ(fillBox(factory, 0.0, seed, DType::F64, kShape, {0, 0}, kShape,
                    out.data()),
            "");
  return out;
}

TEST(InitTest, NormalIsMeanPlusStdTimesRandn) {
  std::vector<double> randn = draw(Factory::Randn, 9);
  std::vector<float> normal =
      fillWhole(Initializer{InitKind::Normal, {0.5, 0.02}}, 9);
  for (size_t i = 0; i < randn.size(); ++i)
    EXPECT_EQ(normal[i], static_cast<float>(0.5 + 0.02 * randn[i])) << i;
}

TEST(InitTest, UniformIsLowPlusWidthTimesRand) {
  std::vector<float> rand(numElements(kShape));
  ASSERT_EQ(fillBox(Factory::Rand, 0.0, 3, DType::F32, kShape, {0, 0}, kShape,
                    rand.data()),
            "");
  std::vector<float> uniform =
      fillWhole(Initializer{InitKind::Uniform, {-2.0, 3.0}}, 3);
  for (size_t i = 0; i < rand.size(); ++i) {
    EXPECT_EQ(uniform[i], static_cast<float>(-2.0 + 5.0 * double(rand[i])));
    EXPECT_GE(uniform[i], -2.0f);
    EXPECT_LT(uniform[i], 3.0f);
  }
}

TEST(InitTest, AffineWithIdentityIsTheFactory) {
  for (Factory factory : {Factory::Rand, Factory::Randn}) {
    std::vector<double> plain = draw(factory, 5);
    std::vector<double> affine(plain.size());
    ASSERT_EQ(fillBoxAffine(factory, 1.0, 0.0, 5, DType::F64, kShape, {0, 0},
                            kShape, affine.data()),
              "");
    EXPECT_EQ(plain, affine) << factoryName(factory);
  }
  double out;
  EXPECT_NE(fillBoxAffine(Factory::Full, 1.0, 0.0, 0, DType::F64, {1}, {0}, {1},
                          &out),
            "");
}

TEST(InitTest, ConstantsAndIntegers) {
  for (float v : fillWhole(Initializer{InitKind::Constant, {-1.5, 0}}, 0))
    EXPECT_EQ(v, -1.5f);
  for (float v : fillWhole(Initializer{InitKind::Ones, {0, 0}}, 0))
    EXPECT_EQ(v, 1.0f);
  std::vector<int64_t> ids(4);
  ASSERT_EQ(fillInitializer(Initializer{InitKind::Constant, {7, 0}}, 0,
                            DType::I64, {4}, {0}, {4}, ids.data()),
            "");
  EXPECT_EQ(ids, (std::vector<int64_t>{7, 7, 7, 7}));
  EXPECT_NE(fillInitializer(Initializer{InitKind::Normal, {0, 1}}, 0,
                            DType::I32, {4}, {0}, {4}, ids.data()),
            "");
}

TEST(InitTest, ShardsAssembleToTheWholeTensor) {
  Initializer init{InitKind::Normal, {0.0, 0.02}};
  std::vector<float> whole = fillWhole(init, 11);
  // Two row shards and a column block, as different ranks would fill them.
  for (auto [offset, shape] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{0, 0}, {3, 10}}, {{3, 0}, {3, 10}}, {{1, 4}, {4, 3}}}) {
    std::vector<float> block(numElements(shape));
    ASSERT_EQ(fillInitializer(init, 11, DType::F32, kShape, offset, shape,
                              block.data()),
              "");
    for (int64_t r = 0; r < shape[0]; ++r)
      for (int64_t c = 0; c < shape[1]; ++c)
        EXPECT_EQ(block[r * shape[1] + c],
                  whole[(offset[0] + r) * kShape[1] + offset[1] + c]);
  }
}

TEST(InitTest, WeightSeedsDependOnTheName) {
  EXPECT_EQ(initializerSeed(0, "fc1.weight"), initializerSeed(0, "fc1.weight"));
  EXPECT_NE(initializerSeed(0, "fc1.weight"), initializerSeed(0, "fc2.weight"));
  EXPECT_NE(initializerSeed(0, "fc1.weight"), initializerSeed(1, "fc1.weight"));
}

TEST(InitTest, Validation) {
  EXPECT_EQ(validateInitializer({InitKind::Uniform, {1, 1}}, DType::F32), "");
  EXPECT_NE(validateInitializer({InitKind::Uniform, {1, 0}}, DType::F32), "");
  EXPECT_NE(validateInitializer({InitKind::Normal, {0, -1}}, DType::F32), "");
  EXPECT_NE(validateInitializer({InitKind::Normal, {NAN, 1}}, DType::F32), "");
  EXPECT_NE(validateInitializer({InitKind::Normal, {0, 1}}, DType::I64), "");
  EXPECT_EQ(validateInitializer({InitKind::Zeros, {0, 0}}, DType::I64), "");
  EXPECT_EQ(parseInitKind("uniform"), InitKind::Uniform);
  EXPECT_EQ(parseInitKind("xavier"), std::nullopt);
}

} // namespace
