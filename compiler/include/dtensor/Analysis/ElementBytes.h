//===- ElementBytes.h - bytes per tensor element ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One definition of an element's size for every pass that counts bytes: the
// cost model, the bucketing threshold and the communication report.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ANALYSIS_ELEMENTBYTES_H
#define DTENSOR_ANALYSIS_ELEMENTBYTES_H

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace dtensor {

/// Bytes one element of type `element` occupies in a buffer: its bit width
/// rounded up to whole bytes (an i1 takes a byte), twice its part for a
/// complex number; std::nullopt when the width is target-defined (index) or
/// the type is not a number.
inline std::optional<int64_t> getStoredElementBytes(mlir::Type element) {
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(element)) {
    std::optional<int64_t> part =
        getStoredElementBytes(complex.getElementType());
    if (!part)
      return std::nullopt;
    return 2 * *part;
  }
  if (element.isIntOrFloat())
    return (static_cast<int64_t>(element.getIntOrFloatBitWidth()) + 7) / 8;
  return std::nullopt;
}

/// Bytes per element of the shaped `type` for cost estimates: as stored,
/// with a machine word (8 bytes) where the size is target-defined.
inline int64_t getElementBytes(mlir::Type type) {
  return getStoredElementBytes(
             mlir::cast<mlir::ShapedType>(type).getElementType())
      .value_or(8);
}

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_ELEMENTBYTES_H
