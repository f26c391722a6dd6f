//===- FuseCollectives.h - phases of the collective fusion pass -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pass runs three phases on the per-rank program: rewrite patterns that
// cancel and strength-reduce collectives, bucketing of independent
// collectives into variadic ones, and the async split of every collective
// into dtensor.start/dtensor.wait. This header declares the phases and the
// scheduling helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_COLLECTIVES_FUSECOLLECTIVES_H
#define DTENSOR_COMPILER_COLLECTIVES_FUSECOLLECTIVES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <cstdint>

namespace dtensor {

//===----------------------------------------------------------------------===//
// Phases
//===----------------------------------------------------------------------===//

/// Adds the patterns that cancel a collective against its inverse and
/// strength-reduce pairs of collectives (CollectiveSimplification.cpp).
void populateCollectiveSimplificationPatterns(
    mlir::RewritePatternSet &patterns);

/// What bucketing did in one block.
struct BucketCounts {
  /// Variadic collectives created.
  unsigned buckets = 0;
  /// Collectives combined into them.
  unsigned members = 0;
};

/// Combines independent all_reduce, all_gather and reduce_scatter ops of
/// `block` that agree on everything but their tensors into variadic ones of
/// at most `bucketBytes` per rank (CollectiveBucketing.cpp).
/// With `explain`, each bucket is a remark at its first member.
BucketCounts bucketCollectives(mlir::Block &block, uint64_t bucketBytes,
                               bool explain = false);

/// Splits every collective of `block` into a dtensor.start, hoisted as early
/// as its operands allow, and a dtensor.wait, sunk to its first user
/// (CollectiveOverlap.cpp). Returns the number of collectives split.
unsigned overlapCollectives(mlir::Block &block);

//===----------------------------------------------------------------------===//
// Helpers shared by the phases (CollectiveScheduling.cpp)
//===----------------------------------------------------------------------===//

/// True when `op` is a collective issued by a dtensor.start.
bool isIssuedAsync(mlir::Operation *op);

/// True when a collective must not be moved across `op`: a call, or an op
/// whose regions hold a collective or a call, may communicate in an order
/// that moving would break (some ranks may not even run it). A top-level
/// dtensor.start is no barrier: it is one collective, issued where it
/// stands.
bool isCommunicationBarrier(mlir::Operation *op);

/// The last op of the block of `op`, before `op`, that defines a value `op`
/// or an op nested in it uses; null when all those values are available at
/// the start of the block.
mlir::Operation *findLastOperandDefinition(mlir::Operation *op);

/// The first op of the block of `op` that uses one of its results, directly
/// or from a nested op; the block terminator when a result is used in
/// another block (and none in this one); null when no result is used.
mlir::Operation *findFirstUserInBlock(mlir::Operation *op);

/// True when `op` or an op nested in it uses a result of an op of `ops`
/// (ops of the same block as `op`).
bool usesResultOf(mlir::Operation *op,
                  const llvm::SmallPtrSetImpl<mlir::Operation *> &ops);

/// Creates an op of the same kind and with the same attributes as the
/// variadic collective `like` (all_reduce, all_gather or reduce_scatter),
/// on other input/result pairs.
mlir::Operation *createVariadicCollectiveLike(mlir::OpBuilder &builder,
                                              mlir::Location loc,
                                              mlir::Operation *like,
                                              mlir::ValueRange inputs,
                                              mlir::TypeRange resultTypes);

} // namespace dtensor

#endif // DTENSOR_COMPILER_COLLECTIVES_FUSECOLLECTIVES_H
