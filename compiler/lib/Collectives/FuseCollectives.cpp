//===- FuseCollectives.cpp - --dtensor-fuse-collectives ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the three phases on every block of every function: cancel and
// strength-reduce collectives, bucket the remaining ones, then split each
// into start/wait for overlap. Each phase sees the output of the one before:
// cancelled collectives are never bucketed, and a bucket is issued as one
// start.
//
//===----------------------------------------------------------------------===//

#include "FuseCollectives.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Collectives/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_FUSECOLLECTIVES
#include "dtensor/Collectives/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-fuse-collectives"

using namespace mlir;
using namespace dtensor;

namespace {
struct FuseCollectivesPass
    : dtensor::impl::FuseCollectivesBase<FuseCollectivesPass> {
  using FuseCollectivesBase::FuseCollectivesBase;

  void runOnOperation() override;

private:
  LogicalResult simplify();
  /// The blocks of the module's functions, nested ones included, except the
  /// bodies of dtensor.start (each holds one collective, already issued).
  SmallVector<Block *> getScheduledBlocks();
};
} // namespace

/// The collectives of the module that are not yet issued by a start.
static unsigned countCollectives(Operation *root) {
  unsigned count = 0;
  root->walk([&](Operation *op) {
    if (op->hasTrait<Collective>() && !isIssuedAsync(op))
      ++count;
  });
  return count;
}

namespace {
/// Explains each successful rewrite of the simplification patterns: a
/// remark at the op it matched, named after the pattern.
struct ExplainRewrites : RewriterBase::Listener {
  void notifyPatternBegin(const Pattern &pattern, Operation *op) override {
    loc = op->getLoc();
    opName = op->getName().getStringRef().str();
  }
  void notifyPatternEnd(const Pattern &pattern, LogicalResult status) override {
    if (failed(status))
      return;
    // The debug name is the pattern's C++ type: keep its last component.
    StringRef name = pattern.getDebugName().take_until(
        [](char c) { return c == '<'; });
    name = name.substr(name.rfind(':') + 1);
    auto it = llvm::find_if(kReasons, [&](const auto &entry) {
      return name == entry.first;
    });
    emitRemark(*loc) << "explain: " << opName << " rewritten by "
                     << (it != std::end(kReasons) ? StringRef(it->second) : name);
  }

  static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
      kReasons[] = {
          {"ChunkOfAllGather", "chunk-of-all-gather: a chunk of an all_gather "
                               "over the same groups is each rank's own "
                               "shard (both removed)"},
          {"AllGatherOfChunk", "all-gather-of-chunk: gathering the chunks of "
                               "a replicated value gives the value back"},
          {"AllToAllRoundTrip", "all-to-all-round-trip: an all_to_all and its "
                                "inverse cancel"},
          {"AllReduceOfChunks", "all-reduce-of-chunks: an all_reduce whose "
                                "users all chunk it is a reduce_scatter"},
          {"AllGatherOfReduceScatter",
           "all-gather-of-reduce-scatter: a reduce_scatter gathered again "
           "is one all_reduce"},
          {"DropUnusedPairs", "drop-unused-pairs: results nobody reads are "
                              "dropped from the collective"},
          {"SingleRankGroups", "single-rank-groups: a group of one rank "
                               "communicates nothing (removed)"},
  };
  std::optional<Location> loc;
  std::string opName;
};
} // namespace

LogicalResult FuseCollectivesPass::simplify() {
  // Only collectives and chunks are rewritten: seed the driver with them and
  // let it visit nothing else, so that unrelated IR is left as written.
  SmallVector<Operation *> ops;
  getOperation()->walk([&](Operation *op) {
    if ((op->hasTrait<Collective>() || isa<ChunkOp>(op)) && !isIssuedAsync(op))
      ops.push_back(op);
  });
  RewritePatternSet patterns(&getContext());
  populateCollectiveSimplificationPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  ExplainRewrites explainer;
  if (explain)
    config.setListener(&explainer);
  if (succeeded(applyOpPatternsGreedily(ops, std::move(patterns), config)))
    return success();
  return getOperation()->emitError(
      "cancelling and strength-reducing collectives did not converge");
}

SmallVector<Block *> FuseCollectivesPass::getScheduledBlocks() {
  SmallVector<Block *> blocks;
  getOperation()->walk([&](FunctionOpInterface function) {
    function->walk([&](Block *block) {
      if (!isa<StartOp>(block->getParentOp()))
        blocks.push_back(block);
    });
  });
  return blocks;
}

void FuseCollectivesPass::runOnOperation() {
  unsigned before = countCollectives(getOperation());
  if (failed(simplify()))
    return signalPassFailure();
  unsigned after = countCollectives(getOperation());
  LLVM_DEBUG(llvm::dbgs() << "simplification: " << before << " collectives in, "
                          << after << " left\n");
  unsigned buckets = 0, bucketed = 0, overlapped = 0;
  if (bucketBytes > 0)
    for (Block *block : getScheduledBlocks()) {
      BucketCounts counts = bucketCollectives(*block, bucketBytes, explain);
      buckets += counts.buckets;
      bucketed += counts.members;
    }
  else
    LLVM_DEBUG(llvm::dbgs() << "bucketing off (bucket-bytes 0)\n");
  LLVM_DEBUG(llvm::dbgs() << "bucketing: " << buckets << " buckets of "
                          << bucketed << " collectives\n");
  if (overlap)
    for (Block *block : getScheduledBlocks())
      overlapped += overlapCollectives(*block);
  LLVM_DEBUG(llvm::dbgs() << "overlap: " << overlapped
                          << " collectives split into start/wait"
                          << (overlap ? "" : " (overlap off)") << "\n");
  // MLIR's own pass statistics are compiled out of release builds of MLIR
  // (Debian's among them), so the counts are a remark. Cancelling and
  // strength reduction never add collectives.
  if (statistics)
    emitRemark(getOperation()->getLoc())
        << "dtensor-fuse-collectives: " << before << " collectives in, "
        << (before > after ? before - after : 0)
        << " removed by cancelling and strength reduction, " << buckets
        << " buckets of " << bucketed << " collectives, " << overlapped
        << " split for overlap";
}
