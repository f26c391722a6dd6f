//===- ElementBytes.h - bytes per tensor element ----------------*- C++ -*-===//

#ifndef DTENSOR_TRANSFORMS_ELEMENTBYTES_H
#define DTENSOR_TRANSFORMS_ELEMENTBYTES_H

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

namespace dtensor {

/// Bytes one element of the shaped `type` occupies: its bit width rounded
/// up to bytes; index and other non-numeric types count as a machine word.
inline int64_t getElementBytes(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  if (element.isIntOrFloat())
    return std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
  return 8;
}

} // namespace dtensor

#endif // DTENSOR_TRANSFORMS_ELEMENTBYTES_H
