//===- dtensor-translate.cpp - translations into and out of MLIR ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-translate --import-json model.json [--import-world-size N]
//
// mlir-translate with the dtensor translations registered: `--import-json`
// turns a JSON model plan (docs/model-plan.md) into the global-view module
// that dtensor-opt and dtensor-compile take.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/ImportJson.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  dtensor::frontend::registerImportJsonTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "dtensor translation tool"));
}
