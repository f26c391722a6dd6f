//===- MemoryReport.cpp - The memory report of dtensor-compile ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "MemoryReport.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dtensor;

namespace {
/// Hands the bufferized module to the analysis; changes nothing.
struct ReadAllocations
    : public PassWrapper<ReadAllocations, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReadAllocations)

  explicit ReadAllocations(memory::MemoryAnalysis &analysis)
      : analysis(analysis) {}
  StringRef getArgument() const final { return "dtensor-read-allocations"; }
  void runOnOperation() final {
    analysis.addBufferizedProgram(getOperation());
    markAllAnalysesPreserved();
  }

  memory::MemoryAnalysis &analysis;
};
} // namespace

std::function<void(OpPassManager &)>
driver::readAllocationsInto(memory::MemoryAnalysis &analysis) {
  return [&analysis](OpPassManager &pm) {
    pm.addPass(std::make_unique<ReadAllocations>(analysis));
  };
}

LogicalResult driver::writeMemoryReport(ModuleOp module,
                                        const memory::MemoryAnalysis &analysis,
                                        llvm::StringRef format,
                                        llvm::StringRef file) {
  std::string text = format == "json"
                         ? memory::formatMemoryJson(analysis.getEntries())
                         : memory::formatMemoryText(analysis.getEntries());
  if (file.empty()) {
    llvm::outs() << text;
    llvm::outs().flush();
    return success();
  }
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(file, &message);
  if (!output)
    return emitError(UnknownLoc::get(module.getContext()))
           << "--memory-report-file: cannot write " << file << ": " << message;
  output->os() << text;
  output->keep();
  return success();
}
