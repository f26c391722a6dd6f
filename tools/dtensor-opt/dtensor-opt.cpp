//===- dtensor-opt.cpp - mlir-opt with the dtensor dialect ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parses, verifies, transforms and prints IR with the dtensor dialect and the
// upstream dialects the compilation pipeline uses.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/GpuCodegen.h"
#include "dtensor/Driver/DebugOutput.h"
#include "dtensor/InitAllDialects.h"
#include "dtensor/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  dtensor::registerAllPasses();
  dtensor::driver::registerDebugOutputOptions();

  mlir::DialectRegistry registry;
  dtensor::registerAllDialects(registry);
  // Interface implementations (bufferization, inlining, ...) of the
  // upstream dialects.
  mlir::registerAllExtensions(registry);
  dtensor::codegen::registerGpuTargetInterfaces(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dtensor optimizer driver\n", registry));
}
