//===- CollectiveFacts.h - what reports say of a collective ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The facts the communication report and the collective site table share:
// the module a collective belongs to, where it came from, and the bytes a
// rank sends in it (layout::ringBytesSent, the model the runtime's trace
// measures with).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_REPORTS_COLLECTIVEFACTS_H
#define DTENSOR_COMPILER_REPORTS_COLLECTIVEFACTS_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Layout/CollectiveBytes.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>
#include <string>
#include <tuple>

namespace dtensor {

/// What every collective carries, read alike on all five ops through the
/// generic Operation interface: its mesh group, its reduction (null for
/// kinds without one) and the group's size.
struct CollectiveGroup {
  mlir::FlatSymbolRefAttr mesh;
  mlir::DenseI64ArrayAttr meshDims;
  ReductionKindAttr reduction;
  int64_t groupSize = 1;
};

/// The group of collective `op` (one with the Collective trait, verified).
CollectiveGroup getCollectiveGroup(mlir::Operation *op,
                                   mlir::SymbolTableCollection &tables);

/// The byte model's kind of collective `op`, with its dim (gather, scatter,
/// split or shifted dim) and a second figure (all_to_all's concat dim, or
/// shift's dim_size; else 0); nullopt for an op that is not one of the six
/// collectives.
std::optional<std::tuple<layout::CollectiveKind, int64_t, int64_t>>
getCollectiveKind(mlir::Operation *op);

/// Bytes each rank sends in the collective `op` over `n` ranks, summed over
/// its operand/result pairs (a variadic collective is one call); nullopt
/// when any pair's bytes are not statically known.
std::optional<int64_t> getBytesSent(mlir::Operation *op, int64_t n);

/// The module `op` belongs to: the innermost name in its location or, failing
/// that, in the location of the nearest enclosing op inside `fn` that has
/// one (a collective in a loop or an async region built by a pass). Null
/// when none has one.
mlir::StringAttr getModuleName(mlir::Operation *op, mlir::Operation *fn);

/// "file:line:col" of the first file position in `loc`, or "".
std::string getSourcePosition(mlir::Location loc);

} // namespace dtensor

#endif // DTENSOR_COMPILER_REPORTS_COLLECTIVEFACTS_H
