//===- ShapeOpRules.h - explicit rules for non-linalg ops -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to DTensorAnalysis: ShardingRuleRegistry dispatches here for the tensor
// and shape ops that have no indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_ANALYSIS_SHAPEOPRULES_H
#define DTENSOR_COMPILER_ANALYSIS_SHAPEOPRULES_H

#include "dtensor/Analysis/ShardingRule.h"

namespace dtensor::detail {

/// The explicit rule of a reshape, slice, concat, gather, softmax, empty,
/// constant or dtensor.write_rows op, or std::nullopt for any other op and
/// for forms of these ops that have no rule (e.g. dynamic slice offsets).
std::optional<ShardingRule> getShapeOpRule(mlir::Operation *op);

} // namespace dtensor::detail

#endif // DTENSOR_COMPILER_ANALYSIS_SHAPEOPRULES_H
