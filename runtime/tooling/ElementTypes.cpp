//===- ElementTypes.cpp - The C API's element types, for the tools --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/ElementTypes.h"

#include <cstring>

namespace dtensor::tooling {

namespace {

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// The element at `p` of type T.
template <typename T> T load(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

} // namespace

const char *dtypeName(dtensor_dtype dtype) {
  switch (dtype) {
  case DTENSOR_F32:
    return "f32";
  case DTENSOR_F64:
    return "f64";
  case DTENSOR_F16:
    return "f16";
  case DTENSOR_BF16:
    return "bf16";
  case DTENSOR_I32:
    return "i32";
  case DTENSOR_I64:
    return "i64";
  case DTENSOR_I8:
    return "i8";
  case DTENSOR_BOOL:
    return "bool";
  }
  return "?";
}

size_t dtypeSize(dtensor_dtype dtype) {
  switch (dtype) {
  case DTENSOR_F64:
  case DTENSOR_I64:
    return 8;
  case DTENSOR_F32:
  case DTENSOR_I32:
    return 4;
  case DTENSOR_F16:
  case DTENSOR_BF16:
    return 2;
  case DTENSOR_I8:
  case DTENSOR_BOOL:
    return 1;
  }
  return 0;
}

bool isFloatingPoint(dtensor_dtype dtype) {
  return dtype == DTENSOR_F32 || dtype == DTENSOR_F64 ||
         dtype == DTENSOR_F16 || dtype == DTENSOR_BF16;
}

std::vector<float> floatElements(const void *data, dtensor_dtype dtype,
                                 size_t count) {
  std::vector<float> values(count);
  if (dtype == DTENSOR_F32) {
    std::memcpy(values.data(), data, count * sizeof(float));
    return values;
  }
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(elementAsDouble(data, dtype, i));
  return values;
}

double elementAsDouble(const void *data, dtensor_dtype dtype, size_t index) {
  const uint8_t *p =
      static_cast<const uint8_t *>(data) + index * dtypeSize(dtype);
  switch (dtype) {
  case DTENSOR_F32:
    return load<float>(p);
  case DTENSOR_F64:
    return load<double>(p);
  case DTENSOR_F16:
    return halfToFloat(load<uint16_t>(p));
  case DTENSOR_BF16:
    return bf16ToFloat(load<uint16_t>(p));
  case DTENSOR_I32:
    return load<int32_t>(p);
  case DTENSOR_I64:
    return static_cast<double>(load<int64_t>(p));
  case DTENSOR_I8:
    return load<int8_t>(p);
  case DTENSOR_BOOL:
    return *p != 0;
  }
  return 0;
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

float bf16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

} // namespace dtensor::tooling
