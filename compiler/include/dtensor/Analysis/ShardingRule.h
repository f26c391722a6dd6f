//===- ShardingRule.h - how an op's dims may be sharded ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A sharding rule describes an op by its *factors*: the loops of its
// iteration space. Each tensor dim of an operand or result is indexed by at
// most one factor. Sharding a parallel factor over a mesh dim shards every
// tensor dim it indexes; sharding a reduction factor leaves each rank with a
// partial result, combined by the op's reduction kind.
//
// This header holds the rule types only. Rules come from one mechanism: the
// indexing maps and iterator types of linalg structured ops, and identity
// maps for elementwise ops (LinalgRules). Ops without indexing maps
// (reshapes, slices, concat, gather, softmax, tensor.empty, tensor
// constants, dtensor.write_rows, dtensor.optimization_barrier and
// dtensor.attention) get explicit rules of the same form
// (ShapeOpRules, built with ShardingRuleBuilder), and every rule also says
// which operands may be Partial (PartialFlow.h). getShardingRule
// (ShardingRuleRegistry.h) picks an op's rule.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ANALYSIS_SHARDINGRULE_H
#define DTENSOR_ANALYSIS_SHARDINGRULE_H

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace dtensor {

/// One loop of an op's iteration space.
struct ShardingFactor {
  enum class Kind { Parallel, Reduction };
  Kind kind = Kind::Parallel;
  /// Static trip count, or mlir::ShapedType::kDynamic.
  int64_t size = 0;
  /// For a reduction factor: how partial results combine, if recognised.
  /// A reduction factor without a known combiner cannot be sharded.
  std::optional<ReductionKind> combiner;
  /// Sharding is exact only when the number of shards divides `size` (the
  /// major dim of a reshape group: torch.chunk blocks of the merged dim line
  /// up with blocks of the major dim only then). A dynamic size never
  /// qualifies.
  bool needsEvenSplit = false;
  /// The factor must not be sharded at all: a sliced or concatenated dim, a
  /// minor dim of a reshape group, a softmax dim.
  bool blocked = false;

  bool isReduction() const { return kind == Kind::Reduction; }
  /// True when sharding this factor gives a result with a known meaning.
  bool isShardable() const {
    return !blocked && (!isReduction() || combiner.has_value());
  }
  /// True when the factor may be split into `shards` pieces.
  bool canSplit(int64_t shards) const {
    if (shards == 1)
      return true;
    if (!isShardable())
      return false;
    if (!needsEvenSplit)
      return true;
    return size >= 0 && size % shards == 0;
  }
};

/// One way Partial values flow through an op over a mesh dim: when exactly
/// the listed operands are Partial with one of `kinds` (all the same kind)
/// and every other tensor operand is not Partial (nor sharded) over that
/// mesh dim, every tensor result is Partial of that kind. An empty operand
/// list means the results are Partial-compatible without any Partial input
/// (e.g. a fill with zero: zero is a valid partial sum).
struct PartialFlow {
  /// Indices into ShardingRule::operands.
  llvm::SmallVector<unsigned> operands;
  llvm::SmallVector<ReductionKind> kinds;
};

/// For each tensor dim of one operand or result, the factor indexing it, or
/// std::nullopt when the dim is not a plain loop index (a broadcast size-1
/// dim, or a compound expression such as a convolution window): such a dim
/// must stay unsharded under this rule.
using TensorFactors = llvm::SmallVector<std::optional<unsigned>>;

struct ShardingRule {
  llvm::SmallVector<ShardingFactor> factors;
  /// One entry per tensor operand, in operand order (non-tensor operands,
  /// e.g. scalars, are skipped and listed in `tensorOperands`).
  llvm::SmallVector<TensorFactors> operands;
  llvm::SmallVector<unsigned> tensorOperands;
  /// One entry per result.
  llvm::SmallVector<TensorFactors> results;
  /// Indices into `operands` of the operands the results accumulate into
  /// (linalg inits read by the body). When a reduction factor is sharded
  /// they must be Partial with the factor's combiner, like the results.
  llvm::SmallVector<unsigned> initOperands;
  /// The ways Partial values pass through the op, in a fixed order.
  llvm::SmallVector<PartialFlow> partialFlows;

  /// Prints the rule in a compact form, naming factors i, j, k, ...:
  /// `([i, k], [k, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}`.
  ///
  /// In full: the factors of each operand, then of each result, `-` for a
  /// dim no factor indexes; then each factor's size (`?` if dynamic),
  /// followed by `reduction<kind>` for a reduction factor, `even` when it
  /// needs an even split and `blocked` when it must not be sharded; then,
  /// when present, `inits [...]` (indices into `operands`) and `partial`
  /// with one `{operands: kinds}` per flow, `-` standing for no operand:
  ///
  ///   ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}
  ///       inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}
  ///   ([i, j]) -> ([i]) {i=4 even, j=8 blocked} partial {0: sum|avg|max|min}
  ///   () -> ([i, j]) {i=8, j=16} partial {-: sum|avg|max|min}
  void print(llvm::raw_ostream &os) const;
};

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_SHARDINGRULE_H
