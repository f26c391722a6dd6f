//===- CollectiveSimplification.cpp - cancel, reduce ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rewrite patterns on pairs of collectives: a collective followed by its
// inverse cancels out, and some pairs are one collective in disguise. Each
// pattern fires only when the types prove the rewrite exact; docs/
// collectives.md gives the argument for each.
//
//===----------------------------------------------------------------------===//

#include "FuseCollectives.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "llvm/Support/Debug.h"

// The patterns run within --dtensor-fuse-collectives.
#define DEBUG_TYPE "dtensor-fuse-collectives"

using namespace mlir;
using namespace dtensor;

/// True when `a` and `b` act on the same groups with the same order of ranks
/// within a group: the same mesh and the same mesh dims in the same order.
template <typename OpA, typename OpB>
static bool overSameGroups(OpA a, OpB b) {
  return a.getMeshAttr() == b.getMeshAttr() &&
         a.getMeshDims() == b.getMeshDims();
}

/// True when the per-rank pieces of dim `dim` of `value` are the pieces
/// dtensor.chunk over the groups of `groups` would cut from their
/// concatenation, so that gathering them and chunking the result gives every
/// rank its own piece back. A static size is the same on every rank (an even
/// split); a dynamic one is only known to be a chunk when an op that splits
/// like chunk, over the same groups, produced it.
template <typename GroupOp>
static bool hasChunkLayout(Value value, int64_t dim, GroupOp groups) {
  if (!cast<RankedTensorType>(value.getType()).isDynamicDim(dim))
    return true;
  Operation *def = value.getDefiningOp();
  if (auto chunk = dyn_cast_or_null<ChunkOp>(def))
    return chunk.getDim() == static_cast<uint64_t>(dim) &&
           overSameGroups(chunk, groups);
  if (auto scatter = dyn_cast_or_null<ReduceScatterOp>(def))
    return scatter.getScatterDim() == static_cast<uint64_t>(dim) &&
           overSameGroups(scatter, groups);
  if (auto allToAll = dyn_cast_or_null<AllToAllOp>(def))
    return allToAll.getSplitDim() == static_cast<uint64_t>(dim) &&
           overSameGroups(allToAll, groups);
  return false;
}

/// Replaces the variadic collective `op` by one that keeps only its used
/// input/result pairs, or erases it when no result is used.
static void dropUnusedPairs(PatternRewriter &rewriter, Operation *op) {
  SmallVector<Value> inputs, used;
  SmallVector<Type> types;
  for (auto [input, result] :
       llvm::zip_equal(op->getOperands(), op->getResults())) {
    if (result.use_empty())
      continue;
    inputs.push_back(input);
    used.push_back(result);
    types.push_back(result.getType());
  }
  if (!used.empty()) {
    Operation *kept =
        createVariadicCollectiveLike(rewriter, op->getLoc(), op, inputs, types);
    for (auto [result, replacement] : llvm::zip_equal(used, kept->getResults()))
      rewriter.replaceAllUsesWith(result, replacement);
  }
  rewriter.eraseOp(op);
}

namespace {

/// chunk(all_gather(x, d, M), d, M) -> x, when x is chunk-shaped along d.
struct ChunkOfAllGather : OpRewritePattern<ChunkOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ChunkOp chunk,
                                PatternRewriter &rewriter) const override {
    auto gathered = dyn_cast<OpResult>(chunk.getInput());
    auto gather = gathered ? dyn_cast<AllGatherOp>(gathered.getOwner())
                           : AllGatherOp();
    if (!gather || !overSameGroups(chunk, gather) ||
        chunk.getDim() != gather.getGatherDim())
      return rewriter.notifyMatchFailure(chunk, "not a chunk of an all_gather "
                                                "over the same groups and dim");
    Value shard = gather.getInputs()[gathered.getResultNumber()];
    if (shard.getType() != chunk.getType() ||
        !hasChunkLayout(shard, chunk.getDim(), gather))
      return rewriter.notifyMatchFailure(
          chunk, "the gathered shards are not provably chunks");
    LLVM_DEBUG(llvm::dbgs() << "chunk-of-all-gather: " << OpWithFlags(chunk)
                            << " replaced by the shard the all_gather at "
                            << gather.getLoc() << " gathers\n");
    rewriter.replaceOp(chunk, shard);
    return success();
  }
};

/// all_gather(chunk(x, d, M), d, M) -> x, for every such input/result pair
/// of a variadic all_gather; the other pairs stay in one all_gather.
struct AllGatherOfChunk : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllGatherOp gather,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(gather))
      return rewriter.notifyMatchFailure(gather, "issued by a dtensor.start");
    bool changed = false;
    for (auto [input, result] :
         llvm::zip_equal(gather.getInputs(), gather.getResults())) {
      auto chunk = input.getDefiningOp<ChunkOp>();
      if (!chunk || result.use_empty() || !overSameGroups(chunk, gather) ||
          chunk.getDim() != gather.getGatherDim() ||
          chunk.getInput().getType() != result.getType())
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "all-gather-of-chunk: result #" << result.getResultNumber()
                 << " of " << OpWithFlags(gather)
                 << " replaced by the value chunked at " << chunk.getLoc()
                 << "\n");
      rewriter.replaceAllUsesWith(result, chunk.getInput());
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(gather, "no gathered chunk");
    dropUnusedPairs(rewriter, gather);
    return success();
  }
};

/// all_to_all(all_to_all(x, split s, concat c), split c, concat s) -> x over
/// the same groups, when x is chunk-shaped along c.
struct AllToAllRoundTrip : OpRewritePattern<AllToAllOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllToAllOp back,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(back))
      return rewriter.notifyMatchFailure(back, "issued by a dtensor.start");
    auto there = back.getInput().getDefiningOp<AllToAllOp>();
    if (!there || !overSameGroups(there, back) ||
        back.getSplitDim() != there.getConcatDim() ||
        back.getConcatDim() != there.getSplitDim())
      return rewriter.notifyMatchFailure(back, "does not undo its input");
    Value original = there.getInput();
    if (original.getType() != back.getType() ||
        !hasChunkLayout(original, there.getConcatDim(), there))
      return rewriter.notifyMatchFailure(
          back, "the original shards are not provably chunks");
    LLVM_DEBUG(llvm::dbgs() << "all-to-all-round-trip: " << OpWithFlags(back)
                            << " undoes the all_to_all at " << there.getLoc()
                            << "; replaced by its input\n");
    rewriter.replaceOp(back, original);
    return success();
  }
};

/// all_reduce(x) whose every user is chunk(., d, M) over its groups ->
/// reduce_scatter(x, d, M): reduce_scatter is defined as exactly that.
struct AllReduceOfChunks : OpRewritePattern<AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllReduceOp reduce,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(reduce))
      return rewriter.notifyMatchFailure(reduce, "issued by a dtensor.start");
    std::optional<uint64_t> dim;
    SmallVector<Type> scatteredTypes;
    for (Value result : reduce.getResults()) {
      Type scattered;
      for (Operation *user : result.getUsers()) {
        auto chunk = dyn_cast<ChunkOp>(user);
        if (!chunk || !overSameGroups(chunk, reduce) ||
            (dim && *dim != chunk.getDim()) ||
            (scattered && scattered != chunk.getType()))
          return rewriter.notifyMatchFailure(
              reduce, "a user is not the same chunk over the same groups");
        dim = chunk.getDim();
        scattered = chunk.getType();
      }
      if (!scattered)
        return rewriter.notifyMatchFailure(reduce, "a result is unused");
      scatteredTypes.push_back(scattered);
    }

    auto scatter = ReduceScatterOp::create(
        rewriter, reduce.getLoc(), scatteredTypes, reduce.getInputs(),
        reduce.getReduction(), *dim, reduce.getMesh(), reduce.getMeshDims());
    LLVM_DEBUG(llvm::dbgs() << "all-reduce-of-chunks: " << OpWithFlags(reduce)
                            << " and its chunks replaced by "
                            << OpWithFlags(scatter) << "\n");
    for (auto [result, replacement] :
         llvm::zip_equal(reduce.getResults(), scatter.getResults()))
      for (Operation *chunk : llvm::make_early_inc_range(result.getUsers()))
        rewriter.replaceOp(chunk, replacement);
    rewriter.eraseOp(reduce);
    return success();
  }
};

/// all_gather(reduce_scatter(x, d, M), d, M) -> all_reduce(x, M): one call
/// instead of two. Other users of the reduce_scatter get the same piece from
/// a chunk of the all_reduce, which is what reduce_scatter is.
struct AllGatherOfReduceScatter : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllGatherOp gather,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(gather) || gather.getInputs().size() != 1)
      return rewriter.notifyMatchFailure(gather, "not one synchronous tensor");
    auto scatter = gather.getInputs()[0].getDefiningOp<ReduceScatterOp>();
    if (!scatter || scatter.getInputs().size() != 1 ||
        !overSameGroups(scatter, gather) ||
        scatter.getScatterDim() != gather.getGatherDim())
      return rewriter.notifyMatchFailure(
          gather, "not a gather of one reduce_scatter over the same groups "
                  "and dim");
    Value partial = scatter.getInputs()[0];
    if (partial.getType() != gather.getResults()[0].getType())
      return rewriter.notifyMatchFailure(gather,
                                         "does not restore the input type");

    Location loc = rewriter.getFusedLoc({scatter.getLoc(), gather.getLoc()});
    // At the reduce_scatter, so that the chunk below dominates its users.
    rewriter.setInsertionPoint(scatter);
    auto reduce =
        AllReduceOp::create(rewriter, loc, partial, scatter.getReduction(),
                            scatter.getMesh(), scatter.getMeshDims());
    LLVM_DEBUG(llvm::dbgs()
               << "all-gather-of-reduce-scatter: " << OpWithFlags(gather)
               << " of the reduce_scatter at " << scatter.getLoc()
               << " replaced by " << OpWithFlags(reduce)
               << (scatter->hasOneUse()
                       ? "\n"
                       : "; the reduce_scatter's other users get "
                         "a chunk of it\n"));
    rewriter.replaceOp(gather, reduce);
    if (scatter->use_empty()) {
      rewriter.eraseOp(scatter);
      return success();
    }
    Value reduced = reduce.getResults()[0];
    auto piece = ChunkOp::create(rewriter, scatter.getLoc(),
                                 scatter.getResults()[0].getType(), reduced,
                                 scatter.getScatterDim(), scatter.getMesh(),
                                 scatter.getMeshDims());
    rewriter.replaceOp(scatter, piece);
    return success();
  }
};

/// Drops the input/result pairs of a variadic collective whose result is
/// unused (a collective with no used result at all is erased as dead).
template <typename OpTy>
struct DropUnusedPairs : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(op))
      return rewriter.notifyMatchFailure(op, "issued by a dtensor.start");
    if (op->use_empty() || llvm::none_of(op->getResults(), [](Value result) {
          return result.use_empty();
        }))
      return rewriter.notifyMatchFailure(op, "no pair to drop");
    LLVM_DEBUG(llvm::dbgs() << "drop-unused-pairs: dropping the unused "
                               "results of "
                            << OpWithFlags(op) << "\n");
    dropUnusedPairs(rewriter, op);
    return success();
  }
};

/// A collective or chunk over groups of one rank communicates nothing and
/// changes nothing: each result is its input (when the types say so).
template <typename OpTy>
struct SingleRankGroups : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (isIssuedAsync(op))
      return rewriter.notifyMatchFailure(op, "issued by a dtensor.start");
    MeshOp mesh = lookupMesh(op, op.getMeshAttr());
    if (!mesh || mesh.getGroupSize(op.getMeshDims()) != 1)
      return rewriter.notifyMatchFailure(op, "groups of several ranks");
    if (op->getOperandTypes() != op->getResultTypes())
      return rewriter.notifyMatchFailure(op, "types differ");
    LLVM_DEBUG(llvm::dbgs() << "single-rank-groups: " << OpWithFlags(op)
                            << " communicates nothing; replaced by its "
                               "operands\n");
    rewriter.replaceOp(op, op->getOperands());
    return success();
  }
};

} // namespace

void dtensor::populateCollectiveSimplificationPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ChunkOfAllGather, AllGatherOfChunk, AllToAllRoundTrip,
               AllReduceOfChunks, AllGatherOfReduceScatter,
               DropUnusedPairs<AllReduceOp>, DropUnusedPairs<AllGatherOp>,
               DropUnusedPairs<ReduceScatterOp>, SingleRankGroups<AllReduceOp>,
               SingleRankGroups<AllGatherOp>, SingleRankGroups<ReduceScatterOp>,
               SingleRankGroups<AllToAllOp>, SingleRankGroups<BroadcastOp>,
               SingleRankGroups<ChunkOp>>(patterns.getContext());
}
