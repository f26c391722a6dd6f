//===- DType.h - Element types of runtime tensors ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The element types the runtime moves around, their sizes and their names in
// the three notations it meets: the manifest ("f32"), safetensors ("F32") and
// the numeric values of dtensor_rt_dtype in dtensor/rt_abi.h. Also the
// conversions between f32 and the two 16-bit float formats.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_DTYPE_H
#define DTENSOR_FORMATS_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dtensor::rt {

/// Element type; the values are those of dtensor_rt_dtype.
enum class DType : int32_t {
  F32 = 0,
  F64 = 1,
  F16 = 2,
  BF16 = 3,
  I32 = 4,
  I64 = 5,
  I8 = 6,
  Bool = 7
};

/// Bytes per element (Bool takes one byte).
size_t dtypeSize(DType dtype);

/// Manifest name: "f32", "f64", "f16", "bf16", "i32", "i64", "i8", "bool".
const char *dtypeName(DType dtype);

/// Inverse of dtypeName; std::nullopt for any other spelling.
std::optional<DType> parseDType(std::string_view name);

/// The DType with numeric value `value` (a dtensor_rt_dtype); std::nullopt
/// when out of range.
std::optional<DType> dtypeFromInt(int64_t value);

/// Safetensors name: "F32", "F64", "F16", "BF16", "I32", "I64", "I8", "BOOL".
const char *safetensorsDTypeName(DType dtype);

/// Inverse of safetensorsDTypeName; std::nullopt for any other spelling.
std::optional<DType> parseSafetensorsDType(std::string_view name);

/// True for F32, F64, F16 and BF16.
bool isFloatingPoint(DType dtype);

/// IEEE binary16 bits to float (exact).
float halfToFloat(uint16_t bits);
/// Float to IEEE binary16 bits, rounding to nearest even; overflow gives
/// infinity and NaN stays NaN.
uint16_t floatToHalf(float value);

/// bfloat16 bits to float (exact).
float bf16ToFloat(uint16_t bits);
/// Float to bfloat16 bits, rounding to nearest even; NaN stays NaN.
uint16_t floatToBf16(float value);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_DTYPE_H
