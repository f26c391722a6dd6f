//===- LocalMaps.h - Modules of a plan that run on local shards -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `plan.local_maps` (docs/model-plan.md, "Local maps"): modules whose ops are
// written against each rank's local pieces, PyTorch's local_map. This file
// finds them in the module tree and builds each one's dtensor.local_map; the
// importer supplies its inputs in their input layouts.
//
// Uneven shards: ranks may hold pieces of different sizes. The emitters
// build static shapes, so the body is emitted once per distinct set of
// local input shapes (a "shape class"), and a switch on the rank's mesh
// coordinate picks the class's copy; the local map's body arguments and
// results are dynamic in the dims where classes differ, as partitioning
// types them.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_LOCALMAPS_H
#define DTENSOR_COMPILER_FRONTEND_LOCALMAPS_H

#include "ModuleTree.h"

#include "dtensor/Frontend/ModelPlan.h"

#include "mlir/IR/Builders.h"

namespace dtensor::frontend {

/// A module of the plan that a `plan.local_maps` entry matches.
struct LocalMapModule {
  std::string path;
  const LocalMapDecl *decl = nullptr;
  /// Indices into ModelPlan::ops of its ops: consecutive.
  llvm::SmallVector<unsigned> ops;
  /// The values its ops read that are defined outside it, parameters
  /// included, in order of first use; positional as `in_placements`.
  llvm::SmallVector<std::string> inputs;
  /// The values its ops define that are read outside it or are model
  /// outputs, in order of definition; positional as `out_placements`.
  llvm::SmallVector<std::string> outputs;
};

/// The modules the plan's local maps match. Errors: a pattern that matches
/// nothing, nested local maps, a style on or inside a local map, ops of a
/// local map with other ops between them, placement lists whose lengths do
/// not match the module's inputs and outputs, `placements` for a value
/// inside a local map that is not one of its outputs.
mlir::FailureOr<std::vector<LocalMapModule>>
findLocalMaps(const ModelPlan &plan, const JsonLocator &locator);

/// Builds the dtensor.local_map of `localMap` at `builder`'s insertion
/// point on mesh `meshRef` (`plan.mesh`): `inputs` are its input values and
/// `inLayouts` their layouts. The output layouts and global shapes follow
/// from `out_placements` and the pieces the body returns on every rank; a
/// set of pieces that no global tensor splits into is an error. Returns one
/// value per output.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitLocalMap(mlir::OpBuilder &builder, const ModelPlan &plan,
             const LocalMapModule &localMap, mlir::ValueRange inputs,
             llvm::ArrayRef<LayoutAttr> inLayouts,
             mlir::FlatSymbolRefAttr meshRef, const JsonLocator &locator);

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_LOCALMAPS_H
