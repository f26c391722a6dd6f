//===- CollectiveSites.cpp - number the collectives for the trace ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gives each collective of a per-rank program its site number and records
// on the module what the communication report knows of each site, so that
// the runtime's trace can name the module a call came from and compare it
// with the compile-time figures.
//
//===----------------------------------------------------------------------===//

#include "CollectiveFacts.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace dtensor {
#define GEN_PASS_DEF_NUMBERCOLLECTIVESITES
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;

namespace {
struct NumberCollectiveSites
    : public dtensor::impl::NumberCollectiveSitesBase<NumberCollectiveSites> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    SymbolTableCollection tables;
    SmallVector<Attribute> sites;
    module->walk<WalkOrder::PreOrder>([&](FunctionOpInterface fn) {
      fn.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!op->hasTrait<Collective>())
          return;
        auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
        auto meshDims = op->getAttrOfType<DenseI64ArrayAttr>("mesh_dims");
        MeshOp mesh = meshRef ? lookupMesh(op, meshRef, &tables) : MeshOp();
        // The verifier resolved both when it checked the op.
        assert(mesh && meshDims && "collective without a verified mesh group");
        int64_t groupSize = mesh.getGroupSize(meshDims.asArrayRef());

        SmallVector<NamedAttribute> entry;
        entry.push_back(
            b.getNamedAttr("kind", b.getStringAttr(op->getName().stripDialect())));
        if (auto reduction = op->getAttrOfType<ReductionKindAttr>("reduction"))
          entry.push_back(b.getNamedAttr(
              "reduction",
              b.getStringAttr(stringifyReductionKind(reduction.getValue()))));
        if (StringAttr module = getModuleName(op, fn))
          entry.push_back(b.getNamedAttr("module", module));
        if (std::string position = getSourcePosition(op->getLoc());
            !position.empty())
          entry.push_back(
              b.getNamedAttr("position", b.getStringAttr(position)));
        if (std::optional<int64_t> bytes = getBytesSent(op, groupSize))
          entry.push_back(
              b.getNamedAttr("bytes_sent", b.getI64IntegerAttr(*bytes)));
        op->setAttr(DTensorDialect::getSiteAttrName(),
                    b.getI64IntegerAttr(static_cast<int64_t>(sites.size())));
        sites.push_back(b.getDictionaryAttr(entry));
      });
      return WalkResult::skip();
    });
    module->setAttr(DTensorDialect::getCollectiveSitesAttrName(),
                    b.getArrayAttr(sites));
  }
};
} // namespace
