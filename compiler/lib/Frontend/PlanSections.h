//===- PlanSections.h - The model and plan sections of a plan ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// readModelPlan (ModelPlan.cpp) reads the file's top level and the mesh,
// then hands each section to its reader; both report errors through the
// one JSON reader (JsonReader.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_PLANSECTIONS_H
#define DTENSOR_COMPILER_FRONTEND_PLANSECTIONS_H

#include "dtensor/Frontend/ModelPlan.h"

namespace dtensor::frontend {

/// Reads `model` into `plan` (its mesh already read): tensors, custom ops,
/// ops, outputs and state updates.
mlir::LogicalResult readModelSection(const JsonNode &node,
                                     const JsonLocator &locator,
                                     ModelPlan &plan);

/// Reads `plan` into `plan` (its mesh and model already read): the styles'
/// and data-parallel mesh dims, context parallelism, styles, placements
/// and local maps.
mlir::LogicalResult readPlanSection(const JsonNode &node,
                                    const JsonLocator &locator,
                                    ModelPlan &plan);

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_PLANSECTIONS_H
