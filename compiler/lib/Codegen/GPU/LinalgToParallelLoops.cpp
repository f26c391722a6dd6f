//===- GpuLinalgToParallelLoops.cpp - every linalg op in a parallel loop --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target runs each outermost scf.parallel as a kernel. Linalg's own
// lowering leaves ops without parallel dims (0-d ops, full reductions) as
// straight-line code or scf.for nests on the host, which cannot touch device
// memory; those get a one-iteration parallel loop (a kernel of one thread).
// Copies become linalg.copy first: the host cannot memcpy device buffers.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_GPULINALGTOPARALLELLOOPS
#include "dtensor/Codegen/GPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-gpu-linalg-to-parallel-loops"

using namespace mlir;

namespace {

struct GpuLinalgToParallelLoops
    : dtensor::codegen::impl::GpuLinalgToParallelLoopsBase<
          GpuLinalgToParallelLoops> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      LLVM_DEBUG(llvm::dbgs() << "copy at " << copy.getLoc()
                              << " becomes linalg.copy: the host cannot "
                                 "memcpy device buffers\n");
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }

    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("is not on buffers: the CUDA target lowers linalg ops "
                       "after bufferization");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "lowering '" << op->getName() << "' at " << op.getLoc()
                 << " to parallel loops"
                 << (op.getNumParallelLoops() == 0
                         ? " in a one-iteration scf.parallel (it has no "
                           "parallel dim)"
                         : "")
                 << "\n");
      if (op.getNumParallelLoops() == 0) {
        rewriter.setInsertionPoint(op);
        Location loc = op.getLoc();
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
        op->moveBefore(single.getBody()->getTerminator());
      }
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op.emitOpError("cannot be lowered to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
