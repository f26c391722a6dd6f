//===- LowerGather.cpp - tensor.gather as a linalg.generic ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tensor.gather has no bufferization model. A gather that partitioning left
// whole (its table is not sharded on a gathered dim) becomes a generic over
// the result that reads each coordinate from the indices and the element
// from the source with tensor.extract. A coordinate outside its dim gives
// zero, as an embedding lookup of an out-of-range id does in the model plan
// (and as partitionMaskedGather does for a sharded table).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"
#include "dtensor/Partition/GatherLookup.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_LOWERGATHER
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-lower-gather"

using namespace mlir;

namespace {

/// The generic computing `op`: every gathered dim checked against its size.
Value lowerGather(OpBuilder &b, tensor::GatherOp op) {
  SmallVector<Value> offsets, counts;
  for (int64_t dim : op.getGatherDims()) {
    offsets.push_back(Value());
    counts.push_back(
        tensor::DimOp::create(b, op.getLoc(), op.getSource(), dim));
  }
  return dtensor::buildGatherLookup(b, op, op.getResultType(), op.getSource(),
                                    op.getIndices(), offsets, counts);
}

struct LowerGather
    : dtensor::codegen::impl::LowerGatherBase<LowerGather> {
  void runOnOperation() override {
    SmallVector<tensor::GatherOp> gathers;
    getOperation().walk([&](tensor::GatherOp op) { gathers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (tensor::GatherOp op : gathers) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << OpWithFlags(op)
                              << " to a bounds-checked generic\n");
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, lowerGather(rewriter, op));
    }
  }
};

} // namespace
