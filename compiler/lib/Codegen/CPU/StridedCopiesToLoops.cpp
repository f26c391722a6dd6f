//===- StridedCopiesToLoops.cpp - no memrefCopy calls ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LLVM lowering of memref.copy calls MLIR's support library for copies
// it cannot do with one memcpy. A compiled program links only the dtensor
// runtime, so those copies become linalg.copy, lowered to loops like every
// other linalg op.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUSTRIDEDCOPIESTOLOOPS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-strided-copies-to-loops"

using namespace mlir;

namespace {
/// True when a memref's elements are one contiguous, row-major run.
bool isContiguous(Value value) {
  auto type = cast<MemRefType>(value.getType());
  return type.getLayout().isIdentity() ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

struct CpuStridedCopiesToLoops
    : dtensor::codegen::impl::CpuStridedCopiesToLoopsBase<
          CpuStridedCopiesToLoops> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (!isContiguous(copy.getSource()) || !isContiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      LLVM_DEBUG(llvm::dbgs() << "copy at " << copy.getLoc() << " from "
                              << copy.getSource().getType() << " to "
                              << copy.getTarget().getType()
                              << " is strided: becomes linalg.copy\n");
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
