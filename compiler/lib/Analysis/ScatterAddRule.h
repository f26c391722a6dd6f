//===- ScatterAddRule.h - the rule of dtensor.scatter_add -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAnalysis: ShardingRuleRegistry dispatches here for
// dtensor.scatter_add (the embedding's gradient), so that the op is
// propagated and partitioned whole on global tensors.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ANALYSIS_SCATTERADDRULE_H
#define DTENSOR_COMPILER_ANALYSIS_SCATTERADDRULE_H

#include "dtensor/Analysis/ShardingRule.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

namespace dtensor::detail {

/// The rule of `op` over its loops (N, V, trailing dims):
///  - N indexes the updates' rows and the indices. It is a sum reduction:
///    each rank adds its rows, and the results (and init) are Partial(sum).
///  - V indexes the rows of init and of the result only; sharding it gives
///    each rank its range of the table's rows, and the updates and indices
///    stay whole (partitioning shifts the indices by the rank's offset, so
///    that the rows of other ranks fall outside and are skipped).
///  - the trailing dims index updates, init and the result alike.
/// The op is linear in updates and init together: both Partial (sum or
/// avg) give a Partial result of that kind.
ShardingRule getScatterAddRule(ScatterAddOp op);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ANALYSIS_SCATTERADDRULE_H
