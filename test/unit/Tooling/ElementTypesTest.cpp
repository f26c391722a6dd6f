//===- ElementTypesTest.cpp - The C API's element types, for the tools ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tools' table of dtensor_dtype must say what the runtime says: the
// names and sizes are checked against the runtime's formats library
// (dtensor/Formats/DType.h, linked into this test only), and the 16-bit
// decoders against its conversions for every bit pattern.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ElementTypes.h"

#include "dtensor/Formats/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace dtensor::tooling;

namespace {

constexpr dtensor_dtype kAll[] = {DTENSOR_F32, DTENSOR_F64, DTENSOR_F16,
                                  DTENSOR_BF16, DTENSOR_I32, DTENSOR_I64,
                                  DTENSOR_I8,  DTENSOR_BOOL};

TEST(ElementTypesTest, NamesAndSizesAreTheRuntimes) {
  for (dtensor_dtype dtype : kAll) {
    auto runtime = static_cast<dtensor::rt::DType>(dtype);
    SCOPED_TRACE(dtensor::rt::dtypeName(runtime));
    EXPECT_STREQ(dtypeName(dtype), dtensor::rt::dtypeName(runtime));
    EXPECT_EQ(dtypeSize(dtype), dtensor::rt::dtypeSize(runtime));
    EXPECT_EQ(isFloatingPoint(dtype), dtensor::rt::isFloatingPoint(runtime));
  }
  EXPECT_STREQ(dtypeName(DTENSOR_BF16), "bf16");
  EXPECT_EQ(dtypeSize(DTENSOR_BOOL), 1u);
  // Values outside the enum.
  EXPECT_STREQ(dtypeName(static_cast<dtensor_dtype>(8)), "?");
  EXPECT_EQ(dtypeSize(static_cast<dtensor_dtype>(-1)), 0u);
  EXPECT_FALSE(isFloatingPoint(DTENSOR_I64));
}

TEST(ElementTypesTest, SixteenBitDecodersMatchTheRuntimes) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t half = static_cast<uint16_t>(bits);
    float ours = halfToFloat(half), theirs = dtensor::rt::halfToFloat(half);
    // Bit for bit: NaN payloads and the sign of zero included.
    ASSERT_EQ(std::memcmp(&ours, &theirs, 4), 0) << "f16 bits " << bits;
    ours = bf16ToFloat(half);
    theirs = dtensor::rt::bf16ToFloat(half);
    ASSERT_EQ(std::memcmp(&ours, &theirs, 4), 0) << "bf16 bits " << bits;
  }
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
}

TEST(ElementTypesTest, ElementAsDouble) {
  float f32[] = {1.5f, -2.25f};
  double f64[] = {0.1, -1e300};
  uint16_t f16[] = {0x3c00, 0xc200}; // 1, -3
  uint16_t bf16[] = {0x4040, 0xbf80}; // 3, -1
  int32_t i32[] = {-7, 2147483647};
  int64_t i64[] = {-(int64_t(1) << 40), 5};
  int8_t i8[] = {-128, 127};
  uint8_t boolean[] = {0, 3}; // any non-zero byte is true
  EXPECT_EQ(elementAsDouble(f32, DTENSOR_F32, 1), -2.25);
  EXPECT_EQ(elementAsDouble(f64, DTENSOR_F64, 0), 0.1);
  EXPECT_EQ(elementAsDouble(f64, DTENSOR_F64, 1), -1e300);
  EXPECT_EQ(elementAsDouble(f16, DTENSOR_F16, 1), -3.0);
  EXPECT_EQ(elementAsDouble(bf16, DTENSOR_BF16, 0), 3.0);
  EXPECT_EQ(elementAsDouble(bf16, DTENSOR_BF16, 1), -1.0);
  EXPECT_EQ(elementAsDouble(i32, DTENSOR_I32, 0), -7.0);
  EXPECT_EQ(elementAsDouble(i32, DTENSOR_I32, 1), 2147483647.0);
  EXPECT_EQ(elementAsDouble(i64, DTENSOR_I64, 0), -1099511627776.0);
  EXPECT_EQ(elementAsDouble(i8, DTENSOR_I8, 0), -128.0);
  EXPECT_EQ(elementAsDouble(i8, DTENSOR_I8, 1), 127.0);
  EXPECT_EQ(elementAsDouble(boolean, DTENSOR_BOOL, 0), 0.0);
  EXPECT_EQ(elementAsDouble(boolean, DTENSOR_BOOL, 1), 1.0);
}

// The logits of every float dtype, as the server and the generator read
// them.
TEST(ElementTypesTest, FloatElements) {
  float f32[] = {1.5f, -2.25f};
  double f64[] = {0.1, -3.5};
  uint16_t f16[] = {0x3c00, 0xc200};  // 1, -3
  uint16_t bf16[] = {0x4040, 0xbf80}; // 3, -1
  EXPECT_EQ(floatElements(f32, DTENSOR_F32, 2),
            (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(floatElements(f64, DTENSOR_F64, 2),
            (std::vector<float>{0.1f, -3.5f}));
  EXPECT_EQ(floatElements(f16, DTENSOR_F16, 2),
            (std::vector<float>{1.0f, -3.0f}));
  EXPECT_EQ(floatElements(bf16, DTENSOR_BF16, 2),
            (std::vector<float>{3.0f, -1.0f}));
}

} // namespace
