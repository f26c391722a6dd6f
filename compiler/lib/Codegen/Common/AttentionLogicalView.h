//===- AttentionLogicalView.h - buffers in logical order --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to the bufferization of dtensor.attention and
// dtensor.attention_backward: the runtime's kernels read every buffer in
// logical order, any strides.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_CODEGEN_COMMON_ATTENTIONLOGICALVIEW_H
#define DTENSOR_COMPILER_CODEGEN_COMMON_ATTENTIONLOGICALVIEW_H

#include "mlir/IR/Builders.h"

namespace dtensor::codegen::detail {

/// `buffer` with its dims in logical order (logical dim i is dim dims[i]):
/// a memref.transpose, no copy; `buffer` itself for the identity.
mlir::Value attentionLogicalView(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value buffer,
                                 llvm::ArrayRef<int64_t> dims);

} // namespace dtensor::codegen::detail

#endif // DTENSOR_COMPILER_CODEGEN_COMMON_ATTENTIONLOGICALVIEW_H
