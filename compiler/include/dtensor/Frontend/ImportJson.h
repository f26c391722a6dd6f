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

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dtensor::frontend {

struct ImportOptions {
  /// Ranks the program will run on; a larger mesh is an error. 0 = any.
  int64_t worldSize = 0;
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
