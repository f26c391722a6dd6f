//===- MlirFuzzer.cpp - Fuzzing dtensor-compile's MLIR entry --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is a global program in MLIR's text form, as `dtensor-compile
// model.mlir` reads it: parsed and verified, then --dtensor-propagate and
// --dtensor-partition (the stages that read the dtensor dialect's layouts
// and meshes; code generation below them sees only what they produce).
// Every error is a diagnostic; only a crash, an assertion or a sanitizer
// report is a finding.
//
// Crashes inside MLIR's own parsers are upstream's (docs/fuzzing.md lists
// them with a reproducer for mlir-opt-22). Inputs that would hit a known one
// are skipped, so that fuzzing goes on past it:
//  - linalg.transpose's `permutation = [...]` and linalg.broadcast's
//    `dimensions = [...]` that are not a list of integers: the parser adds
//    the null attribute of the failed parse and dereferences it (SEGV in
//    NamedAttrList::set, LLVM 22.1).
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "dtensor/Partition/Passes.h"
#include "dtensor/Propagation/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <regex>
#include <string>

using namespace mlir;

namespace {
/// Whether `text` holds a `permutation =` or `dimensions =` whose value is
/// not a plain list of integers (the upstream crash above).
bool hitsKnownUpstreamCrash(llvm::StringRef text) {
  static const std::regex keyword(R"((permutation|dimensions)\s*=)");
  static const std::regex integerList(R"(^\s*\[\s*(-?\d+\s*(,\s*-?\d+\s*)*)?\])");
  const std::string input = text.str();
  for (auto it = std::sregex_iterator(input.begin(), input.end(), keyword);
       it != std::sregex_iterator(); ++it) {
    auto after = input.begin() + it->position() + it->length();
    if (!std::regex_search(after, input.end(), integerList,
                           std::regex_constants::match_continuous))
      return true;
  }
  return false;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (hitsKnownUpstreamCrash(text))
    return -1; // Not added to the corpus.
  static dtensor::fuzz::FuzzContext contexts;
  MLIRContext &context = contexts.next();
  // As dtensor-compile reads a file: a buffer that ends in a NUL, which
  // MLIR's lexer relies on to stop (libFuzzer's data has none).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "input.mlir"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 0;
  PassManager pm(&context);
  pm.addPass(dtensor::createPropagate());
  pm.addPass(dtensor::createPartition());
  (void)pm.run(*module);
  return 0;
}
