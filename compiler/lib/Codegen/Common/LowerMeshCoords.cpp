//===- LowerMeshCoords.cpp - mesh_coord to runtime calls ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_LOWERMESHCOORDS
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-lower-mesh-coords"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

struct LowerMeshCoords
    : dtensor::codegen::impl::LowerMeshCoordsBase<LowerMeshCoords> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<MeshCoordOp> coords;
    module.walk([&](MeshCoordOp op) { coords.push_back(op); });
    for (MeshCoordOp op : coords) {
      std::optional<int64_t> meshId = lookupMeshId(module, op.getMesh());
      if (!meshId) {
        op.emitOpError("has no mesh id; run "
                       "--dtensor-prepare-collectives first");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << "lowering " << OpWithFlags(op) << " to "
                              << op.getMeshDims().size()
                              << " dtensor_rt_mesh_coord calls (mesh id "
                              << *meshId << ")\n");
      OpBuilder builder(op);
      Location loc = op.getLoc();
      for (auto [meshDim, result] :
           llvm::zip(op.getMeshDims(), op.getCoords())) {
        Value coord = callRuntime(builder, loc, "dtensor_rt_mesh_coord",
                                  builder.getI64Type(),
                                  {createI64(builder, loc, *meshId),
                                   createI64(builder, loc, meshDim)})
                          .getResult(0);
        result.replaceAllUsesWith(arith::IndexCastOp::create(
            builder, loc, builder.getIndexType(), coord));
      }
      op.erase();
    }
  }
};

} // namespace
