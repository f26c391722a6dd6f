//===- GpuEmulateLaunches.cpp - kernels run as loops on the CPU -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every block and thread of a gpu.launch as iterations of sequential loops,
// in the order (z, y, x) of blocks then of threads. The kernels the CUDA
// target generates need no barrier and no shared memory, so this runs them
// to the same results, and the CPU target can test the CUDA target's kernel
// mapping end to end on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_GPUEMULATELAUNCHES
#include "dtensor/Codegen/GPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-gpu-emulate-launches"

using namespace mlir;

namespace {

LogicalResult emulate(gpu::LaunchOp launch, RewriterBase &rewriter) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return launch.emitOpError(
        "uses async tokens, clusters or attributions, which emulation does "
        "not support");
  Region &body = launch.getBody();
  if (!body.hasOneBlock())
    return launch.emitOpError("has more than one block");
  bool barrier = false;
  body.walk([&](gpu::BarrierOp) { barrier = true; });
  if (barrier)
    return launch.emitOpError("synchronises its threads, which sequential "
                              "emulation cannot");

  Location loc = launch.getLoc();
  LLVM_DEBUG(llvm::dbgs() << "emulating the launch at " << loc
                          << " as six sequential loops (grid z, y, x, then "
                             "block z, y, x)\n");
  rewriter.setInsertionPoint(launch);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> upper = {grid.z,  grid.y,  grid.x,
                              block.z, block.y, block.x};
  scf::LoopNest nest =
      scf::buildLoopNest(rewriter, loc, SmallVector<Value>(6, zero), upper,
                         SmallVector<Value>(6, one));
  auto iv = [&](int level) { return nest.loops[level].getInductionVar(); };

  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  // The body's arguments: block ids, thread ids, grid size, block size.
  SmallVector<Value> replacements = {iv(2),  iv(1),   iv(0),   iv(5),
                                     iv(4),  iv(3),   grid.x,  grid.y,
                                     grid.z, block.x, block.y, block.z};
  SmallVector<Value> arguments = {blockIds.x,  blockIds.y,  blockIds.z,
                                  threadIds.x, threadIds.y, threadIds.z,
                                  gridArgs.x,  gridArgs.y,  gridArgs.z,
                                  blockArgs.x, blockArgs.y, blockArgs.z};
  Block &kernel = body.front();
  if (kernel.getNumArguments() != arguments.size())
    return launch.emitOpError("has block arguments emulation does not know");
  rewriter.eraseOp(kernel.getTerminator());
  Block *inner = nest.loops.back().getBody();
  rewriter.inlineBlockBefore(&kernel, inner->getTerminator(), replacements);
  rewriter.eraseOp(launch);
  return success();
}

struct GpuEmulateLaunches
    : dtensor::codegen::impl::GpuEmulateLaunchesBase<GpuEmulateLaunches> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch, rewriter)))
        return signalPassFailure();
  }
};

} // namespace
