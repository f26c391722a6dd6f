//===- DropStateResults.cpp - entries update state in place ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_DROPSTATERESULTS
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-drop-state-results"

using namespace mlir;

namespace {

/// `value` without the casts that keep its buffer.
Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

LogicalResult dropStateResults(func::FuncOp func) {
  if (func.getNumResults() == 0)
    return success();
  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp op) { returns.push_back(op); });
  for (func::ReturnOp ret : returns)
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      auto arg = dyn_cast<BlockArgument>(stripCasts(value));
      if (!arg || arg.getOwner()->getParentOp() != func)
        return func.emitOpError("result #")
               << index
               << " of an entry is not one of its arguments' buffers: only "
                  "state updates may remain results after bufferization";
    }
  LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": dropping "
                          << func.getNumResults()
                          << " state results (each its argument's buffer)\n");
  for (func::ReturnOp ret : returns) {
    OpBuilder builder(ret);
    func::ReturnOp::create(builder, ret.getLoc());
    ret.erase();
  }
  if (failed(func.eraseResults(llvm::BitVector(func.getNumResults(), true))))
    return func.emitOpError("cannot drop the state results");
  // A materialization of an update computed in place copies the state onto
  // itself.
  func.walk([](memref::CopyOp copy) {
    if (stripCasts(copy.getSource()) == stripCasts(copy.getTarget())) {
      LLVM_DEBUG(llvm::dbgs() << "  erasing the copy of a buffer onto itself "
                                 "at "
                              << copy.getLoc() << "\n");
      copy.erase();
    }
  });
  return success();
}

struct DropStateResults
    : dtensor::codegen::impl::DropStateResultsBase<DropStateResults> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal() ||
          !func->hasAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName()))
        continue;
      if (failed(dropStateResults(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
