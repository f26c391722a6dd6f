//===- ShardingRule.h - how an op's dims may be sharded ---------*- C++ -*-===//
//
// A sharding rule describes an op by its *factors*: the loops of its
// iteration space. Each tensor dim of an operand or result is indexed by at
// most one factor. Sharding a parallel factor over a mesh dim shards every
// tensor dim it indexes; sharding a reduction factor leaves each rank with a
// partial result, combined by the op's reduction kind.
//
// Rules come from one mechanism: the indexing maps and iterator types of
// linalg structured ops, and identity maps for elementwise ops.
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

  bool isReduction() const { return kind == Kind::Reduction; }
  /// True when sharding this factor gives a result with a known meaning.
  bool isShardable() const { return !isReduction() || combiner.has_value(); }
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

  /// Prints the rule in a compact form, naming factors i, j, k, ...:
  /// `([i, k], [k, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}`.
  void print(llvm::raw_ostream &os) const;
};

/// The sharding rule of `op`, or std::nullopt when the op has none (it is
/// then kept replicated).
std::optional<ShardingRule> getShardingRule(mlir::Operation *op);

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_SHARDINGRULE_H
