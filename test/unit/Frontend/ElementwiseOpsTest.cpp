//===- ElementwiseOpsTest.cpp - arithmetic and activations ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>
#include <functional>

using namespace dtensor::frontend::test;

namespace {

using ElementwiseOpsTest = OpTest;

/// `fn` of each value.
std::vector<double> mapValues(const Tensor &x,
                              const std::function<double(double)> &fn) {
  std::vector<double> values;
  for (double value : x.values)
    values.push_back(fn(value));
  return values;
}

TEST_F(ElementwiseOpsTest, BinarySameShape) {
  Tensor a = noise(Dtype::F32, {2, 3}), b = noise(Dtype::F32, {2, 3}, 1, 2);
  for (auto [name, fn] : std::initializer_list<
           std::pair<const char *, std::function<double(double, double)>>>{
           {"add", std::plus<double>()},
           {"sub", std::minus<double>()},
           {"mul", std::multiplies<double>()},
           {"div", std::divides<double>()}}) {
    SCOPED_TRACE(name);
    std::string op = std::string(R"({"op": ")") + name +
                     R"(", "inputs": ["a", "b"], "output": "y"})";
    Tensor y = runOne(op, {a, b});
    std::vector<double> expected;
    for (size_t i = 0; i < a.values.size(); ++i)
      expected.push_back(fn(a.values[i], b.values[i]));
    expectNear(y, {2, 3}, expected, 1e-6);
  }
}

TEST_F(ElementwiseOpsTest, Broadcast) {
  // [2, 1, 3] + [4, 1] -> [2, 4, 3].
  Tensor a = ramp(Dtype::F32, {2, 1, 3}, 1), b = ramp(Dtype::F32, {4, 1}, 10);
  Tensor y =
      runOne(R"({"op": "add", "inputs": ["a", "b"], "output": "y"})", {a, b});
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k)
        expected.push_back(a.at({i, 0, k}) + b.at({j, 0}));
  expectNear(y, {2, 4, 3}, expected, 0);
}

TEST_F(ElementwiseOpsTest, BroadcastScalarTensor) {
  Tensor a = ramp(Dtype::I64, {3}, 1), b = tensor(Dtype::I64, {}, {5});
  Tensor y =
      runOne(R"({"op": "mul", "inputs": ["a", "b"], "output": "y"})", {a, b});
  expectNear(y, {3}, {0, 5, 10}, 0);
  EXPECT_EQ(y.dtype, Dtype::I64);
}

TEST_F(ElementwiseOpsTest, Scalar) {
  Tensor x = ramp(Dtype::F32, {4}, 0.5, -1);
  expectNear(runOne(R"({"op": "sub", "inputs": ["x"], "output": "y",
                        "scalar": 2})",
                    {x}),
             {4}, mapValues(x, [](double v) { return v - 2; }), 0);
  expectNear(runOne(R"({"op": "div", "inputs": ["x"], "output": "y",
                        "scalar": 0.25})",
                    {x}),
             {4}, mapValues(x, [](double v) { return v / 0.25; }), 0);
  Tensor ids = ramp(Dtype::I32, {3}, 2);
  Tensor y = runOne(R"({"op": "add", "inputs": ["x"], "output": "y",
                        "scalar": -3})",
                    {ids});
  expectNear(y, {3}, {-3, -1, 1}, 0);
  EXPECT_EQ(y.dtype, Dtype::I32);
}

TEST_F(ElementwiseOpsTest, HalfPrecisionRoundsOnce) {
  // Computed in f32 and rounded to f16 once: 1 + 2^-11 is a tie between 1
  // and 1 + 2^-10 and rounds to even (1); 3 + 0.5 is exact.
  Tensor a = tensor(Dtype::F16, {2}, {1, 3}),
         b = tensor(Dtype::F16, {2}, {0.00048828125, 0.5});
  Tensor y =
      runOne(R"({"op": "add", "inputs": ["a", "b"], "output": "y"})", {a, b});
  expectNear(y, {2}, {1, 3.5}, 0);
}

TEST_F(ElementwiseOpsTest, BinaryErrors) {
  Tensor a = noise(Dtype::F32, {8, 3});
  EXPECT_EQ(buildError(R"({"op": "add", "inputs": ["a", "b"], "output": "y"})",
                       {a, noise(Dtype::F32, {4})}),
            "$.model.ops[0] (add): inputs 'a' [8, 3] and 'b' [4] cannot be "
            "broadcast together: dim -1 is 3 vs 4");
  EXPECT_EQ(
      buildError(R"({"op": "add", "inputs": ["a", "b"], "output": "y"})",
                 {a, noise(Dtype::BF16, {8, 3})}),
      "$.model.ops[0].inputs[1] (add): input 'b' has dtype bf16 but 'a' has "
      "f32; dtypes must be equal (there is no type promotion)");
  EXPECT_EQ(
      buildError(R"({"op": "add", "inputs": ["a", "b"], "output": "y",
                     "scalar": 1})",
                 {a, a}),
      "$.model.ops[0].scalar (add): takes either a second input or 'scalar', "
      "not both");
  EXPECT_EQ(buildError(R"({"op": "mul", "inputs": ["a"], "output": "y"})", {a}),
            "$.model.ops[0] (mul): takes a second input or 'scalar'");
  EXPECT_EQ(buildError(R"({"op": "mul", "inputs": ["a"], "output": "y",
                           "scalar": 1.5})",
                       {ramp(Dtype::I32, {2}, 1)}),
            "$.model.ops[0].scalar (mul): input 'a' has dtype i32, so 'scalar' "
            "must be an integer, not 1.5 (a float would promote the result to "
            "float; there is no type promotion)");
  EXPECT_EQ(buildError(R"({"op": "add", "inputs": ["a"], "output": "y",
                           "scalar": 3000000000})",
                       {ramp(Dtype::I32, {2}, 1)}),
            "$.model.ops[0].scalar (add): scalar 3000000000 does not fit the "
            "dtype i32 of input 'a'");
  EXPECT_EQ(
      buildError(R"({"op": "div", "inputs": ["a", "b"], "output": "y"})",
                 {ramp(Dtype::I32, {2}, 1), ramp(Dtype::I32, {2}, 1)}),
      "$.model.ops[0].inputs[0] (div): input 'a' has dtype i32; div needs a "
      "floating-point tensor (PyTorch's true division of integers gives "
      "floats, and there is no type promotion)");
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST_F(ElementwiseOpsTest, Unary) {
  Tensor x = ramp(Dtype::F32, {2, 5}, 0.45, -2.2);
  struct Case {
    const char *op;
    std::function<double(double)> fn;
  };
  for (const Case &c : std::initializer_list<Case>{
           {R"({"op": "neg", "inputs": ["x"], "output": "y"})",
            [](double v) { return -v; }},
           {R"({"op": "exp", "inputs": ["x"], "output": "y"})",
            [](double v) { return std::exp(v); }},
           {R"({"op": "tanh", "inputs": ["x"], "output": "y"})",
            [](double v) { return std::tanh(v); }},
           {R"({"op": "relu", "inputs": ["x"], "output": "y"})",
            [](double v) { return v > 0 ? v : 0; }},
           {R"({"op": "silu", "inputs": ["x"], "output": "y"})",
            [](double v) { return v / (1 + std::exp(-v)); }},
           {R"({"op": "gelu", "inputs": ["x"], "output": "y"})", gelu},
           {R"({"op": "gelu", "inputs": ["x"], "output": "y",
                "approximate": "none"})",
            gelu},
           {R"({"op": "gelu", "inputs": ["x"], "output": "y",
                "approximate": "tanh"})",
            geluTanh}}) {
    SCOPED_TRACE(c.op);
    expectNear(runOne(c.op, {x}), {2, 5}, mapValues(x, c.fn), 2e-6);
  }
}

TEST_F(ElementwiseOpsTest, UnaryHalfPrecision) {
  for (Dtype dtype : {Dtype::F16, Dtype::BF16}) {
    Tensor x = ramp(dtype, {6}, 0.75, -2);
    Tensor y = runOne(R"({"op": "gelu", "inputs": ["x"], "output": "y",
                          "approximate": "tanh"})",
                      {x});
    EXPECT_EQ(y.dtype, dtype);
    expectNear(y, {6}, roundTo(dtype, mapValues(x, geluTanh)),
               dtype == Dtype::F16 ? 1e-3 : 8e-3);
    Tensor e = runOne(R"({"op": "silu", "inputs": ["x"], "output": "y"})", {x});
    expectNear(
        e, {6},
        roundTo(dtype,
                mapValues(x, [](double v) { return v / (1 + std::exp(-v)); })),
        dtype == Dtype::F16 ? 1e-3 : 8e-3);
  }
}

TEST_F(ElementwiseOpsTest, IntegerNegAndRelu) {
  Tensor x = ramp(Dtype::I32, {5}, 1, -2);
  expectNear(runOne(R"({"op": "neg", "inputs": ["x"], "output": "y"})", {x}),
             {5}, {2, 1, 0, -1, -2}, 0);
  expectNear(runOne(R"({"op": "relu", "inputs": ["x"], "output": "y"})", {x}),
             {5}, {0, 0, 0, 1, 2}, 0);
}

TEST_F(ElementwiseOpsTest, ReluPropagatesNan) {
  Tensor x = tensor(Dtype::F32, {3}, {NAN, -1, 2});
  expectNear(runOne(R"({"op": "relu", "inputs": ["x"], "output": "y"})", {x}),
             {3}, {NAN, 0, 2}, 0);
}

TEST_F(ElementwiseOpsTest, MathOps) {
  Tensor x = ramp(Dtype::F32, {2, 5}, 0.45, 0.1);
  Tensor signed_ = ramp(Dtype::F32, {2, 5}, 0.9, -4.4);
  struct Case {
    const char *op;
    const Tensor &input;
    std::function<double(double)> fn;
  };
  for (const Case &c : std::initializer_list<Case>{
           {R"({"op": "sqrt", "inputs": ["x"], "output": "y"})", x,
            [](double v) { return std::sqrt(v); }},
           {R"({"op": "rsqrt", "inputs": ["x"], "output": "y"})", x,
            [](double v) { return 1 / std::sqrt(v); }},
           {R"({"op": "sigmoid", "inputs": ["x"], "output": "y"})", signed_,
            [](double v) { return 1 / (1 + std::exp(-v)); }},
           {R"({"op": "cos", "inputs": ["x"], "output": "y"})", signed_,
            [](double v) { return std::cos(v); }},
           {R"({"op": "sin", "inputs": ["x"], "output": "y"})", signed_,
            [](double v) { return std::sin(v); }}}) {
    SCOPED_TRACE(c.op);
    expectNear(runOne(c.op, {c.input}), {2, 5}, mapValues(c.input, c.fn), 2e-6);
  }
  // Outside the f32 range of exp(-x): 0 and 1, never NaN.
  Tensor extreme = tensor(Dtype::F32, {4}, {-200, -90, 90, 200});
  expectNear(
      runOne(R"({"op": "sigmoid", "inputs": ["x"], "output": "y"})", {extreme}),
      {4}, {0, 1 / (1 + std::exp(90.0)), 1, 1}, 1e-6);
  // Negative values: NaN, as torch.sqrt.
  expectNear(runOne(R"({"op": "sqrt", "inputs": ["x"], "output": "y"})",
                    {tensor(Dtype::F32, {2}, {-1, 4})}),
             {2}, {NAN, 2}, 0);
}

TEST_F(ElementwiseOpsTest, MathOpsHalfPrecision) {
  Tensor x = ramp(Dtype::BF16, {6}, 0.75, -2);
  Tensor y = runOne(R"({"op": "sin", "inputs": ["x"], "output": "y"})", {x});
  EXPECT_EQ(y.dtype, Dtype::BF16);
  expectNear(
      y, {6},
      roundTo(Dtype::BF16, mapValues(x, [](double v) { return std::sin(v); })),
      8e-3);
  Tensor h = ramp(Dtype::F16, {6}, 0.5, 0.25);
  expectNear(
      runOne(R"({"op": "pow", "inputs": ["x"], "output": "y", "exponent": 2})",
             {h}),
      {6}, roundTo(Dtype::F16, mapValues(h, [](double v) { return v * v; })),
      1e-3);
}

TEST_F(ElementwiseOpsTest, Pow) {
  Tensor x = tensor(Dtype::F32, {6}, {-2.5, -1, -0.5, 0.25, 1.5, 3});
  for (double exponent : {2.0, 3.0, -2.0, -1.0, 1.0, 1.5, -0.75, 4.0, 0.0}) {
    SCOPED_TRACE(exponent);
    std::string op =
        R"({"op": "pow", "inputs": ["x"], "output": "y", "exponent": )" +
        std::to_string(exponent) + "}";
    // std::pow: NaN for a negative base and a non-integer exponent, as
    // torch.pow.
    expectNear(runOne(op, {x}), {6},
               mapValues(x, [&](double v) { return std::pow(v, exponent); }),
               2e-6);
  }
  // sqrt and rsqrt for 0.5 and -0.5 (PyTorch's forms): NaN below 0.
  Tensor positive = tensor(Dtype::F32, {3}, {-4, 0.25, 9});
  expectNear(runOne(R"({"op": "pow", "inputs": ["x"], "output": "y",
                        "exponent": 0.5})",
                    {positive}),
             {3}, {NAN, 0.5, 3}, 1e-7);
  expectNear(runOne(R"({"op": "pow", "inputs": ["x"], "output": "y",
                        "exponent": -0.5})",
                    {positive}),
             {3}, {NAN, 2, 1.0 / 3}, 1e-6);
  // Exponent 0 gives 1 everywhere, NaN and infinity included.
  expectNear(runOne(R"({"op": "pow", "inputs": ["x"], "output": "y",
                        "exponent": 0})",
                    {tensor(Dtype::F32, {3}, {NAN, INFINITY, -2})}),
             {3}, {1, 1, 1}, 0);
}

TEST_F(ElementwiseOpsTest, PowErrors) {
  EXPECT_EQ(buildError(R"({"op": "pow", "inputs": ["x"], "output": "y"})",
                       {ramp(Dtype::F32, {2}, 1)}),
            "$.model.ops[0] (pow): missing attribute 'exponent'");
  EXPECT_EQ(buildError(R"({"op": "pow", "inputs": ["x"], "output": "y",
                           "exponent": 2})",
                       {ramp(Dtype::I32, {2}, 1)}),
            "$.model.ops[0].inputs[0] (pow): input 'x' has dtype i32; pow "
            "needs a floating-point tensor (f32, f16 or bf16)");
}

TEST_F(ElementwiseOpsTest, Cast) {
  // Floats to integers truncate toward zero, as Tensor.to.
  Tensor x = tensor(Dtype::F32, {6}, {-2.75, -1.5, -0.25, 0.5, 1.99, 7});
  Tensor y = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                        "dtype": "i64"})",
                    {x});
  EXPECT_EQ(y.dtype, Dtype::I64);
  expectNear(y, {6}, {-2, -1, 0, 0, 1, 7}, 0);
  Tensor i = runOne(R"({"op": "to", "inputs": ["x"], "output": "y",
                        "dtype": "i32"})",
                    {x});
  EXPECT_EQ(i.dtype, Dtype::I32);
  expectNear(i, {6}, {-2, -1, 0, 0, 1, 7}, 0);

  // Integers to floats: exact, or rounded to nearest (2^24 + 1 in f32).
  Tensor ids = tensor(Dtype::I64, {3}, {-5, 16777217, 123456789012});
  Tensor f = runOne(R"({"op": "to", "inputs": ["x"], "output": "y",
                        "dtype": "f32"})",
                    {ids});
  EXPECT_EQ(f.dtype, Dtype::F32);
  expectNear(f, {3}, roundTo(Dtype::F32, {-5, 16777217, 123456789012}), 0);

  // f32 to f16 and bf16 rounds to nearest; f16 to bf16 through f32.
  Tensor fine = tensor(Dtype::F32, {3}, {1.0009765625 + 1e-6, 65504, 0.1});
  Tensor h = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                        "dtype": "f16"})",
                    {fine});
  EXPECT_EQ(h.dtype, Dtype::F16);
  expectNear(h, {3}, roundTo(Dtype::F16, fine.values), 0);
  Tensor bf = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                         "dtype": "bf16"})",
                     {h});
  EXPECT_EQ(bf.dtype, Dtype::BF16);
  expectNear(bf, {3}, roundTo(Dtype::BF16, h.values), 0);
  Tensor wide = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                           "dtype": "f32"})",
                       {h});
  expectNear(wide, {3}, h.values, 0);

  // Integers narrow by wrapping and widen by sign extension.
  Tensor big = tensor(Dtype::I64, {3}, {4294967297.0, -1, 2147483648.0});
  Tensor narrow = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                             "dtype": "i32"})",
                         {big});
  EXPECT_EQ(narrow.dtype, Dtype::I32);
  expectNear(narrow, {3}, {1, -1, -2147483648.0}, 0);
  Tensor back = runOne(R"({"op": "cast", "inputs": ["x"], "output": "y",
                           "dtype": "i64"})",
                       {narrow});
  EXPECT_EQ(back.dtype, Dtype::I64);
  expectNear(back, {3}, {1, -1, -2147483648.0}, 0);
}

TEST_F(ElementwiseOpsTest, CastToItsOwnDtypeIsTheInput) {
  ASSERT_TRUE(build(R"({"op": "cast", "inputs": ["x"], "output": "y",
                        "dtype": "bf16"})",
                    {ramp(Dtype::BF16, {2}, 1)}));
  EXPECT_EQ(printModule().find("linalg.generic"), std::string::npos)
      << printModule();
  EXPECT_EQ(buildError(R"({"op": "cast", "inputs": ["x"], "output": "y",
                           "dtype": "f64"})",
                       {ramp(Dtype::F32, {2}, 1)}),
            "$.model.ops[0].dtype: expected one of \"f32\", \"f16\", "
            "\"bf16\", \"i32\", \"i64\"; got the string \"f64\"");
}

TEST_F(ElementwiseOpsTest, Where) {
  // cond [2, 1, 3] (i32), a [4, 1] and b [3] (f32) -> [2, 4, 3].
  Tensor cond = tensor(Dtype::I32, {2, 1, 3}, {1, 0, -2, 0, 5, 0});
  Tensor a = ramp(Dtype::F32, {4, 1}, 1, 1), b = ramp(Dtype::F32, {3}, -10);
  Tensor y = runOne(R"({"op": "where", "inputs": ["c", "a", "b"],
                        "output": "y"})",
                    {cond, a, b});
  EXPECT_EQ(y.dtype, Dtype::F32);
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k)
        expected.push_back(cond.at({i, 0, k}) != 0 ? a.at({j, 0}) : b.at({k}));
  expectNear(y, {2, 4, 3}, expected, 0);

  // Integer branches, a float condition (NaN is true, as bool(NaN)).
  Tensor fcond = tensor(Dtype::F32, {4}, {0, -0.0, NAN, 0.25});
  Tensor ia = ramp(Dtype::I64, {4}, 1, 1), ib = ramp(Dtype::I64, {4}, -1);
  Tensor iy = runOne(R"({"op": "where", "inputs": ["c", "a", "b"],
                         "output": "y"})",
                     {fcond, ia, ib});
  EXPECT_EQ(iy.dtype, Dtype::I64);
  expectNear(iy, {4}, {0, -1, 3, 4}, 0);
}

TEST_F(ElementwiseOpsTest, WhereKeepsNonFiniteValuesOfTheOtherBranchOut) {
  Tensor cond = tensor(Dtype::I64, {4}, {1, 0, 1, 0});
  Tensor a = tensor(Dtype::F32, {4}, {1, NAN, 2, INFINITY});
  Tensor b = tensor(Dtype::F32, {4}, {-INFINITY, 3, NAN, 4});
  expectNear(runOne(R"({"op": "where", "inputs": ["c", "a", "b"],
                        "output": "y"})",
                    {cond, a, b}),
             {4}, {1, 3, 2, 4}, 0);
}

TEST_F(ElementwiseOpsTest, MaskedFill) {
  // A [2, 1, 4] i64 mask over x [3, 2, 3, 4] (f32): -inf where nonzero.
  Tensor x = noise(Dtype::F32, {3, 2, 3, 4});
  Tensor mask = tensor(Dtype::I64, {2, 1, 4}, {0, 1, 0, 1, 1, 1, 0, 0});
  Tensor y = runOne(R"({"op": "masked_fill", "inputs": ["x", "m"],
                        "output": "y", "value": -1e30})",
                    {x, mask});
  std::vector<double> expected;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k)
          expected.push_back(mask.at({i, 0, k}) != 0 ? -1e30
                                                     : x.at({b, i, j, k}));
  expectNear(y, {3, 2, 3, 4}, roundTo(Dtype::F32, expected), 0);

  // Integer x, a float mask; bf16 x takes the value rounded to bf16.
  Tensor ix = ramp(Dtype::I32, {2, 3}, 1);
  Tensor fmask = tensor(Dtype::F32, {3}, {0.5, 0, -1});
  Tensor iy = runOne(R"({"op": "masked_fill", "inputs": ["x", "m"],
                         "output": "y", "value": -7})",
                     {ix, fmask});
  EXPECT_EQ(iy.dtype, Dtype::I32);
  expectNear(iy, {2, 3}, {-7, 1, -7, -7, 4, -7}, 0);
  Tensor hx = ramp(Dtype::BF16, {3}, 1);
  Tensor hy = runOne(R"({"op": "masked_fill", "inputs": ["x", "m"],
                         "output": "y", "value": 0.1})",
                     {hx, fmask});
  EXPECT_EQ(hy.dtype, Dtype::BF16);
  expectNear(hy, {3}, roundTo(Dtype::BF16, {0.1, 1, 0.1}), 0);
}

TEST_F(ElementwiseOpsTest, WhereAndMaskedFillErrors) {
  EXPECT_EQ(buildError(R"({"op": "where", "inputs": ["c", "a", "b"],
                           "output": "y"})",
                       {ramp(Dtype::I32, {2, 1}, 1), noise(Dtype::F32, {3}),
                        noise(Dtype::F32, {4, 1})}),
            "$.model.ops[0] (where): inputs 'c' [2, 1] and 'b' [4, 1] "
            "cannot be broadcast together: dim -2 is 2 vs 4");
  EXPECT_EQ(buildError(R"({"op": "where", "inputs": ["c", "a", "b"],
                           "output": "y"})",
                       {ramp(Dtype::I32, {3}, 1), noise(Dtype::F32, {3}),
                        noise(Dtype::F16, {3})}),
            "$.model.ops[0].inputs[2] (where): input 'b' has dtype f16 but 'a' "
            "has f32; dtypes must be equal (there is no type promotion)");
  EXPECT_EQ(buildError(R"({"op": "masked_fill", "inputs": ["x", "m"],
                           "output": "y", "value": 0})",
                       {noise(Dtype::F32, {3}), ramp(Dtype::I64, {2, 3}, 1)}),
            "$.model.ops[0].inputs[1] (masked_fill): mask 'm' [2, 3] does not "
            "broadcast to the shape [3] of input 'x'");
  EXPECT_EQ(buildError(R"({"op": "masked_fill", "inputs": ["x", "m"],
                           "output": "y", "value": 2.5})",
                       {ramp(Dtype::I64, {3}, 1), ramp(Dtype::I64, {3}, 1)}),
            "$.model.ops[0].value (masked_fill): input 'x' has dtype i64, so "
            "'value' must be an integer, not 2.5 (a float would promote the "
            "result to float; there is no type promotion)");
  EXPECT_EQ(buildError(R"({"op": "masked_fill", "inputs": ["x", "m"],
                           "output": "y", "value": 70000})",
                       {noise(Dtype::F16, {3}), ramp(Dtype::I64, {3}, 1)}),
            "$.model.ops[0].value (masked_fill): value 70000 does not fit the "
            "dtype f16 of input 'x' (it would overflow to infinity)");
  EXPECT_EQ(buildError(R"({"op": "masked_fill", "inputs": ["x", "m"],
                           "output": "y"})",
                       {noise(Dtype::F16, {3}), ramp(Dtype::I64, {3}, 1)}),
            "$.model.ops[0] (masked_fill): missing attribute 'value'");
}

TEST_F(ElementwiseOpsTest, UnaryErrors) {
  EXPECT_EQ(buildError(R"({"op": "tanh", "inputs": ["t"], "output": "y"})",
                       {ramp(Dtype::I64, {2}, 1)}),
            "$.model.ops[0].inputs[0] (tanh): input 't' has dtype i64; tanh "
            "needs a floating-point tensor (f32, f16 or bf16)");
}

} // namespace
