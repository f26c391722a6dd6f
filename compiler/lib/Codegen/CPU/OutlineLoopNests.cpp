//===- OutlineLoopNests.cpp - one function per top-level loop nest --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LLVM's loop analyses walk the code around each loop of a function, so
// their cost grows with the square of a function's size: a deep model's
// per-rank program, hundreds of loop nests in one function, spent minutes in
// them. Each top-level loop nest moves into a function of its own.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "OutlinedFunction.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUOUTLINELOOPNESTS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-outline-loop-nests"

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// Replaces `loop` by a call of a new private function holding it.
void outlineLoopNest(scf::ForOp loop, StringRef name, SymbolTable &symbols) {
  // The values the nest uses from above: its bounds, step and initial
  // values, and what its body captures.
  llvm::SetVector<Value> captured;
  captured.insert(loop->operand_begin(), loop->operand_end());
  getUsedValuesDefinedAbove(loop.getRegion(), captured);

  Captures captures = splitCaptures(captured);
  OpBuilder builder(loop.getContext());
  IRMapping mapping;
  func::FuncOp func =
      createOutlinedFunction(builder, loop.getLoc(), name, captures,
                             loop.getResultTypes(), symbols, mapping);
  mapping.map(captures.arguments, func.getArguments());
  Operation *clone = builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loop.getLoc(), clone->getResults());

  LLVM_DEBUG(llvm::dbgs() << "outlining the loop nest at " << loop.getLoc()
                          << " into @" << func.getSymName() << " ("
                          << captures.arguments.size() << " arguments)\n");
  builder.setInsertionPoint(loop);
  auto call =
      func::CallOp::create(builder, loop.getLoc(), func, captures.arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
}

struct CpuOutlineLoopNests
    : dtensor::codegen::impl::CpuOutlineLoopNestsBase<CpuOutlineLoopNests> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // The functions there are now; the new ones hold a single nest each.
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      // A parallel nest's function holds its one nest already.
      if (function.isExternal() || function->hasAttr("dtensor_parallel_nest")) {
        LLVM_DEBUG(if (!function.isExternal()) llvm::dbgs()
                   << "skipping @" << function.getSymName()
                   << ": a parallel nest's function holds one nest\n");
        continue;
      }
      SmallVector<scf::ForOp> nests;
      for (Block &block : function.getBody())
        for (auto loop : block.getOps<scf::ForOp>())
          nests.push_back(loop);
      unsigned index = 0;
      for (scf::ForOp loop : nests)
        outlineLoopNest(loop,
                        (function.getName() + "_loop" + Twine(index++)).str(),
                        symbols);
    }
  }
};

} // namespace
