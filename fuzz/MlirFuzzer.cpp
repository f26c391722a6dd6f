//===- MlirFuzzer.cpp - Fuzzing dtensor-compile's MLIR entry --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is a global program in MLIR's text form, as `dtensor-compile
// model.mlir` reads it: parsed and verified, then --dtensor-propagate and
// --dtensor-partition (the stages that read the dtensor dialect's layouts
// and meshes; code generation below them sees only what they produce).
// Every error is a diagnostic; only a crash, an assertion or a sanitizer
// report is a finding. Crashes inside MLIR's own parser are upstream's and
// are listed apart in docs/fuzzing.md.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "dtensor/Partition/Passes.h"
#include "dtensor/Propagation/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dtensor::fuzz::FuzzContext contexts;
  MLIRContext &context = contexts.next();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      llvm::StringRef(reinterpret_cast<const char *>(data), size),
      ParserConfig(&context), "input.mlir");
  if (!module)
    return 0;
  PassManager pm(&context);
  pm.addPass(dtensor::createPropagate());
  pm.addPass(dtensor::createPartition());
  (void)pm.run(*module);
  return 0;
}
