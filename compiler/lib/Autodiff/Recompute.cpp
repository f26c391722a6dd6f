//===- Recompute.cpp - Activation checkpointing in the backward -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch.utils.checkpoint's effect on the gradient function: the tensors a
// checkpointed module instance computes are not kept from the forward for
// the backward; before the backward first reads one of them, the ops that
// compute it are cloned, reading the instance's inputs (the values its ops
// read that are defined outside it, which stay saved), and the backward
// reads the clones.
//
// The clones read their tensor inputs through dtensor.optimization_barrier:
// with the forward's operands they would be the forward ops again, for CSE
// to merge and for elementwise fusion to extend into the forward's
// producers. Scalars (a random op's stream key, from the step's seed, which
// is constant within a step) are read from the forward as they are, so a
// recomputed random op draws the numbers the forward drew.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Autodiff/BackwardMark.h"
#include "dtensor/Autodiff/Gradient.h"

#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dtensor-differentiate"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

namespace {

/// The values `op` reads: its operands and the values its regions read
/// from outside them.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  values.append(captured.begin(), captured.end());
  return values;
}

/// One checkpointed module instance: the tensors of it the backward reads
/// (the roots), and what recomputing them takes.
struct Instance {
  /// The first backward op that reads a root: the recomputation goes
  /// before it.
  Operation *firstUse = nullptr;
  llvm::SetVector<Value> roots;
  /// The forward ops that compute the roots, in forward order.
  SmallVector<Operation *> ops;
  /// The tensors those ops read from outside the instance.
  llvm::SetVector<Value> inputs;
};

class Recomputation {
public:
  Recomputation(Block &block, ArrayRef<Operation *> forward,
                llvm::function_ref<StringRef(Operation *)> checkpointOf)
      : block(block) {
    for (auto [index, op] : llvm::enumerate(forward)) {
      position[op] = index;
      StringRef instance = checkpointOf(op);
      if (!instance.empty())
        instanceOf[op] = instance;
    }
  }

  void run();

private:
  /// The instance that computes `value` as a tensor, or "".
  StringRef producerInstance(Value value) const {
    Operation *op = value.getDefiningOp();
    if (!op || !isa<RankedTensorType>(value.getType()))
      return {};
    return instanceOf.lookup(op);
  }
  void collectRoots(const llvm::DenseSet<Value> &saved);
  void close(Instance &instance, StringRef name);
  void emit(Instance &instance, mlir::IRMapping &mapping);

  Block &block;
  llvm::DenseMap<Operation *, size_t> position;
  llvm::DenseMap<Operation *, StringRef> instanceOf;
  llvm::MapVector<StringRef, Instance> instances;
  /// Each backward use of a root, to be pointed at its recomputation.
  SmallVector<OpOperand *> uses;
};

/// The roots of each instance: the tensors of it that the backward reads,
/// but those in `saved` (inputs of another instance's recomputation, which
/// stay saved as torch.utils.checkpoint saves a segment's inputs).
void Recomputation::collectRoots(const llvm::DenseSet<Value> &saved) {
  instances.clear();
  uses.clear();
  for (Operation &op : block.without_terminator()) {
    if (position.contains(&op))
      continue;
    op.walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands()) {
        StringRef name = producerInstance(use.get());
        if (name.empty() || saved.contains(use.get()))
          continue;
        Instance &instance = instances[name];
        if (!instance.firstUse)
          instance.firstUse = &op;
        instance.roots.insert(use.get());
        uses.push_back(&use);
      }
    });
  }
  for (auto &[name, instance] : instances)
    close(instance, name);
}

/// The ops of instance `name` that compute its roots, and their inputs.
void Recomputation::close(Instance &instance, StringRef name) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist(instance.roots.begin(), instance.roots.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *op = value.getDefiningOp();
    if (!ops.insert(op))
      continue;
    for (Value read : readValues(op))
      if (producerInstance(read) == name)
        worklist.push_back(read);
  }
  instance.ops.assign(ops.begin(), ops.end());
  llvm::sort(instance.ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  for (Operation *op : instance.ops)
    for (Value read : readValues(op))
      if (isa<RankedTensorType>(read.getType()) &&
          producerInstance(read) != name)
        instance.inputs.insert(read);
}

/// The barriers and clones of `instance` before its first backward use;
/// maps each root to its recomputed value.
void Recomputation::emit(Instance &instance, IRMapping &mapping) {
  OpBuilder b(instance.firstUse);
  for (Value input : instance.inputs) {
    Operation *producer = input.getDefiningOp();
    Location loc =
        producer ? producer->getLoc() : block.getParentOp()->getLoc();
    mapping.map(
        input,
        OptimizationBarrierOp::create(b, markBackward(loc), input).getResult());
  }
  for (Operation *op : instance.ops)
    b.clone(*op, mapping)->setLoc(markBackward(op->getLoc()));
}

void Recomputation::run() {
  // Inputs of one instance's recomputation may be another's roots (a
  // layer's output is the next layer's input): those stay saved.
  collectRoots({});
  llvm::DenseSet<Value> saved;
  for (auto &[name, instance] : instances)
    saved.insert(instance.inputs.begin(), instance.inputs.end());
  collectRoots(saved);
  IRMapping mapping;
  for (auto &[name, instance] : instances) {
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": recomputing " << instance.ops.size()
               << " op(s) of '" << name << "' from " << instance.inputs.size()
               << " input(s) for " << instance.roots.size()
               << " value(s) the backward reads\n");
    // One mapping for all: the instances' ops are disjoint, and an input
    // of one instance is never another's root (`saved`).
    emit(instance, mapping);
  }
  for (OpOperand *use : uses)
    use->set(mapping.lookup(use->get()));
}

} // namespace

void dtensor::autodiff::recomputeCheckpoints(
    Block &block, ArrayRef<Operation *> forward,
    llvm::function_ref<StringRef(Operation *)> checkpointOf) {
  Recomputation(block, forward, checkpointOf).run();
}
