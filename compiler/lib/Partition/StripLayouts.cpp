//===- StripLayouts.cpp - the single-device form of a global program ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// At the global level, distribute and redistribute do not change values;
// only where they live. Dropping them and the layouts leaves the program one
// device runs, which is what the compiled N-rank program must agree with.
// A local map's body is per-rank code: one device runs it once per mesh
// position (EmulateLocalMaps.cpp).
//
//===----------------------------------------------------------------------===//

#include "EmulateLocalMaps.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Partition/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_STRIPLAYOUTS
#include "dtensor/Partition/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-strip-layouts"

using namespace mlir;
using namespace dtensor;

namespace {
struct StripLayoutsPass
    : public dtensor::impl::StripLayoutsBase<StripLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(emulateLocalMaps(module)))
      return signalPassFailure();
    // Local-level ops have no single-device meaning.
    WalkResult local = module.walk([](Operation *op) {
      if (op->hasTrait<dtensor::Collective>() ||
          isa<ChunkOp, MeshCoordOp, StartOp, WaitOp>(op)) {
        op->emitOpError() << "belongs to a per-rank program, which has no "
                             "single-device form; strip layouts from the "
                             "global program instead";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (local.wasInterrupted())
      return signalPassFailure();

    module.walk([](Operation *op) {
      if (isa<DistributeOp, RedistributeOp, ToLayoutOp>(op)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "dropping '" << op->getName() << "' at " << op->getLoc()
                   << ": its result is its operand\n");
        op->getResult(0).replaceAllUsesWith(op->getOperand(0));
        op->erase();
        return;
      }
      op->removeAttr(DTensorDialect::getResultLayoutsAttrName());
      if (auto function = dyn_cast<FunctionOpInterface>(op)) {
        for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
          function.removeArgAttr(i, DTensorDialect::getLayoutAttrName());
        for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
          function.removeResultAttr(
              i, StringAttr::get(op->getContext(),
                                 DTensorDialect::getLayoutAttrName()));
      }
    });
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>())) {
      LLVM_DEBUG(llvm::dbgs() << "erasing mesh @" << mesh.getSymName() << "\n");
      mesh.erase();
    }
  }
};
} // namespace
