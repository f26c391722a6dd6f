//===- PlanFuzzer.cpp - Fuzzing the JSON model-plan importer --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is a model plan (docs/model-plan.md), imported as
// `dtensor-compile plan.json` imports it: JSON, the plan, its entries and
// styles, IR through the op emitters, the verifier (importModelPlan runs
// it), then --dtensor-propagate on what was imported. Every error is a
// diagnostic; only a crash, an assertion or a sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "dtensor/Frontend/ImportJson.h"
#include "dtensor/Propagation/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dtensor::fuzz::FuzzContext contexts;
  MLIRContext &context = contexts.next();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "plan.json"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      dtensor::frontend::importModelPlan(sourceMgr, &context, {});
  if (!module)
    return 0;
  PassManager pm(&context);
  pm.addPass(dtensor::createPropagate());
  (void)pm.run(*module);
  return 0;
}
