//===- dtensor-translate.cpp - translations into and out of MLIR ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-translate --import-json model.json [--import-world-size N]
// dtensor-translate --print-plan-ops=json|markdown [-o FILE]
//
// mlir-translate with the dtensor translations registered: `--import-json`
// turns a JSON model plan (docs/model-plan.md) into the global-view module
// that dtensor-opt and dtensor-compile take. `--print-plan-ops` prints the
// table of the plan's op kinds instead (docs/model-plan-op-table.md); it
// reads no input, so it is not a translation and has options of its own.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/ImportJson.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

enum class PlanOpsFormat { Json, Markdown };

/// `--print-plan-ops=...`: prints the op table to `-o` (default stdout).
static int printPlanOps(int argc, char **argv) {
  static llvm::cl::opt<PlanOpsFormat> format(
      "print-plan-ops", llvm::cl::desc("Print the table of the plan's ops"),
      llvm::cl::values(
          clEnumValN(PlanOpsFormat::Json, "json", "as JSON"),
          clEnumValN(PlanOpsFormat::Markdown, "markdown",
                     "as the Markdown of docs/model-plan-op-table.md")),
      llvm::cl::Required);
  static llvm::cl::opt<std::string> outputFilename(
      "o", llvm::cl::desc("Output filename"), llvm::cl::value_desc("filename"),
      llvm::cl::init("-"));
  llvm::cl::ParseCommandLineOptions(argc, argv, "dtensor op table printer");
  std::error_code error;
  llvm::ToolOutputFile output(outputFilename, error, llvm::sys::fs::OF_Text);
  if (error) {
    llvm::errs() << "dtensor-translate: " << outputFilename << ": "
                 << error.message() << "\n";
    return 1;
  }
  if (format == PlanOpsFormat::Json)
    dtensor::frontend::printPlanOpsJson(output.os());
  else
    dtensor::frontend::printPlanOpsMarkdown(output.os());
  output.keep();
  return 0;
}

int main(int argc, char **argv) {
  // -print-plan-ops or --print-plan-ops, as LLVM's parser takes either.
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef arg(argv[i]);
        arg.starts_with("-") && arg.ltrim('-').starts_with("print-plan-ops"))
      return printPlanOps(argc, argv);
  dtensor::frontend::registerImportJsonTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "dtensor translation tool"));
}
