//===- RandomOpsTest.cpp - rand, randn, rand_like, dropout, bernoulli -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compiled random ops against the runtime's generator: with the step
// seed S (what dtensor_rt_step_seed returns), an op whose output is named
// `name` draws fillBox's values of the seed streamSeed(S, nameHash(name)),
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "NaiveRuntime.h"
#include "OpHarness.h"

#include "dtensor/Formats/Box.h"
#include "dtensor/Formats/Random.h"

#include <cmath>
#include <cstring>

using namespace dtensor::frontend::test;
namespace rng = dtensor::rt::counter_rng;
using dtensor::rt::DType;
using dtensor::rt::Factory;

namespace {

using RandomOpsTest = OpTest;

constexpr uint64_t kStepSeed = 0x0123456789abcdefull;

DType formatsDtype(Dtype dtype) {
  switch (dtype) {
  case Dtype::F16:
    return DType::F16;
  case Dtype::BF16:
    return DType::BF16;
  default:
    return DType::F32;
  }
}

/// fillBox's values of a whole tensor, as doubles.
std::vector<double> expectedDraws(Factory factory, const char *name,
                                  Dtype dtype, std::vector<int64_t> shape,
                                  uint64_t stepSeed = kStepSeed) {
  uint64_t seed = rng::streamSeed(stepSeed, rng::nameHash(name));
  int64_t count = dtensor::rt::numElements(shape);
  std::vector<double> values(count);
  std::vector<int64_t> zeros(shape.size(), 0);
  if (dtype == Dtype::F32) {
    std::vector<float> out(std::max<int64_t>(count, 1));
    EXPECT_EQ(dtensor::rt::fillBox(factory, 0, seed, DType::F32, shape, zeros,
                                   shape, out.data()),
              "");
    for (int64_t i = 0; i < count; ++i)
      values[i] = out[i];
  } else {
    std::vector<uint16_t> out(std::max<int64_t>(count, 1));
    EXPECT_EQ(dtensor::rt::fillBox(factory, 0, seed, formatsDtype(dtype),
                                   shape, zeros, shape, out.data()),
              "");
    for (int64_t i = 0; i < count; ++i)
      values[i] = dtype == Dtype::F16 ? dtensor::rt::halfToFloat(out[i])
                                      : dtensor::rt::bf16ToFloat(out[i]);
  }
  return values;
}

/// Exact equality, element by element.
void expectEqualValues(const Tensor &actual, const std::vector<double> &expected) {
  ASSERT_EQ(actual.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_EQ(actual.values[i], expected[i]) << "element " << i;
}

class RandomOps : public RandomOpsTest {
protected:
  RandomOps() { dtensor::test::setNaiveStepSeed(kStepSeed); }
};

TEST_F(RandomOps, RandIsTheRuntimesRand) {
  for (auto [dtype, text] : {std::pair{Dtype::F32, "f32"},
                             std::pair{Dtype::F16, "f16"},
                             std::pair{Dtype::BF16, "bf16"}}) {
    SCOPED_TRACE(text);
    std::string op = std::string(R"({"op": "rand", "inputs": [], "output": "noise",
                                     "shape": [3, 5, 2], "dtype": ")") +
                     text + "\"}";
    Tensor y = runOne(op, {});
    EXPECT_EQ(y.dtype, dtype);
    EXPECT_EQ(y.shape, (std::vector<int64_t>{3, 5, 2}));
    expectEqualValues(y, expectedDraws(Factory::Rand, "noise", dtype, {3, 5, 2}));
    for (double v : y.values) {
      EXPECT_GE(v, 0.0);
      EXPECT_LT(v, 1.0);
    }
  }
  // The default dtype is f32.
  Tensor y = runOne(R"({"op": "rand", "inputs": [], "output": "u",
                        "shape": [7]})",
                    {});
  EXPECT_EQ(y.dtype, Dtype::F32);
  expectEqualValues(y, expectedDraws(Factory::Rand, "u", Dtype::F32, {7}));
}

TEST_F(RandomOps, RandnIsTheRuntimesRandn) {
  for (auto [dtype, text] : {std::pair{Dtype::F32, "f32"},
                             std::pair{Dtype::F16, "f16"},
                             std::pair{Dtype::BF16, "bf16"}}) {
    SCOPED_TRACE(text);
    std::string op = std::string(R"({"op": "randn", "inputs": [], "output": "z",
                                     "shape": [4, 33], "dtype": ")") +
                     text + "\"}";
    Tensor y = runOne(op, {});
    EXPECT_EQ(y.dtype, dtype);
    expectEqualValues(y, expectedDraws(Factory::Randn, "z", dtype, {4, 33}));
  }
  // A 0-d tensor and an empty one.
  expectEqualValues(runOne(R"({"op": "randn", "inputs": [], "output": "s",
                               "shape": []})",
                           {}),
                    expectedDraws(Factory::Randn, "s", Dtype::F32, {}));
  EXPECT_TRUE(runOne(R"({"op": "randn", "inputs": [], "output": "e",
                         "shape": [3, 0]})",
                     {})
                  .values.empty());
}

TEST_F(RandomOps, StreamsDependOnTheNameAndTheStep) {
  const char *op = R"({"op": "rand", "inputs": [], "output": "a",
                       "shape": [64]})";
  Tensor first = runOne(op, {});
  Tensor renamed = runOne(R"({"op": "rand", "inputs": [], "output": "b",
                              "shape": [64]})",
                          {});
  dtensor::test::setNaiveStepSeed(kStepSeed + 1);
  Tensor nextStep = runOne(op, {});
  expectEqualValues(nextStep,
                    expectedDraws(Factory::Rand, "a", Dtype::F32, {64},
                                  kStepSeed + 1));
  int sameName = 0, sameStep = 0;
  for (size_t i = 0; i < 64; ++i) {
    sameName += first.values[i] == renamed.values[i];
    sameStep += first.values[i] == nextStep.values[i];
  }
  EXPECT_LT(sameName, 2);
  EXPECT_LT(sameStep, 2);
}

TEST_F(RandomOps, RandLikeTakesTheShapeAndDtype) {
  Tensor x = ramp(Dtype::BF16, {2, 3, 4}, 1);
  Tensor y = runOne(R"({"op": "rand_like", "inputs": ["x"], "output": "r"})",
                    {x});
  EXPECT_EQ(y.dtype, Dtype::BF16);
  expectEqualValues(y, expectedDraws(Factory::Rand, "r", Dtype::BF16, {2, 3, 4}));
  Tensor f = runOne(R"({"op": "rand_like", "inputs": ["x"], "output": "r",
                        "dtype": "f32"})",
                    {x});
  EXPECT_EQ(f.dtype, Dtype::F32);
  expectEqualValues(f, expectedDraws(Factory::Rand, "r", Dtype::F32, {2, 3, 4}));
}

TEST_F(RandomOps, DropoutKeepsWhereTheUniformReachesP) {
  for (auto [dtype, text] : {std::pair{Dtype::F32, "f32"},
                             std::pair{Dtype::F16, "f16"}}) {
    SCOPED_TRACE(text);
    Tensor x = ramp(dtype, {6, 10}, 0.25, -3);
    Tensor y = runOne(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                          "p": 0.3})",
                      {x});
    // The mask's uniforms are the f32 rand of the op's stream.
    std::vector<double> u = expectedDraws(Factory::Rand, "d", Dtype::F32, {6, 10});
    double scale = roundTo(dtype, {1.0 / 0.7})[0];
    std::vector<double> expected(60);
    for (int i = 0; i < 60; ++i)
      expected[i] = roundTo(dtype, {u[i] >= 0.3 ? x.values[i] * scale : 0.0})[0];
    expectEqualValues(y, expected);
  }
}

TEST_F(RandomOps, DropoutEdgeCases) {
  Tensor x = ramp(Dtype::F32, {4, 5}, 0.5, 1);
  // Not training: the input itself, no random op in the IR.
  Tensor y = runOne(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                        "p": 0.9, "training": false})",
                    {x});
  expectEqualValues(y, x.values);
  EXPECT_EQ(printModule().find("step_seed"), std::string::npos);
  // p = 0 keeps everything unscaled; p = 1 drops everything.
  expectEqualValues(runOne(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                               "p": 0})",
                           {x}),
                    x.values);
  expectEqualValues(runOne(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                               "p": 1})",
                           {x}),
                    std::vector<double>(20, 0.0));
  // The default p is 0.5: kept elements are doubled.
  Tensor half = runOne(R"({"op": "dropout", "inputs": ["x"], "output": "d"})",
                       {x});
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(half.values[i] == 0 || half.values[i] == 2 * x.values[i]);
}

TEST_F(RandomOps, BernoulliComparesWithTheProbability) {
  Tensor probs = ramp(Dtype::F32, {5, 8}, 1.0 / 40);
  Tensor y = runOne(R"({"op": "bernoulli", "inputs": ["probs"],
                        "output": "b"})",
                    {probs});
  std::vector<double> u = expectedDraws(Factory::Rand, "b", Dtype::F32, {5, 8});
  std::vector<double> expected(40);
  for (int i = 0; i < 40; ++i)
    expected[i] = u[i] < probs.values[i] ? 1 : 0;
  expectEqualValues(y, expected);
  // A scalar p for every element; the input gives the shape and dtype.
  Tensor h = runOne(R"({"op": "bernoulli", "inputs": ["probs"],
                        "output": "b", "p": 0.25})",
                    {ramp(Dtype::F16, {5, 8}, 3)});
  EXPECT_EQ(h.dtype, Dtype::F16);
  for (int i = 0; i < 40; ++i)
    expected[i] = u[i] < 0.25 ? 1 : 0;
  expectEqualValues(h, expected);
}

TEST_F(RandomOps, Errors) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  EXPECT_EQ(buildError(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                           "p": 1.5})",
                       {x}),
            "$.model.ops[0].p (dropout): p is a probability, between 0 and "
            "1; got 1.5");
  EXPECT_EQ(buildError(R"({"op": "bernoulli", "inputs": ["x"], "output": "d",
                           "p": -0.25})",
                       {x}),
            "$.model.ops[0].p (bernoulli): p is a probability, between 0 and "
            "1; got -0.25");
  EXPECT_EQ(buildError(R"({"op": "dropout", "inputs": ["x"], "output": "d",
                           "training": 1})",
                       {x}),
            "$.model.ops[0].training: expected true or false, got a number");
  EXPECT_EQ(buildError(R"({"op": "dropout", "inputs": ["x"], "output": "d"})",
                       {ramp(Dtype::I64, {2}, 1)}),
            "$.model.ops[0].inputs[0] (dropout): input 'x' has dtype i64; "
            "dropout needs a floating-point tensor (f32, f16 or bf16)");
  EXPECT_EQ(buildError(R"({"op": "bernoulli", "inputs": ["x"], "output": "d"})",
                       {ramp(Dtype::I32, {2}, 1)}),
            "$.model.ops[0].inputs[0] (bernoulli): input 'x' has dtype i32; "
            "bernoulli needs a floating-point tensor (f32, f16 or bf16)");
  EXPECT_EQ(buildError(R"({"op": "rand", "inputs": [], "output": "r",
                           "shape": [2], "dtype": "i32"})",
                       {}),
            "$.model.ops[0].dtype (rand): rand draws floating-point values "
            "(f32, f16 or bf16), not i32");
  EXPECT_EQ(buildError(R"({"op": "rand_like", "inputs": ["x"], "output": "r"})",
                       {ramp(Dtype::I64, {2}, 1)}),
            "$.model.ops[0].inputs[0] (rand_like): input 'x' has dtype i64; "
            "rand_like draws floating-point values: give a dtype (f32, f16 "
            "or bf16)");
  EXPECT_EQ(buildError(R"({"op": "randn", "inputs": [], "output": "r",
                           "shape": [2, -1]})",
                       {}),
            "$.model.ops[0].shape (randn): shape [2, -1] has a negative size "
            "-1");
  EXPECT_EQ(buildError(R"({"op": "randn", "inputs": [], "output": "r"})", {}),
            "$.model.ops[0] (randn): missing attribute 'shape'");
}

} // namespace
