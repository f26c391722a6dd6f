//===- CollectiveFacts.cpp - what the reports say about a collective ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CollectiveFacts.h"

#include "dtensor/Analysis/ElementBytes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

//===----------------------------------------------------------------------===//
// Group
//===----------------------------------------------------------------------===//

CollectiveGroup dtensor::getCollectiveGroup(Operation *op,
                                            SymbolTableCollection &tables) {
  CollectiveGroup group;
  group.mesh = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  group.meshDims = op->getAttrOfType<DenseI64ArrayAttr>("mesh_dims");
  group.reduction = op->getAttrOfType<ReductionKindAttr>("reduction");
  MeshOp mesh = group.mesh ? lookupMesh(op, group.mesh, &tables) : MeshOp();
  // The verifier resolved both when it checked the op.
  assert(mesh && group.meshDims && "collective without a verified mesh group");
  group.groupSize = mesh.getGroupSize(group.meshDims.asArrayRef());
  return group;
}

//===----------------------------------------------------------------------===//
// Byte model
//===----------------------------------------------------------------------===//

std::optional<std::tuple<layout::CollectiveKind, int64_t, int64_t>>
dtensor::getCollectiveKind(Operation *op) {
  using layout::CollectiveKind;
  return TypeSwitch<Operation *, std::optional<std::tuple<CollectiveKind,
                                                          int64_t, int64_t>>>(
             op)
      .Case([](AllReduceOp) {
        return std::make_tuple(CollectiveKind::AllReduce, int64_t(0),
                               int64_t(0));
      })
      .Case([](BroadcastOp) {
        return std::make_tuple(CollectiveKind::Broadcast, int64_t(0),
                               int64_t(0));
      })
      .Case([](AllGatherOp gather) {
        return std::make_tuple(CollectiveKind::AllGather,
                               static_cast<int64_t>(gather.getGatherDim()),
                               int64_t(0));
      })
      .Case([](ReduceScatterOp scatter) {
        return std::make_tuple(CollectiveKind::ReduceScatter,
                               static_cast<int64_t>(scatter.getScatterDim()),
                               int64_t(0));
      })
      .Case([](AllToAllOp allToAll) {
        return std::make_tuple(CollectiveKind::AllToAll,
                               static_cast<int64_t>(allToAll.getSplitDim()),
                               static_cast<int64_t>(allToAll.getConcatDim()));
      })
      .Case([](ShiftOp shift) {
        return std::make_tuple(CollectiveKind::Shift,
                               static_cast<int64_t>(shift.getDim()),
                               static_cast<int64_t>(shift.getDimSize()));
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Bytes each rank sends to turn `input` into `result` (one operand/result
/// pair of `op`) over a group of `n` ranks, by layout::ringBytesSent (the
/// runtime's trace measures with the same model). nullopt when a size the
/// model needs is not static or the element has no fixed width.
static std::optional<int64_t> getPairBytesSent(Operation *op,
                                               RankedTensorType input,
                                               RankedTensorType result,
                                               int64_t n) {
  auto kind = getCollectiveKind(op);
  std::optional<int64_t> elementBytes =
      getStoredElementBytes(input.getElementType());
  if (!kind || !elementBytes)
    return std::nullopt;
  auto [collective, dim, second] = *kind;
  bool shift = collective == layout::CollectiveKind::Shift;
  return layout::ringBytesSent(
      collective, std::vector<int64_t>(input.getShape()),
      std::vector<int64_t>(result.getShape()), dim, shift ? -1 : second, n,
      *elementBytes, shift ? second : layout::kDynamic);
}

std::optional<int64_t> dtensor::getBytesSent(Operation *op, int64_t n) {
  auto isRankedTensor = [](Value value) {
    return isa<RankedTensorType>(value.getType());
  };
  SmallVector<Value> inputs(
      llvm::make_filter_range(op->getOperands(), isRankedTensor));
  SmallVector<Value> results(
      llvm::make_filter_range(op->getResults(), isRankedTensor));
  if (inputs.size() != results.size())
    return std::nullopt;
  int64_t total = 0;
  for (auto [input, result] : llvm::zip_equal(inputs, results)) {
    std::optional<int64_t> bytes =
        getPairBytesSent(op, cast<RankedTensorType>(input.getType()),
                         cast<RankedTensorType>(result.getType()), n);
    if (!bytes)
      return std::nullopt;
    total += *bytes;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Module names
//===----------------------------------------------------------------------===//

/// The module name a location carries: the innermost NameLoc along the
/// first path that has one, where a CallSiteLoc's callee comes before its
/// caller and a FusedLoc's parts come in order. Null when there is none.
static StringAttr findModuleName(Location loc) {
  return TypeSwitch<LocationAttr, StringAttr>(loc)
      .Case([](NameLoc named) {
        if (StringAttr inner = findModuleName(named.getChildLoc()))
          return inner;
        return named.getName().empty() ? StringAttr() : named.getName();
      })
      .Case([](CallSiteLoc callSite) {
        if (StringAttr callee = findModuleName(callSite.getCallee()))
          return callee;
        return findModuleName(callSite.getCaller());
      })
      .Case([](FusedLoc fused) {
        for (Location part : fused.getLocations())
          if (StringAttr name = findModuleName(part))
            return name;
        return StringAttr();
      })
      .Case([](OpaqueLoc opaque) {
        return findModuleName(opaque.getFallbackLocation());
      })
      .Default([](LocationAttr) { return StringAttr(); });
}

StringAttr dtensor::getModuleName(Operation *op, Operation *fn) {
  for (Operation *at = op; at && at != fn; at = at->getParentOp())
    if (StringAttr name = findModuleName(at->getLoc()))
      return name;
  return {};
}

//===----------------------------------------------------------------------===//
// Source positions
//===----------------------------------------------------------------------===//

std::string dtensor::getSourcePosition(Location loc) {
  std::string position;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      position = (file.getFilename().getValue() + ":" +
                  Twine(file.getLine()) + ":" + Twine(file.getColumn()))
                     .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return position;
}
