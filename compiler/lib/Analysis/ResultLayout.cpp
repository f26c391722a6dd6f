//===- ResultLayout.cpp - the layout an op gives its result ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/ResultLayout.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor;

LayoutAttr dtensor::getResultLayout(OpResult result) {
  Operation *op = result.getOwner();
  if (auto distribute = dyn_cast<DistributeOp>(op))
    return distribute.getLayout();
  if (auto toLayout = dyn_cast<ToLayoutOp>(op))
    return toLayout.getLayout();
  if (auto redistribute = dyn_cast<RedistributeOp>(op))
    return redistribute.getTarget();
  auto layouts =
      op->getAttrOfType<ArrayAttr>(DTensorDialect::getResultLayoutsAttrName());
  if (!layouts || layouts.size() != op->getNumResults())
    return {};
  return dyn_cast<LayoutAttr>(layouts[result.getResultNumber()]);
}
