//===- CollectiveBucketing.cpp - one call for many tensors ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Combines independent collectives of a block that differ only in their
// tensors into one variadic collective, so that many small messages travel
// as one: fewer calls, each paying its latency once.
//
// Reductions are first moved up to where their operands exist, so that
// buckets fill in the order the tensors become ready: a training step's
// gradient reductions, which the program lists after the whole backward
// (in parameter order), fill buckets in backward order, and each bucket is
// placed right after its last gradient, where the overlap phase issues it
// while the rest of the backward runs (DDP's gradient buckets).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Analysis/ElementBytes.h"
#include "FuseCollectives.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

// A phase of --dtensor-fuse-collectives.
#define DEBUG_TYPE "dtensor-fuse-collectives"

using namespace mlir;
using namespace dtensor;

namespace {
/// What collectives must share to travel in one call.
struct BucketKey {
  OperationName kind;
  /// The reduction kind of all_reduce and reduce_scatter, else null.
  Attribute reduction;
  Attribute mesh;
  Attribute meshDims;
  Type elementType;
  /// The gather or scatter dim, else none.
  std::optional<uint64_t> dim;

  bool operator==(const BucketKey &other) const {
    return kind == other.kind && reduction == other.reduction &&
           mesh == other.mesh && meshDims == other.meshDims &&
           elementType == other.elementType && dim == other.dim;
  }
};

/// A collective that may join a bucket, with what it costs there.
struct Candidate {
  Operation *op;
  BucketKey key;
  uint64_t bytes;
};
} // namespace

/// Bytes of a tensor of `type` on one rank; none when a dim is dynamic or the
/// element type has no fixed size.
static std::optional<uint64_t> getTensorBytes(RankedTensorType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> elementBytes =
      getStoredElementBytes(type.getElementType());
  if (!elementBytes)
    return std::nullopt;
  return llvm::SaturatingMultiply(static_cast<uint64_t>(type.getNumElements()),
                                  static_cast<uint64_t>(*elementBytes));
}

/// Bytes an op adds to a bucket: for each of its tensors, the full buffer
/// the collective works on (what all_reduce reduces, all_gather assembles
/// and reduce_scatter reduces before scattering). With uneven shards that
/// side usually stays static; when it is dynamic the op is not bucketed.
static std::optional<uint64_t> getBucketBytes(ValueRange buffers) {
  uint64_t total = 0;
  for (Value buffer : buffers) {
    std::optional<uint64_t> bytes =
        getTensorBytes(cast<RankedTensorType>(buffer.getType()));
    if (!bytes)
      return std::nullopt;
    total = llvm::SaturatingAdd(total, *bytes);
  }
  return total;
}

/// The candidate `op` is, or none when it cannot be bucketed.
static std::optional<Candidate> getCandidate(Operation *op) {
  auto make = [&](auto typed, Attribute reduction, std::optional<uint64_t> dim,
                  ValueRange buffers) -> std::optional<Candidate> {
    std::optional<uint64_t> bytes = getBucketBytes(buffers);
    if (!bytes)
      return std::nullopt;
    Type elementType =
        cast<RankedTensorType>(buffers.front().getType()).getElementType();
    BucketKey key{op->getName(),         reduction,   typed.getMeshAttr(),
                  typed.getMeshDimsAttr(), elementType, dim};
    return Candidate{op, key, *bytes};
  };
  if (auto reduce = dyn_cast<AllReduceOp>(op))
    return make(reduce, reduce.getReductionAttr(), std::nullopt,
                reduce.getInputs());
  if (auto gather = dyn_cast<AllGatherOp>(op))
    return make(gather, Attribute(), gather.getGatherDim(),
                gather.getResults());
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return make(scatter, scatter.getReductionAttr(), scatter.getScatterDim(),
                scatter.getInputs());
  return std::nullopt;
}

namespace {
/// A bucket being filled: its members in program order and the ops of the
/// block that depend on them.
class Bucket {
public:
  explicit Bucket(const Candidate &seed) : bytes(seed.bytes) {
    members.push_back(seed.op);
    dependents.insert(seed.op);
  }

  /// True when `op` uses a member's result, directly or through other ops.
  bool dependsOnMembers(Operation *op) const {
    return usesResultOf(op, dependents);
  }

  /// Records that `op` depends on a member.
  void addDependent(Operation *op) { dependents.insert(op); }

  /// Adds `candidate`, independent of the members, unless it would take the
  /// bucket over `limit` bytes (Full) or the combined op could not be placed
  /// (Skipped).
  enum class Join { Joined, Skipped, Full };
  Join tryJoin(const Candidate &candidate, uint64_t limit) {
    uint64_t joined = llvm::SaturatingAdd(bytes, candidate.bytes);
    if (joined > limit)
      return Join::Full;
    Operation *anchor = getAnchor(candidate.op);
    if (!canSinkDependentsAbove(anchor))
      return Join::Skipped;
    members.push_back(candidate.op);
    dependents.insert(candidate.op);
    bytes = joined;
    return Join::Joined;
  }

  /// Replaces the members by one variadic collective.
  void combine();

  size_t size() const { return members.size(); }
  /// Bytes per rank of the members' tensors together.
  uint64_t getBytes() const { return bytes; }

private:
  /// The op after which the combined op goes once `extra` joins: the last
  /// definition of a member operand, when it follows the first member
  /// (otherwise the combined op takes the first member's place, null).
  Operation *getAnchor(Operation *extra) const {
    Operation *anchor = nullptr;
    auto later = [&](Operation *def) {
      if (def && members.front()->isBeforeInBlock(def) &&
          (!anchor || anchor->isBeforeInBlock(def)))
        anchor = def;
    };
    for (Operation *member : members)
      later(findLastOperandDefinition(member));
    later(findLastOperandDefinition(extra));
    return anchor;
  }

  /// The ops that depend on a member and sit between the first member and
  /// `anchor`, excluding members; they must move below the combined op.
  SmallVector<Operation *> getDependentsAbove(Operation *anchor) const {
    SmallVector<Operation *> above;
    if (!anchor)
      return above;
    for (Operation *op = members.front()->getNextNode(); op != anchor;
         op = op->getNextNode())
      if (dependents.contains(op) && !llvm::is_contained(members, op))
        above.push_back(op);
    return above;
  }

  /// Moving an op below others is legal when it has no memory effects; its
  /// users move with it (they depend on the members too). No op moves below
  /// a dtensor.optimization_barrier: the recomputation it fences (activation
  /// checkpointing) would then run before that part of the backward, its
  /// values live across it.
  bool canSinkDependentsAbove(Operation *anchor) const {
    SmallVector<Operation *> above = getDependentsAbove(anchor);
    if (above.empty())
      return true;
    for (Operation *op = above.front(); op != anchor; op = op->getNextNode())
      if (isa<OptimizationBarrierOp>(op))
        return false;
    return llvm::all_of(above,
                        [](Operation *op) { return isMemoryEffectFree(op); });
  }

  SmallVector<Operation *> members;
  llvm::SmallPtrSet<Operation *, 16> dependents;
  uint64_t bytes;
};
} // namespace

void Bucket::combine() {
  Operation *anchor = getAnchor(members.back());
  SmallVector<Operation *> toSink = getDependentsAbove(anchor);

  SmallVector<Value> inputs;
  SmallVector<Type> resultTypes;
  SmallVector<Location> locs;
  for (Operation *member : members) {
    llvm::append_range(inputs, member->getOperands());
    llvm::append_range(resultTypes, member->getResultTypes());
    locs.push_back(member->getLoc());
  }
  Operation *first = members.front();
  OpBuilder builder(first->getContext());
  if (anchor)
    builder.setInsertionPointAfter(anchor);
  else
    builder.setInsertionPoint(first);
  Operation *combined = createVariadicCollectiveLike(
      builder, builder.getFusedLoc(locs), first, inputs, resultTypes);

  ResultRange results = combined->getResults();
  for (Operation *member : members) {
    member->replaceAllUsesWith(results.take_front(member->getNumResults()));
    results = results.drop_front(member->getNumResults());
    member->erase();
  }
  Operation *last = combined;
  for (Operation *op : toSink) {
    op->moveAfter(last);
    last = op;
  }
}

/// Moves every all_reduce and reduce_scatter of `block` that could join a
/// bucket up to right after the last definition of its operands, without
/// crossing an op collectives must not cross. They may pass other
/// collectives: every rank runs the same program, so the ranks' orders
/// still agree. They pass only collectives whose operands exist later:
/// collectives ready at the same point keep their program order.
static void moveReductionsToReadiness(Block &block) {
  SmallVector<Operation *> reductions;
  for (Operation &op : block)
    if (isa<AllReduceOp, ReduceScatterOp>(op) && getCandidate(&op))
      reductions.push_back(&op);
  // True when `a` (a last operand definition, null: the block's start) is
  // not after `b`.
  auto notAfter = [](Operation *a, Operation *b) {
    return !a || (b && (a == b || a->isBeforeInBlock(b)));
  };
  for (Operation *op : reductions) {
    Operation *lastDefinition = findLastOperandDefinition(op);
    Operation *point = op;
    for (Operation *prev = op->getPrevNode();
         prev && prev != lastDefinition && !isCommunicationBarrier(prev);
         prev = prev->getPrevNode()) {
      // A collective ready no later than `op` stays first.
      if ((prev->hasTrait<Collective>() || isa<StartOp>(prev)) &&
          notAfter(findLastOperandDefinition(prev), lastDefinition))
        break;
      point = prev;
    }
    if (point == op)
      continue;
    LLVM_DEBUG(llvm::dbgs()
               << "bucketing: '" << op->getName() << "' at " << op->getLoc()
               << " moves up to before '" << point->getName() << "' at "
               << point->getLoc() << ", where its operands exist\n");
    op->moveBefore(point);
  }
}

BucketCounts dtensor::bucketCollectives(Block &block, uint64_t bucketBytes,
                                        bool explain) {
  BucketCounts counts;
  moveReductionsToReadiness(block);
  Operation *next = block.empty() ? nullptr : &block.front();
  while (Operation *seedOp = next) {
    next = seedOp->getNextNode();
    std::optional<Candidate> seed = getCandidate(seedOp);
    if (!seed && seedOp->hasTrait<Collective>())
      LLVM_DEBUG(llvm::dbgs() << "bucketing: not a candidate (no all_reduce, "
                                 "all_gather or reduce_scatter of static "
                                 "size): "
                              << OpWithFlags(seedOp) << "\n");
    if (!seed)
      continue;
    if (seed->bytes > bucketBytes) {
      LLVM_DEBUG(llvm::dbgs()
                 << "bucketing: " << seed->bytes << " bytes, over bucket-bytes "
                 << bucketBytes << ", travel alone: " << OpWithFlags(seedOp)
                 << "\n");
      continue;
    }
    Bucket bucket(*seed);
    // Next-fit in program order: scan forward, take every compatible
    // independent candidate, and stop at the first that would overflow the
    // bucket or at an op collectives must not cross.
    for (Operation *op = next; op; op = op->getNextNode()) {
      if (isCommunicationBarrier(op)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "bucketing: the bucket seeded at " << seedOp->getLoc()
                   << " stops at '" << op->getName() << "' at " << op->getLoc()
                   << ", which collectives must not cross\n");
        break;
      }
      if (bucket.dependsOnMembers(op)) {
        bucket.addDependent(op);
        continue;
      }
      std::optional<Candidate> candidate = getCandidate(op);
      if (!candidate || !(candidate->key == seed->key))
        continue;
      Bucket::Join join = bucket.tryJoin(*candidate, bucketBytes);
      LLVM_DEBUG({
        if (join == Bucket::Join::Full)
          llvm::dbgs() << "bucketing: the bucket seeded at " << seedOp->getLoc()
                       << " is full (" << bucket.getBytes() << " + "
                       << candidate->bytes << " bytes > " << bucketBytes
                       << ") at " << op->getLoc() << "\n";
        else if (join == Bucket::Join::Skipped)
          llvm::dbgs() << "bucketing: " << op->getLoc()
                       << " skipped: ops with memory effects depend on the "
                          "bucket before the combined op's place\n";
      });
      if (join == Bucket::Join::Full)
        break;
    }
    if (bucket.size() < 2)
      continue;
    LLVM_DEBUG(llvm::dbgs()
               << "bucketing: " << bucket.size() << " '" << seedOp->getName()
               << "' ops from " << seedOp->getLoc() << " on become one call of "
               << bucket.getBytes() << " bytes per rank\n");
    // Resume before the combined op: it may have moved below candidates not
    // yet tried as seeds, and it may take more members itself.
    Operation *before = seedOp->getPrevNode();
    ++counts.buckets;
    counts.members += bucket.size();
    if (explain)
      emitRemark(seedOp->getLoc())
          << "explain: bucketing: " << bucket.size() << " independent "
          << seedOp->getName().getStringRef()
          << " ops over the same groups become one call of "
          << bucket.getBytes() << " bytes per rank (bucket-bytes "
          << bucketBytes << ")";
    bucket.combine();
    next = before ? before->getNextNode() : &block.front();
  }
  return counts;
}
