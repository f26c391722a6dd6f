//===- DynamicChunk.cpp - torch.chunk of a runtime size -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "DynamicChunk.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace dtensor;

codegen::DynamicChunk codegen::buildDynamicChunk(OpBuilder &builder,
                                                 Location loc, MeshOp mesh,
                                                 Value size,
                                                 ArrayRef<int64_t> meshDims) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  SmallVector<Type> indexTypes(meshDims.size(), builder.getIndexType());
  auto coords = MeshCoordOp::create(builder, loc, indexTypes, mesh.getSymName(),
                                    meshDims);
  Value offset = constant(0);
  for (auto [meshDim, coord] : llvm::zip(meshDims, coords.getCoords())) {
    // torch.chunk: pieces of ceil(size / n); trailing pieces may be short or
    // empty.
    Value parts = constant(mesh.getShape()[meshDim]);
    Value chunk = arith::CeilDivUIOp::create(builder, loc, size, parts);
    Value begin = arith::MinUIOp::create(
        builder, loc, arith::MulIOp::create(builder, loc, coord, chunk), size);
    Value end = arith::MinUIOp::create(
        builder, loc, arith::AddIOp::create(builder, loc, begin, chunk), size);
    offset = arith::AddIOp::create(builder, loc, offset, begin);
    size = arith::SubIOp::create(builder, loc, end, begin);
  }
  return {offset, size};
}
