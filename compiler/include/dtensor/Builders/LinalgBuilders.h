//===- LinalgBuilders.h - Builders of linalg ops in f32 --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Builders of the IR shapes that the frontend's op emitters, the attention
// decomposition and later stages produce: linalg.generic ops whose bodies
// compute f16/bf16 in f32, reductions that accumulate in f32, contractions,
// fills and broadcast maps. Shared so that an op emitted at import and the
// same op decomposed later are one IR.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_BUILDERS_LINALGBUILDERS_H
#define DTENSOR_BUILDERS_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

namespace dtensor::builders {

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

/// `input` with its dims in `permutation` order (result dim i is input dim
/// permutation[i]): a linalg.transpose, or `input` itself for the identity.
mlir::Value createTranspose(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value input,
                            llvm::ArrayRef<int64_t> permutation);

//===----------------------------------------------------------------------===//
// Softmax and attention pieces
//===----------------------------------------------------------------------===//

/// The max of `x` over `dim`, in f32 (a reduction from -inf), to shift the
/// row by in a softmax or log-sum-exp: the generic is marked dtensor.shift,
/// so that differentiation passes no gradient through it. Callers use it
/// for nothing else.
mlir::Value createRowMax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                         int64_t dim);

/// Softmax of `x` over `dim` computed in f32, rounded to `element`: the row
/// max, exp(x - max) once per element, its row sum, then a product with
/// the sum's reciprocal. With `zeroMaskedRows`, a row whose elements are
/// all -inf gives zeros instead of NaN (attention's fully masked queries,
/// as PyTorch's scaled_dot_product_attention).
mlir::Value createSoftmax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                          int64_t dim, mlir::Type element,
                          bool zeroMaskedRows = false);

/// k or v `[..., Hkv, S, E]` with each head repeated `groups` times,
/// `[..., Hkv * groups, S, E]`, head h holding head h / groups (PyTorch's
/// repeat_interleave): a broadcast to `[..., Hkv, groups, S, E]`, then a
/// collapse of the heads with the groups (RepeatHeads.cpp says why).
mlir::Value repeatHeads(mlir::OpBuilder &b, mlir::Location loc, mlir::Value kv,
                        int64_t groups);

} // namespace dtensor::builders

#endif // DTENSOR_BUILDERS_LINALGBUILDERS_H
