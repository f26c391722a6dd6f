//===- ApproximateTanh.cpp - tanh as a rational polynomial ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// glibc's vector math library has no tanh: a loop of f32 tanh (GELU's tanh
// form) called the scalar tanhf once per element, most of an MLP's step.
// Upstream MLIR's rational approximation is plain arithmetic, which LLVM's
// loop vectoriser turns into vector code.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUAPPROXIMATETANH
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-approximate-tanh"

using namespace mlir;

namespace {

struct CpuApproximateTanh
    : dtensor::codegen::impl::CpuApproximateTanhBase<CpuApproximateTanh> {
  void runOnOperation() override {
    // Only tanh: the other approximations are less accurate than libmvec,
    // which already vectorises them. Scalars only, as loops of linalg ops
    // have them (vectors would need the vector dialect).
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    // Rewrites the tanh ops and nothing else (no folding of their users).
    SmallVector<Operation *> tanhs;
    getOperation().walk([&](math::TanhOp op) {
      if (op.getType().isF32())
        tanhs.push_back(op);
      else
        LLVM_DEBUG(llvm::dbgs() << "keeping the tanh at " << op.getLoc() << ": "
                                << op.getType() << " is not a scalar f32\n");
    });
    LLVM_DEBUG(if (!tanhs.empty()) llvm::dbgs()
               << "@" << getOperation().getSymName() << ": approximating "
               << tanhs.size() << " f32 tanh ops\n");
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(tanhs, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
