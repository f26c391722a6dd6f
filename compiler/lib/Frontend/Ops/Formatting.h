//===- Formatting.h - shapes, numbers and dtypes in messages ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How the model plan's diagnostics show values: used by OpEmitter (reading
// attributes) and by the op emitters (EmitSupport), below both.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_OPS_FORMATTING_H
#define DTENSOR_COMPILER_FRONTEND_OPS_FORMATTING_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace dtensor::frontend::ops {

/// `[8, 32]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// A number as JSON would show it: `0`, `1.5`, `1e-05`.
std::string formatNumber(double value);
/// The model-plan name of an element type (`f32`, `bf16`, `i64`, ...).
std::string formatDtype(mlir::Type type);

} // namespace dtensor::frontend::ops

#endif // DTENSOR_COMPILER_FRONTEND_OPS_FORMATTING_H
