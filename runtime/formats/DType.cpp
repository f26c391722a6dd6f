//===- DType.cpp - Element types of runtime tensors -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/DType.h"

#include <cassert>
#include <cstring>

namespace dtensor::rt {

namespace {
/// Every DType with its two names, in enum order.
struct DTypeNames {
  DType dtype;
  const char *name;
  const char *safetensorsName;
  size_t size;
};
constexpr DTypeNames kDTypes[] = {
    {DType::F32, "f32", "F32", 4}, {DType::F64, "f64", "F64", 8},
    {DType::F16, "f16", "F16", 2}, {DType::BF16, "bf16", "BF16", 2},
    {DType::I32, "i32", "I32", 4}, {DType::I64, "i64", "I64", 8},
    {DType::I8, "i8", "I8", 1},    {DType::Bool, "bool", "BOOL", 1},
};

const DTypeNames &entry(DType dtype) {
  assert(dtypeFromInt(static_cast<int32_t>(dtype)) && "invalid DType");
  return kDTypes[static_cast<int32_t>(dtype)];
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
} // namespace

size_t dtypeSize(DType dtype) { return entry(dtype).size; }

const char *dtypeName(DType dtype) { return entry(dtype).name; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeNames &names : kDTypes)
    if (name == names.name)
      return names.dtype;
  return std::nullopt;
}

std::optional<DType> dtypeFromInt(int64_t value) {
  if (value < 0 || value > static_cast<int64_t>(DType::Bool))
    return std::nullopt;
  return static_cast<DType>(value);
}

const char *safetensorsDTypeName(DType dtype) {
  return entry(dtype).safetensorsName;
}

std::optional<DType> parseSafetensorsDType(std::string_view name) {
  for (const DTypeNames &names : kDTypes)
    if (name == names.safetensorsName)
      return names.dtype;
  return std::nullopt;
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // Infinity or NaN; NaN keeps its payload.
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) // Normal: rebias 15 -> 127.
    return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

uint16_t floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u) // NaN: keep the top payload bits, force quiet.
    return sign | 0x7e00u | static_cast<uint16_t>((absBits >> 13) & 0x3ffu);
  if (absBits >= 0x477ff000u) // >= 65520 rounds to infinity.
    return sign | 0x7c00u;
  if (absBits < 0x38800000u) {
    // Below the smallest normal half (2^-14): the result is subnormal. Adding
    // 0.5 makes the float hardware round the mantissa bits we keep (units of
    // 2^-24) to nearest even.
    float magnitude = bitsToFloat(absBits) + 0.5f;
    return sign | static_cast<uint16_t>(floatBits(magnitude) - 0x3f000000u);
  }
  // Normal: rebias, then round the 13 dropped bits to nearest even; a carry
  // into the exponent is the correct result.
  uint32_t mantissaOdd = (absBits >> 13) & 1u;
  absBits += 0xc8000000u + 0xfffu + mantissaOdd; // -112 << 23, rounding bias
  return sign | static_cast<uint16_t>(absBits >> 13);
}

float bf16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBf16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign, force quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace dtensor::rt
