//===- FreeAfterLastUse.cpp - Free each buffer after its last use ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The buffer deallocation pipeline frees a block's buffers at its end, so a
// training step holds all its buffers at once; moving each free to the
// buffer's last use (BufferLastUse.h) brings the step's peak down to what
// it needs at once, which the runtime's buffer cache then reuses.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Analysis/BufferLastUse.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_FREEAFTERLASTUSE
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-free-after-last-use"

using namespace mlir;

namespace {

/// The op after which `dealloc` may free its buffer, or null to leave it.
Operation *findNewPlace(memref::DeallocOp dealloc) {
  Value buffer = dealloc.getMemref();
  Block *block = dealloc->getBlock();
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block) {
    LLVM_DEBUG(llvm::dbgs()
               << "left " << dealloc << ": not a memref.alloc of its block\n");
    return nullptr;
  }
  dtensor::BufferLastUse uses = dtensor::findBufferLastUse(buffer, *block);
  if (!uses.lastUse || uses.frees.size() != 1) {
    LLVM_DEBUG(llvm::dbgs() << "left " << dealloc << ": "
                            << (uses.lastUse ? "freed more than once"
                                             : "a use cannot be followed")
                            << "\n");
    return nullptr;
  }
  // The block's terminator (a yield of a region result that does not
  // leave the block's op) cannot have a free after it.
  if (uses.lastUse->hasTrait<OpTrait::IsTerminator>() ||
      !uses.lastUse->isBeforeInBlock(dealloc))
    return nullptr;
  return uses.lastUse;
}

struct FreeAfterLastUse
    : dtensor::codegen::impl::FreeAfterLastUseBase<FreeAfterLastUse> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs) {
      Operation *place = findNewPlace(dealloc);
      if (!place || place->getNextNode() == dealloc)
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "free of " << dealloc.getMemref() << " moved after "
                 << place->getName() << " at " << place->getLoc() << "\n");
      dealloc->moveAfter(place);
    }
  }
};

} // namespace
