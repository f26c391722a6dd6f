//===- RuntimeCalls.h - Calls into the runtime ABI --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Building blocks shared by the passes that emit calls into the runtime ABI
// of dtensor/rt_abi.h: declarations of the runtime functions, element type
// codes, queuing a buffer, and the communication ids recorded on the module.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_CODEGEN_COMMON_RUNTIMECALLS_H
#define DTENSOR_CODEGEN_COMMON_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace dtensor::codegen {

/// The module attributes listing the meshes and groups that runtime calls
/// name by position (mesh ids and group ids) are the dialect's:
/// DTensorDialect::getCommMeshesAttrName() and getCommGroupsAttrName().

/// The C symbol of dtensor_rt_push_buffer. At the func level it takes a typed
/// unranked memref, so each element type gets its own declaration, named
/// with this prefix; all of them lower to the same (i64, ptr) signature and
/// are bound to the C symbol on the LLVM dialect.
inline constexpr llvm::StringLiteral kPushBufferSymbol =
    "dtensor_rt_push_buffer";
inline constexpr llvm::StringLiteral kTypedPushBufferPrefix =
    "dtensor_rt_push_buffer__";

/// The runtime's allocator of step buffers, and the generic allocation
/// functions of the memref-to-LLVM lowering that are bound to it.
inline constexpr llvm::StringLiteral kAllocSymbol = "dtensor_rt_alloc";
inline constexpr llvm::StringLiteral kFreeSymbol = "dtensor_rt_free";
inline constexpr llvm::StringLiteral kGenericAllocSymbol =
    "_mlir_memref_to_llvm_alloc";
inline constexpr llvm::StringLiteral kGenericFreeSymbol =
    "_mlir_memref_to_llvm_free";

/// The runtime's kernel launcher, called by CUDA programs.
inline constexpr llvm::StringLiteral kGpuLaunchSymbol = "dtensor_rt_gpu_launch";

/// The dtensor_rt_dtype code of `elementType`, if the runtime carries it.
std::optional<int32_t> getRuntimeDType(mlir::Type elementType);

/// Looks up `name` in `module`, declaring it as a private function of `type`
/// when absent.
mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module,
                                          llvm::StringRef name,
                                          mlir::FunctionType type);

/// Calls runtime function `name` (declared on first use) with `args`,
/// returning the results of `resultTypes`.
mlir::func::CallOp callRuntime(mlir::OpBuilder &builder, mlir::Location loc,
                               llvm::StringRef name,
                               mlir::TypeRange resultTypes,
                               mlir::ValueRange args);

/// Queues `buffer` (a ranked memref) for the next collective or matmul call.
void pushBuffer(mlir::OpBuilder &builder, mlir::Location loc,
                mlir::Value buffer);

mlir::Value createI32(mlir::OpBuilder &builder, mlir::Location loc,
                      int64_t value);
mlir::Value createI64(mlir::OpBuilder &builder, mlir::Location loc,
                      int64_t value);

/// The group id of (`mesh`, `meshDims`) in the module's dtensor.comm_groups,
/// or nullopt when the group is not recorded.
std::optional<int64_t> lookupGroupId(mlir::ModuleOp module,
                                     llvm::StringRef mesh,
                                     llvm::ArrayRef<int64_t> meshDims);

/// The mesh id of `mesh` in the module's dtensor.comm_meshes.
std::optional<int64_t> lookupMeshId(mlir::ModuleOp module,
                                    llvm::StringRef mesh);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_COMMON_RUNTIMECALLS_H
