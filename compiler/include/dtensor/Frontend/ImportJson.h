//===- ImportJson.h - JSON model plan to global IR --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Builds the global-view module of a JSON model plan (docs/model-plan.md):
// a `dtensor.mesh`, and one function whose arguments are the model inputs
// then the parameters, with layouts from the plan, and whose body holds the
// ops plus the `dtensor.distribute` / `dtensor.redistribute` ops the styles
// ask for. Errors are emitted as diagnostics at the JSON value concerned;
// on any error no module is returned.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_IMPORTJSON_H
#define DTENSOR_FRONTEND_IMPORTJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dtensor::frontend {

/// A new shape for the plan's mesh (`mesh` empty or "mesh": the whole
/// shape) or for one of its dims (`mesh` a dim name: one size), as
/// `dtensor-compile --mesh` gives it.
struct MeshShapeOverride {
  std::string mesh;
  std::vector<int64_t> shape;
};

struct ImportOptions {
  /// Ranks the program will run on; a larger mesh is an error. 0 = any.
  int64_t worldSize = 0;
  /// The mesh the program will run on, when not the plan's: the plan is
  /// imported for it (a style may depend on a mesh dim's size, as the
  /// key/value projections of grouped-query attention do). One that does
  /// not fit the plan's mesh is left for the caller to report.
  std::vector<MeshShapeOverride> meshOverrides;
};

/// Imports the main file of `sourceMgr`.
mlir::OwningOpRef<mlir::ModuleOp> importModelPlan(llvm::SourceMgr &sourceMgr,
                                                  mlir::MLIRContext *context,
                                                  const ImportOptions &options);

/// Registers `--import-json` with mlir-translate's registry, with the
/// option `--import-world-size`.
void registerImportJsonTranslation();

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_IMPORTJSON_H
