//===- Formatting.cpp - shapes, numbers and dtypes in messages ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Formatting.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace dtensor::frontend;

std::string ops::formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

std::string ops::formatNumber(double value) {
  // Integral values as integers (3000000000, not 3e+09).
  if (std::trunc(value) == value && std::abs(value) < 0x1p63)
    return std::to_string(static_cast<int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  // The shortest form that reads back the same.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", precision, value);
    if (std::strtod(shorter, nullptr) == value)
      return shorter;
  }
  return text;
}

std::string ops::formatDtype(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}
