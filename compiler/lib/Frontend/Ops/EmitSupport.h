//===- EmitSupport.h - What op emitters share -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks of inputs with precise messages, and builders of the IR shapes the
// emitters produce: linalg.generic ops whose bodies compute f16/bf16 in f32,
// reductions that accumulate in f32, and fills.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H
#define DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H

#include "Formatting.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace dtensor::frontend::ops {

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

//===----------------------------------------------------------------------===//
// Element types and scalars in bodies
//===----------------------------------------------------------------------===//

/// The type arithmetic on `element` is done in: f32 for f16 and bf16.
mlir::Type getComputeType(mlir::Type element);
/// `value` widened to its compute type.
mlir::Value extend(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);
/// `value` (of a compute type) rounded to `element`.
mlir::Value round(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                  mlir::Type element);
/// A float constant of `type`.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value);
/// `value` converted to `element` as PyTorch's `Tensor.to`: floats rounded
/// to nearest, floats to integers truncated toward zero, integers
/// sign-extended or wrapped; f16 and bf16 convert through f32.
mlir::Value convertElement(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::Type element);

//===----------------------------------------------------------------------===//
// Tensors and generics
//===----------------------------------------------------------------------===//

/// A tensor of `shape` filled with `value`.
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> shape, mlir::Type element,
                         mlir::TypedAttr value);
/// The neutral element of a reduction into `element`: 0 for sums, -inf (the
/// smallest integer) for max, +inf (the largest integer) for min.
enum class Combiner { Sum, Max, Min };
mlir::TypedAttr getNeutral(mlir::Type element, Combiner combiner);
/// The combining op of a reduction.
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, Combiner combiner,
                    mlir::Value lhs, mlir::Value rhs);

using BodyBuilder = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic over `numLoops` loops with `iterators`, reading `inputs`
/// through `inputMaps` and writing `inits` through `initMaps`. The body gets
/// the block arguments (inputs, then inits) and returns the yielded values.
llvm::SmallVector<mlir::Value>
createGeneric(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs,
              llvm::ArrayRef<mlir::AffineMap> inputMaps, mlir::ValueRange inits,
              llvm::ArrayRef<mlir::AffineMap> initMaps,
              llvm::ArrayRef<mlir::utils::IteratorType> iterators,
              BodyBuilder body);

/// A parallel generic over `shape` producing one tensor of `element`:
/// `inputs` are read through `inputMaps` (over `shape.size()` loops); the
/// body gets the input elements only.
mlir::Value createMap(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::ArrayRef<int64_t> shape, mlir::Type element,
                      mlir::ValueRange inputs,
                      llvm::ArrayRef<mlir::AffineMap> inputMaps,
                      BodyBuilder body);

/// `value` (of a compute type) rounded to `element`, elementwise; `value`
/// itself when nothing changes.
mlir::Value roundTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, mlir::Type element);

/// A reduction over the loops of an iteration space of `shape` whose
/// `reduced` positions are reduction loops: each result has the shape of
/// the parallel loops and is initialised with the neutral element of its
/// combiner. `inputs` are read through `inputMaps`; the body returns one
/// value per result (in its element type), combined into the accumulator.
struct Reduction {
  llvm::ArrayRef<int64_t> shape;
  llvm::ArrayRef<int64_t> reduced;
  llvm::SmallVector<mlir::Type> elements;
  Combiner combiner = Combiner::Sum;
};
llvm::SmallVector<mlir::Value>
createReduction(mlir::OpBuilder &b, mlir::Location loc,
                const Reduction &reduction, mlir::ValueRange inputs,
                llvm::ArrayRef<mlir::AffineMap> inputMaps, BodyBuilder body);

/// A contraction over loops of sizes `loops` (`reduced` positions summed):
/// sum of a * b, read through `aMap` and `bMap`, into a zero-filled tensor
/// of the compute type indexed by `resultMap`. The result is not rounded.
mlir::Value createContraction(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> loops,
                              llvm::ArrayRef<int64_t> reduced, mlir::Value lhs,
                              mlir::AffineMap lhsMap, mlir::Value rhs,
                              mlir::AffineMap rhsMap,
                              mlir::AffineMap resultMap);

/// The identity map over `rank` loops, and the same without the `dropped`
/// positions (a tensor broadcast along them).
mlir::AffineMap identityMap(mlir::MLIRContext *context, int64_t rank);
mlir::AffineMap dropDims(mlir::MLIRContext *context, int64_t rank,
                         llvm::ArrayRef<int64_t> dropped);
/// How an operand of `shape` is read in an iteration space of
/// `resultShape` under NumPy broadcasting: missing leading dims are dropped,
/// a size-1 dim stretched over a larger one is read at index 0.
mlir::AffineMap getBroadcastMap(mlir::MLIRContext *context,
                                llvm::ArrayRef<int64_t> shape,
                                llvm::ArrayRef<int64_t> resultShape);
/// True when `shape` broadcasts to `resultShape` (NumPy).
bool broadcastsTo(llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<int64_t> resultShape);
/// `shape` without the `dropped` positions.
llvm::SmallVector<int64_t> dropShape(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int64_t> dropped);

/// `value` reshaped to `shape` through unit dims: inserts size-1 dims at
/// `positions` of the result (keepdim of a reduction).
mlir::Value insertUnitDims(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value,
                           llvm::ArrayRef<int64_t> positions);

} // namespace dtensor::frontend::ops

#endif // DTENSOR_COMPILER_FRONTEND_OPS_EMITSUPPORT_H
