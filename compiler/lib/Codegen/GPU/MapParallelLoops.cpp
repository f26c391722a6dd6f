//===- GpuMapParallelLoops.cpp - outermost parallel loops to kernels ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One thread per iteration of each outermost scf.parallel: the iteration
// space is flattened so that any number of dims and any trip counts (static
// or known only on the host at run time) fill whole blocks, and consecutive
// threads take consecutive iterations of the innermost dim, whose elements
// are adjacent in row-major buffers.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_GPUMAPPARALLELLOOPS
#include "dtensor/Codegen/GPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-gpu-map-parallel-loops"

using namespace mlir;

namespace {

/// Replaces `loop`, a parallel loop inside a kernel, by a sequential nest.
LogicalResult serialize(scf::ParallelOp loop, RewriterBase &rewriter) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("with reductions cannot run inside a kernel");
  LLVM_DEBUG(llvm::dbgs() << "  serializing the nested parallel loop at "
                          << loop.getLoc() << " inside the kernel\n");
  rewriter.setInsertionPoint(loop);
  scf::LoopNest nest =
      scf::buildLoopNest(rewriter, loop.getLoc(), loop.getLowerBound(),
                         loop.getUpperBound(), loop.getStep());
  Block *body = nest.loops.back().getBody();
  SmallVector<Value> ivs;
  for (scf::ForOp level : nest.loops)
    ivs.push_back(level.getInductionVar());
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), body->getTerminator(), ivs);
  rewriter.eraseOp(loop);
  return success();
}

/// Replaces `loop`, an outermost parallel loop of the host, by a launch.
LogicalResult mapToKernel(scf::ParallelOp loop, int64_t blockSize,
                          RewriterBase &rewriter) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("with reductions cannot become a kernel");
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);

  // Trip counts and their product, folded when static.
  SmallVector<Value> counts;
  Value total = one;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = rewriter.createOrFold<arith::SubIOp>(loc, upper, lower);
    Value count = rewriter.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    count = rewriter.createOrFold<arith::MaxSIOp>(loc, count, zero);
    counts.push_back(count);
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, count);
  }
  // Small static spaces get one block of just enough threads; CUDA refuses
  // a launch of zero blocks, so an empty space still launches one.
  int64_t threadsPerBlock = blockSize;
  if (std::optional<int64_t> known = getConstantIntValue(total))
    threadsPerBlock = std::clamp<int64_t>(*known, 1, blockSize);
  LLVM_DEBUG({
    llvm::dbgs() << "mapping the parallel loop at " << loc << " ("
                 << counts.size() << " dims) to a launch of " << threadsPerBlock
                 << " threads per block, ";
    if (std::optional<int64_t> known = getConstantIntValue(total))
      llvm::dbgs() << *known << " iterations\n";
    else
      llvm::dbgs() << "iterations known at run time\n";
  });
  Value threads =
      arith::ConstantIndexOp::create(rewriter, loc, threadsPerBlock);
  Value blocks = rewriter.createOrFold<arith::MaxSIOp>(
      loc, rewriter.createOrFold<arith::CeilDivSIOp>(loc, total, threads), one);

  auto launch =
      gpu::LaunchOp::create(rewriter, loc, blocks, one, one, threads, one, one);
  Block &kernel = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&kernel);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  Value id = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                            launch.getBlockSize().x),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ult, id, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange, /*withElse=*/false);

  // The innermost dim varies fastest.
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  size_t rank = counts.size();
  SmallVector<Value> ivs(rank);
  Value rest = id;
  for (size_t k = rank; k-- > 0;) {
    Value index = rest;
    if (k > 0) {
      index = arith::RemUIOp::create(rewriter, loc, rest, counts[k]);
      rest = arith::DivUIOp::create(rewriter, loc, rest, counts[k]);
    }
    ivs[k] = arith::AddIOp::create(
        rewriter, loc, loop.getLowerBound()[k],
        arith::MulIOp::create(rewriter, loc, index, loop.getStep()[k]));
  }
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), guard.thenBlock()->getTerminator(),
                             ivs);
  rewriter.eraseOp(loop);

  SmallVector<scf::ParallelOp> nested;
  launch.getBody().walk(
      [&](scf::ParallelOp inner) { nested.push_back(inner); });
  for (scf::ParallelOp inner : nested)
    if (failed(serialize(inner, rewriter)))
      return failure();

  // Globals are read inside the kernel: outlining copies the ones the kernel
  // names into the GPU module.
  launch.getBody().walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto global = operand.get().getDefiningOp<memref::GetGlobalOp>();
      if (!global || launch->isAncestor(global))
        continue;
      OpBuilder inside = OpBuilder::atBlockBegin(&kernel);
      operand.set(inside.clone(*global)->getResult(0));
    }
  });
  return success();
}

/// Ops that read or write buffer contents, which host code must not do.
bool touchesBufferContents(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, memref::AllocaOp,
             memref::GetGlobalOp, memref::AtomicRMWOp,
             memref::GenericAtomicRMWOp>(op);
}

struct GpuMapParallelLoops
    : dtensor::codegen::impl::GpuMapParallelLoopsBase<GpuMapParallelLoops> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      function.emitError() << "--dtensor-gpu-map-parallel-loops: block-size "
                           << static_cast<int64_t>(blockSize)
                           << " is outside [1, 1024]";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    function.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<gpu::LaunchOp>())
        outermost.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : outermost)
      if (failed(mapToKernel(loop, blockSize, rewriter)))
        return signalPassFailure();

    // Host globals the kernels took copies of.
    SmallVector<memref::GetGlobalOp> unused;
    function.walk([&](memref::GetGlobalOp global) {
      if (global->use_empty())
        unused.push_back(global);
    });
    for (memref::GetGlobalOp global : unused)
      global.erase();

    WalkResult result = function.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (!touchesBufferContents(op))
        return WalkResult::advance();
      op->emitOpError("would access device memory from the host: the CUDA "
                      "target runs only parallel loops and runtime calls "
                      "there");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
