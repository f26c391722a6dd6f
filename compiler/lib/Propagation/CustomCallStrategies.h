//===- CustomCallStrategies.h - strategies of a custom call -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A dtensor.custom_call lists its strategies as PyTorch's register_sharding
// does: placements for one mesh dim. Propagation expands them to the whole
// mesh, one listed strategy per mesh dim in every combination, as
// expand_to_full_mesh_op_strategy does, and prices each by the largest
// local piece the kernel touches.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PROPAGATION_CUSTOMCALLSTRATEGIES_H
#define DTENSOR_COMPILER_PROPAGATION_CUSTOMCALLSTRATEGIES_H

#include "RuleStrategies.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

namespace dtensor {

/// The strategies of `op` (which has `strategies`) on `mesh`, with one
/// operand slot per operand (the inputs, then the init, which takes the
/// result's layout) and one result, without duplicates, in the order of
/// the listed strategies (mesh dim 0 slowest).
std::vector<propagation::Strategy>
getCustomCallStrategies(CustomCallOp op, const layout::Mesh &mesh,
                        const ComputeParams &params);

} // namespace dtensor

#endif // DTENSOR_COMPILER_PROPAGATION_CUSTOMCALLSTRATEGIES_H
