//===- EmitSupport.h - What op emitters share -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks of inputs with precise messages and readers of op attributes. The
// IR itself is built with the shared linalg builders
// (dtensor/Builders/LinalgBuilders.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H
#define DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H

#include "Formatting.h"
#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace dtensor::frontend::ops {

// The emitters build their IR with the shared linalg builders.
using namespace dtensor::builders;

using EmitResult = mlir::FailureOr<llvm::SmallVector<mlir::Value>>;

//===----------------------------------------------------------------------===//
// Describing and checking inputs
//===----------------------------------------------------------------------===//

/// f32, f16 and bf16 (and f64, which the IR may carry).
bool isFloatDtype(mlir::Type type);
/// i32 and i64 (any signless integer).
bool isIntDtype(mlir::Type type);

/// Input `i` must have a floating-point dtype.
mlir::LogicalResult checkFloatInput(OpEmitter &emitter, unsigned i);
/// Input `i` must have an integer dtype (ids, targets).
mlir::LogicalResult checkIntInput(OpEmitter &emitter, unsigned i);
/// Input `i` must have the dtype of input `j`.
mlir::LogicalResult checkSameDtype(OpEmitter &emitter, unsigned i, unsigned j);
/// Input `i` must have rank at least `minRank`; `what` names its dims
/// (`[..., m, k]`).
/// The `shape` attribute of a tensor an op makes (factories, random ops):
/// sizes of at least 0.
mlir::FailureOr<llvm::SmallVector<int64_t>> getShapeAttr(OpEmitter &emitter);
mlir::LogicalResult checkMinRank(OpEmitter &emitter, unsigned i,
                                 int64_t minRank, llvm::StringRef what);
/// Input `i` must have exactly `shape`; `why` says where it comes from.
mlir::LogicalResult checkShape(OpEmitter &emitter, unsigned i,
                               llvm::ArrayRef<int64_t> shape,
                               llvm::StringRef why);

/// The dims `dims` of attribute `key` for a tensor of rank `rank`, sorted:
/// negative ones count from the end; one out of range or given twice is an
/// error at the attribute.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeDims(OpEmitter &emitter, llvm::StringRef key,
              llvm::ArrayRef<int64_t> dims, int64_t rank);

/// The dtype attribute `key` (`f32`, `f16`, `bf16`, `i32` or `i64`) as an
/// element type; absent: `defaultValue`, or an error when there is none.
mlir::FailureOr<mlir::Type>
getDtypeAttr(OpEmitter &emitter, llvm::StringRef key,
             std::optional<llvm::StringRef> defaultValue = {});

/// The number attribute `key` as a constant for a tensor of dtype
/// `element`, which `owner` has ("input 'x'", "the result"). An integer
/// dtype needs an integer that fits (otherwise an error that gives
/// `integerReason`). A float is a constant of the compute type with
/// `inComputeType` (a scalar operand of arithmetic), else of `element`
/// itself, which must hold it without overflow (a value stored into the
/// tensor, as PyTorch's fills check).
mlir::FailureOr<mlir::TypedAttr>
getScalarAttr(OpEmitter &emitter, llvm::StringRef key, mlir::Type element,
              bool inComputeType, llvm::StringRef owner,
              llvm::StringRef integerReason,
              std::optional<double> defaultValue = {});

} // namespace dtensor::frontend::ops

#endif // DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H
