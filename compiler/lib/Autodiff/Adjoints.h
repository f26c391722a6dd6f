//===- Adjoints.h - Gradients during the reverse sweep ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The reverse sweep of --dtensor-differentiate visits the ops of the
// function from the loss backwards; each rule adds the gradients of an op's
// operands from those of its results.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_AUTODIFF_ADJOINTS_H
#define DTENSOR_COMPILER_AUTODIFF_ADJOINTS_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace dtensor::autodiff {

/// The gradient of each tensor value the sweep has reached, and which values
/// are active: float tensors that depend on a differentiated argument and
/// that the loss depends on.
class Adjoints {
public:
  explicit Adjoints(mlir::OpBuilder &builder) : builder(builder) {}

  /// `value`'s gradient so far, or null when nothing has reached it.
  mlir::Value lookup(mlir::Value value) const {
    return gradients.lookup(value);
  }
  /// Adds `gradient` (of `value`'s type) to `value`'s gradient.
  void add(mlir::Location loc, mlir::Value value, mlir::Value gradient);
  bool isActive(mlir::Value value) const { return active.contains(value); }

  mlir::OpBuilder &builder;
  llvm::DenseSet<mlir::Value> active;

private:
  llvm::DenseMap<mlir::Value, mlir::Value> gradients;
};

/// A ranked tensor of floats: the values that can have a gradient.
bool isFloatTensor(mlir::Value value);

/// The float tensors of `block` that vary with `wrt` (ReverseSweep.cpp).
llvm::DenseSet<mlir::Value> variedValues(mlir::Block &block,
                                         llvm::ArrayRef<mlir::Value> wrt);

/// Marks active in `adjoints` the values of `block` that vary with `wrt` and
/// that one of `outputs` depends on.
void markActive(mlir::Block &block, llvm::ArrayRef<mlir::Value> wrt,
                llvm::ArrayRef<mlir::Value> outputs, Adjoints &adjoints);

/// From the last of `ops` (in forward order) to the first, applies the rule
/// of each op with an active result that has a gradient; fails at the
/// first op without one.
mlir::LogicalResult reverseSweep(llvm::ArrayRef<mlir::Operation *> ops,
                                 Adjoints &adjoints);

/// Adds the gradients of `op`'s active inputs (and of its init, for a sum
/// reduction) from those of its results; fails with an error at the op
/// when the body or an indexing map has no adjoint.
mlir::LogicalResult differentiateGeneric(mlir::linalg::GenericOp op,
                                         Adjoints &adjoints);

/// The rules of the ops that move data (reshapes, transposes, slices,
/// concatenation, casts, layout constraints, gathers, fills). Fails with an
/// error at `op` when it has none.
mlir::LogicalResult differentiateDataOp(mlir::Operation *op,
                                        Adjoints &adjoints);

/// The gradient of the table of `gather`, a lookup of rows (one gathered
/// dim, dim 0, i32 or i64 indices), from its result's `gradient`: zeros and
/// a dtensor.scatter_add (EmbeddingAdjoint.cpp). Null for any other gather.
mlir::Value createRowGatherAdjoint(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::tensor::GatherOp gather,
                                   mlir::Value gradient);

/// Readies the attentions of the gradient function `function` before the
/// sweep (AttentionAdjoint.cpp): each gives its log-sum-exp, which its
/// adjoint reads, except one whose mask varies with the arguments
/// (`varied`), which is written as linalg. Fails with an error at an op
/// that cannot be.
mlir::LogicalResult
prepareAttentions(mlir::func::FuncOp function,
                  const llvm::DenseSet<mlir::Value> &varied);

/// The gradients of the query, key and value of `op` as one
/// dtensor.attention_backward. Fails with an error at `op` for the
/// inference forms (rows, accumulate).
mlir::LogicalResult differentiateAttention(AttentionOp op, Adjoints &adjoints);

/// Clones the ops of `body` (but its terminator) with `mapping` at the end
/// of the block `builder` builds, then sweeps back from `seeds`, the
/// gradients of the terminator's operands (null: none), to `wrt`, values
/// the clones read. The gradient of each of `wrt`, zeros where none
/// arrives; fails at the first op without a rule.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
sweepBody(mlir::OpBuilder &builder, mlir::Location loc, mlir::Block &body,
          mlir::IRMapping &mapping, llvm::ArrayRef<mlir::Value> seeds,
          llvm::ArrayRef<mlir::Value> wrt);

/// The gradients of `op`'s active inputs: one call of the declared backward
/// custom op of each (CustomCallAdjoint.cpp). Fails with an error at `op`
/// when the op or the input declares none.
mlir::LogicalResult differentiateCustomCall(CustomCallOp op,
                                            Adjoints &adjoints);

/// The gradients of `op`'s active inputs: one dtensor.local_map that runs
/// the body and its reverse sweep on the local pieces, the gradients laid
/// out as the duals of the op's layouts (LocalMapAdjoint.cpp). Fails with an
/// error at `op` for a layout without a dual, and at an op of the body
/// without a rule.
mlir::LogicalResult differentiateLocalMap(LocalMapOp op, Adjoints &adjoints);

/// The gradients of the active values that the cases of `op` read from
/// outside: a switch on the same selector whose case k sweeps back through
/// case k (IndexSwitchAdjoint.cpp). A local map's body over uneven pieces
/// is such a switch, one case per shape class.
mlir::LogicalResult differentiateIndexSwitch(mlir::scf::IndexSwitchOp op,
                                             Adjoints &adjoints);

/// Zeros of the type of `like` (its sizes read from it where dynamic).
mlir::Value createZerosLike(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value like);

/// In the block `builder` builds: the adjoint of `wrt` (a block argument of
/// `body`), given the adjoints `seeds` of values of `body`, after the ops
/// of `body` were cloned with `mapping`. Null when nothing reaches `wrt`;
/// fails with an error at the first op on the way that has no adjoint.
mlir::FailureOr<mlir::Value>
scalarAdjoint(mlir::OpBuilder &builder, mlir::Location loc, mlir::Block &body,
              const mlir::IRMapping &mapping,
              llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> seeds,
              mlir::Value wrt);

/// Activation checkpointing (Recompute.cpp): in `block`, whose ops
/// `forward` are the forward and the others the backward, each tensor that
/// a forward op of a checkpointed module instance (`checkpointOf`: its path,
/// "" for none) computes and the backward reads is recomputed from the
/// instance's inputs before its first backward use.
void recomputeCheckpoints(
    mlir::Block &block, llvm::ArrayRef<mlir::Operation *> forward,
    llvm::function_ref<llvm::StringRef(mlir::Operation *)> checkpointOf);

} // namespace dtensor::autodiff

#endif // DTENSOR_COMPILER_AUTODIFF_ADJOINTS_H
