//===- DTypeTest.cpp - Element types and 16-bit float conversions ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/DType.h"

#include "dtensor/rt_abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace dtensor::rt;

namespace {

constexpr DType kAll[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                          DType::I32, DType::I64, DType::I8,  DType::Bool};

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

TEST(DTypeTest, ValuesMatchTheAbi) {
  EXPECT_EQ(int(DType::F32), DTENSOR_RT_F32);
  EXPECT_EQ(int(DType::F64), DTENSOR_RT_F64);
  EXPECT_EQ(int(DType::F16), DTENSOR_RT_F16);
  EXPECT_EQ(int(DType::BF16), DTENSOR_RT_BF16);
  EXPECT_EQ(int(DType::I32), DTENSOR_RT_I32);
  EXPECT_EQ(int(DType::I64), DTENSOR_RT_I64);
  EXPECT_EQ(int(DType::I8), DTENSOR_RT_I8);
  EXPECT_EQ(int(DType::Bool), DTENSOR_RT_BOOL);
  EXPECT_EQ(dtypeFromInt(3), DType::BF16);
  EXPECT_FALSE(dtypeFromInt(8));
  EXPECT_FALSE(dtypeFromInt(-1));
}

TEST(DTypeTest, SizesAndNames) {
  const size_t sizes[] = {4, 8, 2, 2, 4, 8, 1, 1};
  const char *names[] = {"f32", "f64", "f16", "bf16",
                         "i32", "i64", "i8",  "bool"};
  const char *stNames[] = {"F32", "F64", "F16", "BF16",
                           "I32", "I64", "I8",  "BOOL"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(dtypeSize(kAll[i]), sizes[i]);
    EXPECT_STREQ(dtypeName(kAll[i]), names[i]);
    EXPECT_STREQ(safetensorsDTypeName(kAll[i]), stNames[i]);
    EXPECT_EQ(parseDType(names[i]), kAll[i]);
    EXPECT_EQ(parseSafetensorsDType(stNames[i]), kAll[i]);
  }
  EXPECT_FALSE(parseDType("F32"));
  EXPECT_FALSE(parseDType("float32"));
  EXPECT_FALSE(parseSafetensorsDType("f32"));
  EXPECT_FALSE(parseSafetensorsDType("U8"));
  EXPECT_TRUE(isFloatingPoint(DType::BF16));
  EXPECT_FALSE(isFloatingPoint(DType::Bool));
}

TEST(DTypeTest, HalfExactValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x8001), -0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03ff), 1023 * 0x1p-24f);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
}

TEST(DTypeTest, HalfRoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to the even 1.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: ties to even.
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  // Overflow: 65519 rounds to 65504, 65520 to infinity.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  // Subnormal ties: 1.5 * 2^-24 -> 2 * 2^-24; 0.5 * 2^-24 -> 0.
  EXPECT_EQ(floatToHalf(1.5f * 0x1p-24f), 0x0002);
  EXPECT_EQ(floatToHalf(0.5f * 0x1p-24f), 0x0000);
  EXPECT_EQ(floatToHalf(2.5f * 0x1p-24f), 0x0002);
  // Largest subnormal rounding up into the normals.
  EXPECT_EQ(floatToHalf(1023.75f * 0x1p-24f), 0x0400);
}

TEST(DTypeTest, HalfRoundTripsEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t half = static_cast<uint16_t>(bits);
    float value = halfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value)))) << bits;
      continue;
    }
    EXPECT_EQ(floatToHalf(value), half) << bits;
  }
}

TEST(DTypeTest, HalfNaNStaysNaN) {
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(fromBits(0x7f800001)))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(fromBits(0xff800001)))));
}

TEST(DTypeTest, Bf16) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  // The largest float rounds to infinity.
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  // A NaN whose payload sits in the dropped bits must not become infinity.
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(fromBits(0x7f800001)))));
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = bf16ToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) {
      EXPECT_EQ(floatToBf16(value), bits);
    }
  }
}

} // namespace
