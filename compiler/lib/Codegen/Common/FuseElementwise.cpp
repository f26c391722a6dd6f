//===- FuseElementwise.cpp - Fuse elementwise linalg ops on tensors -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise ops become linalg.generic and fuse into their consumers, so
// that a chain of them lowers to one loop nest. Contractions and fills stay
// named: the matmul-to-runtime pass recognises them after bufferization.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-fuse-elementwise"

using namespace mlir;

namespace {

/// Whether the op keeps its named form through bufferization.
bool staysNamed(linalg::LinalgOp op) {
  return isa<linalg::GenericOp, linalg::FillOp>(op) ||
         linalg::isaContractionOpInterface(op);
}

struct FuseElementwise
    : dtensor::codegen::impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());

    // Softmax is an aggregate of generics (max, sub+exp, sum, div).
    SmallVector<linalg::SoftmaxOp> softmaxes;
    func.walk([&](linalg::SoftmaxOp op) { softmaxes.push_back(op); });
    for (linalg::SoftmaxOp op : softmaxes) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts)) {
        op.emitError("cannot decompose softmax");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << "decomposed the softmax at " << op.getLoc()
                              << " into generics\n");
      rewriter.replaceOp(op, *parts);
    }

    SmallVector<linalg::LinalgOp> named;
    func.walk([&](linalg::LinalgOp op) {
      if (!staysNamed(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      LLVM_DEBUG(llvm::dbgs() << "generalizing '" << op->getName() << "' at "
                              << op.getLoc() << "\n");
      // Ops without a generic form (none today) simply stay named.
      (void)linalg::generalizeNamedOp(rewriter, op);
    }

    // Fuse a producer only into its single user: with several users the
    // fused body would recompute it for each. Never into a contraction
    // (e.g. a linear written as a generic): its body would no longer be a
    // product for matmul-to-runtime, and the producer would be recomputed
    // for every output element that reads it.
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          if (!producer || !producer->hasOneUse()) {
            LLVM_DEBUG(if (producer) llvm::dbgs()
                       << "not fusing '" << producer->getName() << "' at "
                       << producer->getLoc()
                       << ": it has several uses, each would recompute it\n");
            return false;
          }
          // A producer whose body reads its init (an accumulation into a
          // given tensor) is left alone: fused into a consumer with
          // reduction loops, its init would become an accumulator over those
          // loops and sum the producer's value once per reduced index.
          if (auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer))
            for (OpOperand &init : linalgProducer.getDpsInitsMutable())
              if (linalgProducer.payloadUsesValueFromOperand(&init)) {
                LLVM_DEBUG(llvm::dbgs() << "not fusing '" << producer->getName()
                                        << "' at " << producer->getLoc()
                                        << ": its body reads its init\n");
                return false;
              }
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          bool fuse = !consumer || !linalg::isaContractionOpInterface(consumer);
          LLVM_DEBUG({
            llvm::dbgs() << (fuse ? "fusing '" : "not fusing '")
                         << producer->getName() << "' at " << producer->getLoc()
                         << " into '" << fused->getOwner()->getName() << "' at "
                         << fused->getOwner()->getLoc();
            llvm::dbgs() << (fuse ? "\n"
                                  : ": a contraction stays a product "
                                    "for matmul-to-runtime\n");
          });
          return fuse;
        });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
