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
        CollectiveGroup group = getCollectiveGroup(op, tables);

        SmallVector<NamedAttribute> entry;
        entry.push_back(
            b.getNamedAttr("kind", b.getStringAttr(op->getName().stripDialect())));
        if (group.reduction)
          entry.push_back(b.getNamedAttr(
              "reduction", b.getStringAttr(stringifyReductionKind(
                               group.reduction.getValue()))));
        if (StringAttr module = getModuleName(op, fn))
          entry.push_back(b.getNamedAttr("module", module));
        if (std::string position = getSourcePosition(op->getLoc());
            !position.empty())
          entry.push_back(
              b.getNamedAttr("position", b.getStringAttr(position)));
        if (std::optional<int64_t> bytes = getBytesSent(op, group.groupSize))
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
