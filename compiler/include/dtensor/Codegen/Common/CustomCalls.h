//===- CustomCalls.h - Custom calls as runtime calls ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A dtensor.custom_call bufferizes into dtensor_rt_custom_call: its input
// and output buffers are queued and the call names the custom op by its id,
// the op's position in the module attribute dtensor.custom_ops
// (DTensorDialect::getCustomOpsAttrName(): the sorted
// names of the module's custom ops). dtensor-compile records the attribute
// on the global program before the per-rank and reference programs are
// made from it, so both number the ops as the manifest's `custom_ops` list
// does.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_CODEGEN_COMMON_CUSTOMCALLS_H
#define DTENSOR_CODEGEN_COMMON_CUSTOMCALLS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <optional>

namespace dtensor::codegen {

/// The runtime function a custom call becomes (dtensor/rt_abi.h).
inline constexpr llvm::StringLiteral kCustomCallSymbol =
    "dtensor_rt_custom_call";

/// Records dtensor.custom_ops on `module` (the sorted names of the custom
/// ops its custom calls name) unless it is already there.
void recordCustomOps(mlir::ModuleOp module);

/// The id of custom op `name` in the module's dtensor.custom_ops.
std::optional<int64_t> lookupCustomOpId(mlir::ModuleOp module,
                                        llvm::StringRef name);

/// Attaches the bufferization model of dtensor.custom_call.
void registerCustomCallBufferizationModel(mlir::DialectRegistry &registry);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_COMMON_CUSTOMCALLS_H
