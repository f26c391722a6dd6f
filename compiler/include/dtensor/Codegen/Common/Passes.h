//===- Passes.h - passes both targets run -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_CODEGEN_COMMON_PASSES_H
#define DTENSOR_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

namespace dtensor::codegen {

#define GEN_PASS_DECL
#include "dtensor/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dtensor/Codegen/Common/Passes.h.inc"

/// Attaches the bufferization models of the dtensor collectives, which turn
/// them into runtime calls during one-shot bufferization.
void registerCollectiveBufferizationModels(mlir::DialectRegistry &registry);

/// Attaches the bufferization model of dtensor.write_rows, which updates
/// its cache's buffer in place (when one-shot analysis allows) with loops.
void registerWriteRowsBufferizationModel(mlir::DialectRegistry &registry);

/// Attaches the bufferization model of dtensor.scatter_add, which adds into
/// its init's buffer in place (when one-shot analysis allows) with loops.
void registerScatterAddBufferizationModel(mlir::DialectRegistry &registry);

/// Attaches the bufferization model of dtensor.attention: a call of the
/// runtime's fused attention (dtensor_rt_attention) on views of the
/// operands' buffers, for f32 and f64; an op of another element type gets
/// an error (--dtensor-decompose-attention writes it as linalg first).
void registerAttentionBufferizationModel(mlir::DialectRegistry &registry);

/// Attaches the bufferization model of dtensor.attention_backward: a call of
/// the runtime's fused backward (dtensor_rt_attention_backward) on views of
/// the operands' buffers, for f32 and f64; an op of another element type
/// gets an error (--dtensor-decompose-attention writes it as linalg first).
void registerAttentionBackwardBufferizationModel(
    mlir::DialectRegistry &registry);

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_COMMON_PASSES_H
