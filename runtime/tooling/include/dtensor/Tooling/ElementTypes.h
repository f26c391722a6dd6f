//===- ElementTypes.h - The C API's element types for tools -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the tools need to know about a dtensor_dtype (dtensor/runtime.h):
// its manifest name ("f32"), its size, and an element's value as a double.
// Built on the public header alone, so that a tool needs neither the
// runtime's private formats library nor libdtensor_runtime.so for it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_ELEMENTTYPES_H
#define DTENSOR_TOOLING_ELEMENTTYPES_H

#include "dtensor/runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dtensor::tooling {

/// The manifest's name of `dtype`: "f32", "f64", "f16", "bf16", "i32",
/// "i64", "i8", "bool"; "?" for a value outside the enum.
const char *dtypeName(dtensor_dtype dtype);

/// Bytes per element (bool takes one byte); 0 for a value outside the enum.
size_t dtypeSize(dtensor_dtype dtype);

/// True for f32, f64, f16 and bf16.
bool isFloatingPoint(dtensor_dtype dtype);

/// Element `index` of the row-major array `data` of `dtype`, as a double
/// (exact for every dtype but i64 beyond 2^53; bool is 0 or 1).
double elementAsDouble(const void *data, dtensor_dtype dtype, size_t index);

/// The `count` elements of the row-major float array `data` of `dtype`
/// (f32, f64, f16 or bf16) as floats (f64 rounded).
std::vector<float> floatElements(const void *data, dtensor_dtype dtype,
                                 size_t count);

/// IEEE binary16 bits to float (exact; NaN keeps its payload).
float halfToFloat(uint16_t bits);

/// bfloat16 bits to float (exact).
float bf16ToFloat(uint16_t bits);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_ELEMENTTYPES_H
