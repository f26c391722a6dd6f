//===- PartialFlow.h - which operands may be Partial ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Partial(sum) and Partial(avg) values pass unreduced through computation
// that is *linear* in them: f(x_0 + ... + x_n) = f(x_0) + ... + f(x_n). The
// analysis assigns each scalar value of an op's computation a degree in the
// operands assumed Partial (zero, constant, linear or non-linear) and keeps
// the operand sets for which every result is linear. Results that are
// unchanged operand elements or zeros are Partial-compatible for every kind;
// otherwise max and min pass only through a reduction that combines its
// inputs with that same max or min.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ANALYSIS_PARTIALFLOW_H
#define DTENSOR_ANALYSIS_PARTIALFLOW_H

#include "dtensor/Analysis/ShardingRule.h"

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace dtensor {

/// Sum, avg, max and min: the kinds a value that moves data without
/// computing on it (or a zero) is compatible with.
llvm::SmallVector<ReductionKind> getAllReductionKinds();

/// The partial flows of a linalg op on tensors, over its tensor operands in
/// operand order. `reduction` is the op's combiner when it has reduction
/// loops and a single recognised one: a max or min combiner adds a flow of
/// that kind through the inputs it combines and the inits.
llvm::SmallVector<PartialFlow>
getLinalgPartialFlows(mlir::linalg::LinalgOp op,
                      std::optional<ReductionKind> reduction);

/// The partial flows of an elementwise op whose operands are all tensors,
/// taking each operand as one scalar of the computation.
llvm::SmallVector<PartialFlow> getElementwisePartialFlows(mlir::Operation *op);

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_PARTIALFLOW_H
