//===- DynamicChunk.h - torch.chunk of a runtime size -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// This rank's piece of a dim whose size is only known at run time (a piece
// of an uneven shard, split again over another mesh dim): the chunk rule of
// dtensor.chunk computed with arith ops, nested over the listed mesh dims.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_CODEGEN_COMMON_DYNAMICCHUNK_H
#define DTENSOR_COMPILER_CODEGEN_COMMON_DYNAMICCHUNK_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"

namespace dtensor::codegen {

struct DynamicChunk {
  mlir::Value offset;
  mlir::Value size;
};

/// The piece of [0, size) this rank holds when it is chunked over
/// `meshDims` of `mesh` (first listed outermost), built at the builder's
/// insertion point.
DynamicChunk buildDynamicChunk(mlir::OpBuilder &builder, mlir::Location loc,
                               MeshOp mesh, mlir::Value size,
                               llvm::ArrayRef<int64_t> meshDims);

} // namespace dtensor::codegen

#endif // DTENSOR_COMPILER_CODEGEN_COMMON_DYNAMICCHUNK_H
