//===- OutlineLoopNests.cpp - one function per top-level loop nest --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LLVM's loop analyses walk the code around each loop of a function, so
// their cost grows with the square of a function's size: a deep model's
// per-rank program, hundreds of loop nests in one function, spent minutes in
// them. Each top-level loop nest moves into a function of its own.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUOUTLINELOOPNESTS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

using namespace mlir;

namespace {

/// Replaces `loop` by a call of a new private function holding it.
void outlineLoopNest(scf::ForOp loop, StringRef name, SymbolTable &symbols) {
  // The values the nest uses from above: its bounds, step and initial
  // values, and what its body captures.
  llvm::SetVector<Value> captured;
  captured.insert(loop->operand_begin(), loop->operand_end());
  getUsedValuesDefinedAbove(loop.getRegion(), captured);

  // Constants are cloned, so that the nest keeps its static bounds and
  // steps and identical nests have identical signatures.
  SmallVector<Operation *> constants;
  SmallVector<Value> arguments;
  for (Value value : captured) {
    Operation *producer = value.getDefiningOp();
    if (producer && producer->hasTrait<OpTrait::ConstantLike>() &&
        producer->getNumOperands() == 0 && producer->getNumRegions() == 0)
      constants.push_back(producer);
    else
      arguments.push_back(value);
  }

  MLIRContext *context = loop.getContext();
  auto type = FunctionType::get(context, ValueRange(arguments).getTypes(),
                                loop.getResultTypes());
  OpBuilder builder(context);
  auto func = func::FuncOp::create(builder, loop.getLoc(), name, type);
  func.setPrivate();
  // One call site each: LLVM's inliner would put the nest straight back.
  // (The func-to-LLVM conversion keeps `passthrough`, LLVM's own function
  // attributes, and drops a `no_inline` on func.func.)
  func->setAttr("passthrough",
                builder.getArrayAttr({builder.getStringAttr("noinline")}));
  symbols.insert(func);

  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  mapping.map(arguments, body->getArguments());
  Operation *clone = builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loop.getLoc(), clone->getResults());

  builder.setInsertionPoint(loop);
  auto call = func::CallOp::create(builder, loop.getLoc(), func, arguments);
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
      if (function.isExternal() || function->hasAttr("dtensor_parallel_nest"))
        continue;
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
