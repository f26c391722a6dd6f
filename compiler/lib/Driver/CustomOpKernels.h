//===- CustomOpKernels.h - The custom ops an artifact calls -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The manifest's "custom_op_libraries" and "custom_ops": the libraries
// named by dtensor-compile --custom-op-library, checked to export the kernel
// of every custom op the program calls, and the ops in the order of the
// module's dtensor.custom_ops, the ids the generated code passes.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_DRIVER_CUSTOMOPKERNELS_H
#define DTENSOR_COMPILER_DRIVER_CUSTOMOPKERNELS_H

#include "dtensor/Formats/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace dtensor::driver {

/// Checks the custom calls of `module` (global program, before any
/// lowering): every call of one custom op names one symbol and one
/// signature, the target is "cpu", and some library of `libraries` exports
/// each symbol (the first one that does is the op's). Records
/// dtensor.custom_ops on the module and fills the manifest's
/// customOpLibraries (absolute paths) and customOps. Errors are emitted at
/// the call concerned.
mlir::LogicalResult
collectCustomOpKernels(mlir::ModuleOp module, const std::string &target,
                       const std::vector<std::string> &libraries,
                       rt::Manifest &manifest);

} // namespace dtensor::driver

#endif // DTENSOR_COMPILER_DRIVER_CUSTOMOPKERNELS_H
