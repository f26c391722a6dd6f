//===- ParallelLoopNests.cpp - large parallel nests for the worker threads ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A top-level scf.parallel with enough work moves into a function of its
// own whose first dim's range is a parameter, so that the runtime can run
// pieces of that range on its threads (ParallelNestsToRuntime makes the
// call). The work estimate only decides whether a nest is worth a call;
// the runtime decides again with the trip count it sees.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "OutlinedFunction.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <optional>

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUPARALLELLOOPNESTS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-parallel-loop-nests"

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// A trip count that is not a constant counts as this many iterations.
constexpr int64_t kDynamicTrips = 16;

std::optional<int64_t> staticTrips(Value lower, Value upper, Value step) {
  std::optional<int64_t> lb = getConstantIntValue(lower),
                         ub = getConstantIntValue(upper),
                         st = getConstantIntValue(step);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *st - 1) / *st : 0;
}

int64_t tripsOrGuess(Value lower, Value upper, Value step) {
  return staticTrips(lower, upper, step).value_or(kDynamicTrips);
}

/// The work of one run of `block`: its ops, each loop's body times its
/// trip count.
int64_t blockWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      work += tripsOrGuess(loop.getLowerBound(), loop.getUpperBound(),
                           loop.getStep()) *
              blockWork(*loop.getBody());
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      int64_t trips = 1;
      for (auto [lb, ub, st] : llvm::zip(loop.getLowerBound(),
                                         loop.getUpperBound(), loop.getStep()))
        trips *= tripsOrGuess(lb, ub, st);
      work += trips * blockWork(*loop.getBody());
    } else if (!op.hasTrait<OpTrait::IsTerminator>()) {
      work += 1;
    }
  }
  return std::max<int64_t>(work, 1);
}

/// The dim whose range is split: the first whose trip count is not known
/// to be 1 (a batch of one is common).
unsigned splitDim(scf::ParallelOp loop) {
  for (unsigned dim = 0; dim + 1 < loop.getNumLoops(); ++dim) {
    std::optional<int64_t> trips =
        staticTrips(loop.getLowerBound()[dim], loop.getUpperBound()[dim],
                    loop.getStep()[dim]);
    if (!trips || *trips != 1)
      return dim;
  }
  return loop.getNumLoops() - 1;
}

/// The work of one iteration of `loop`'s dim `split`.
int64_t workPerIteration(scf::ParallelOp loop, unsigned split) {
  int64_t trips = 1;
  for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim)
    if (dim != split)
      trips *= tripsOrGuess(loop.getLowerBound()[dim],
                            loop.getUpperBound()[dim], loop.getStep()[dim]);
  return trips * blockWork(*loop.getBody());
}

bool callsFunctions(scf::ParallelOp loop) {
  return loop
      .walk([](Operation *op) {
        return isa<CallOpInterface>(op) ? WalkResult::interrupt()
                                        : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Replaces `loop` by a call of a new function running it over a range of
/// its dim `split` given as (begin, end, step) arguments.
void outline(scf::ParallelOp loop, unsigned split, int64_t work,
             StringRef name, SymbolTable &symbols) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop.getRegion(), captured);
  for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim) {
    if (dim == split)
      continue;
    captured.insert(loop.getLowerBound()[dim]);
    captured.insert(loop.getUpperBound()[dim]);
    captured.insert(loop.getStep()[dim]);
  }
  Captures captures = splitCaptures(
      captured, {loop.getLowerBound()[split], loop.getUpperBound()[split],
                 loop.getStep()[split]});
  OpBuilder builder(loop.getContext());
  IRMapping mapping;
  func::FuncOp func = createOutlinedFunction(builder, loop.getLoc(), name,
                                             captures, {}, symbols, mapping);
  func->setAttr("dtensor_parallel_nest", builder.getI64IntegerAttr(work));
  Block *body = &func.getBody().front();
  // The split dim's bounds and step are the first three arguments; every
  // other captured value is mapped in order. A value may appear both as a
  // bound of the first dim and elsewhere: the later mapping wins, which is
  // the same value.
  for (auto [index, value] : llvm::enumerate(captures.arguments))
    if (index >= 3)
      mapping.map(value, body->getArgument(index));
  auto clone = cast<scf::ParallelOp>(builder.clone(*loop, mapping));
  clone.getLowerBoundMutable()[split].assign(body->getArgument(0));
  clone.getUpperBoundMutable()[split].assign(body->getArgument(1));
  // A constant step stays a constant in the nest (LLVM vectorises only
  // loops whose step it knows); the runtime gets it as the third argument.
  if (Operation *constant = getClonableConstant(loop.getStep()[split])) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(clone);
    clone.getStepMutable()[split].assign(
        builder.clone(*constant)->getResult(0));
  } else {
    clone.getStepMutable()[split].assign(body->getArgument(2));
  }
  func::ReturnOp::create(builder, loop.getLoc());

  builder.setInsertionPoint(loop);
  func::CallOp::create(builder, loop.getLoc(), func, captures.arguments);
  loop->erase();
}

struct CpuParallelLoopNests
    : dtensor::codegen::impl::CpuParallelLoopNestsBase<CpuParallelLoopNests> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      struct Nest {
        scf::ParallelOp loop;
        unsigned split;
        int64_t work;
      };
      SmallVector<Nest> nests;
      for (Block &block : function.getBody())
        for (auto loop : block.getOps<scf::ParallelOp>()) {
          if (loop.getNumResults() != 0 || callsFunctions(loop)) {
            LLVM_DEBUG(llvm::dbgs()
                       << "keeping the parallel nest at " << loop.getLoc()
                       << " in @" << function.getSymName() << ": it "
                       << (loop.getNumResults() != 0 ? "has results"
                                                     : "calls functions")
                       << "\n");
            continue;
          }
          unsigned split = splitDim(loop);
          int64_t work = workPerIteration(loop, split);
          std::optional<int64_t> trips =
              staticTrips(loop.getLowerBound()[split],
                          loop.getUpperBound()[split], loop.getStep()[split]);
          if (trips && (*trips < 2 || *trips * work < grain)) {
            LLVM_DEBUG(
                llvm::dbgs()
                << "keeping the parallel nest at " << loop.getLoc() << " in @"
                << function.getSymName() << ": " << *trips
                << " iterations of dim " << split << " of work " << work
                << " each, "
                << (*trips < 2 ? "nothing to split" : "less than the grain")
                << " (grain " << grain << ")\n");
            continue;
          }
          nests.push_back({loop, split, work});
        }
      unsigned index = 0;
      for (const Nest &nest : nests) {
        std::string name =
            (function.getName() + "_pnest" + Twine(index++)).str();
        LLVM_DEBUG(llvm::dbgs()
                   << "outlining the parallel nest at " << nest.loop->getLoc()
                   << " into @" << name << ", split along dim " << nest.split
                   << ", work " << nest.work << " per iteration\n");
        outline(nest.loop, nest.split, nest.work, name, symbols);
      }
    }
  }
};

} // namespace
