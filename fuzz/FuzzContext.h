//===- FuzzContext.h - The MLIR context of the fuzzers ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An MLIRContext with the dialects dtensor-compile registers, on one thread
// (no thread pool: faster runs, simpler reports). A context keeps every type
// and attribute it ever uniqued, and random inputs make new ones each run,
// so the context is replaced after every kRunsPerContext inputs to keep the
// fuzzer's memory flat. Diagnostics are dropped: an error is a normal
// answer to bad input, only crashes count.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FUZZ_FUZZCONTEXT_H
#define DTENSOR_FUZZ_FUZZCONTEXT_H

#include "dtensor/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace dtensor::fuzz {

class FuzzContext {
public:
  static constexpr unsigned kRunsPerContext = 2000;

  /// The context for the next input.
  mlir::MLIRContext &next() {
    if (!context || ++runs >= kRunsPerContext) {
      handler.reset();
      context.reset();
      mlir::DialectRegistry registry;
      registerAllDialects(registry);
      context = std::make_unique<mlir::MLIRContext>(
          registry, mlir::MLIRContext::Threading::DISABLED);
      context->loadAllAvailableDialects();
      context->printOpOnDiagnostic(false);
      context->printStackTraceOnDiagnostic(false);
      handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
          context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
      runs = 0;
    }
    return *context;
  }

private:
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  unsigned runs = 0;
};

} // namespace dtensor::fuzz

#endif // DTENSOR_FUZZ_FUZZCONTEXT_H
