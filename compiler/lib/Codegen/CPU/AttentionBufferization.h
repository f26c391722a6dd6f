//===- AttentionBufferization.h - dtensor.attention's buffers ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_COMPILER_CODEGEN_CPU_ATTENTIONBUFFERIZATION_H
#define DTENSOR_COMPILER_CODEGEN_CPU_ATTENTIONBUFFERIZATION_H

#include "mlir/IR/DialectRegistry.h"

namespace dtensor::codegen {

/// Attaches the bufferization model of dtensor.attention: a call of the
/// runtime's fused attention on views of the operands' buffers.
void registerAttentionBufferizationModel(mlir::DialectRegistry &registry);

} // namespace dtensor::codegen

#endif // DTENSOR_COMPILER_CODEGEN_CPU_ATTENTIONBUFFERIZATION_H
