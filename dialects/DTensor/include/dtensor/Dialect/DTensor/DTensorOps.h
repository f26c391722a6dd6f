//===- DTensorOps.h - dtensor operations ------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSOROPS_H
#define DTENSOR_DIALECT_DTENSOR_DTENSOROPS_H

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dtensor {
namespace detail {
/// Checks a list of mesh dims on its own: non-empty, non-negative, unique.
llvm::LogicalResult verifyMeshDimList(mlir::Operation *op,
                                      llvm::ArrayRef<int64_t> meshDims);
} // namespace detail

/// Trait of ops acting over the groups of ranks spanned by `mesh_dims`.
template <typename ConcreteType>
class MeshGroup : public mlir::OpTrait::TraitBase<ConcreteType, MeshGroup> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    return detail::verifyMeshDimList(op,
                                     llvm::cast<ConcreteType>(op).getMeshDims());
  }
};

/// Trait of the ops that communicate (all_reduce, all_gather, reduce_scatter,
/// all_to_all, broadcast): the ops a dtensor.start may issue.
template <typename ConcreteType>
class Collective : public mlir::OpTrait::TraitBase<ConcreteType, Collective> {
};
} // namespace dtensor

#define GET_OP_CLASSES
#include "dtensor/Dialect/DTensor/DTensorOps.h.inc"

namespace dtensor {
/// Resolves `symbol` from `from` to a dtensor.mesh, or null.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr symbol,
                  mlir::SymbolTableCollection *tables = nullptr);

namespace detail {
/// Shared verifySymbolUses of the ops acting over mesh-dim groups: resolves
/// the mesh, checks `mesh_dims`, then calls the op's verifyGroupShapes.
template <typename OpT>
llvm::LogicalResult verifyMeshGroupOp(OpT op,
                                      mlir::SymbolTableCollection &tables);
} // namespace detail
} // namespace dtensor

#endif // DTENSOR_DIALECT_DTENSOR_DTENSOROPS_H
