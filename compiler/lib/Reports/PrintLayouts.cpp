//===- PrintLayouts.cpp - print the layout of every value -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A reader's view of a distributed program: per function, one table row per
// tensor value with its layout and the local shard shape each rank holds.
//
//===----------------------------------------------------------------------===//

#include "FunctionValues.h"
#include "TextTable.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_PRINTLAYOUTS
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;

/// "0-2,5": ascending `ranks` with runs of consecutive ranks collapsed.
static std::string formatRanks(ArrayRef<int64_t> ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t begin = 0; begin < ranks.size();) {
    size_t end = begin;
    while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1)
      ++end;
    if (begin)
      text += ",";
    text += std::to_string(ranks[begin]);
    if (end > begin)
      text += "-" + std::to_string(ranks[end]);
    begin = end + 1;
  }
  return text;
}

/// "3x64 (ranks 0-2), 1x64 (rank 3)": the local shape of a `type` tensor
/// with `layout` on each rank of `mesh`, ranks with equal shapes grouped.
static std::string formatLocalShapes(RankedTensorType type, LayoutAttr layout,
                                     MeshOp mesh) {
  // A dynamic dim is chunked as if empty; its local size prints as `?`.
  std::vector<int64_t> globalShape;
  for (int64_t size : type.getShape())
    globalShape.push_back(ShapedType::isDynamic(size) ? 0 : size);
  std::vector<layout::Placement> placements = layout.getLayoutPlacements();
  layout::Mesh layoutMesh = mesh.getLayoutMesh();

  // Visiting ranks in increasing order keeps groups ordered by first rank.
  std::vector<std::pair<std::string, SmallVector<int64_t>>> groups;
  for (int64_t rank = 0; rank < layoutMesh.size(); ++rank) {
    std::vector<int64_t> coord = *layoutMesh.coordOfDevice(rank);
    std::vector<int64_t> local =
        layout::localShard(globalShape, placements, layoutMesh, coord).shape;
    std::string shape;
    for (auto [dim, size] : llvm::enumerate(local)) {
      if (dim)
        shape += "x";
      shape += type.isDynamicDim(dim) ? "?" : std::to_string(size);
    }
    if (local.empty())
      shape = "scalar";
    auto group =
        llvm::find_if(groups, [&](const auto &g) { return g.first == shape; });
    if (group == groups.end())
      groups.push_back({shape, {rank}});
    else
      group->second.push_back(rank);
  }

  std::string text;
  for (const auto &[shape, ranks] : groups) {
    if (!text.empty())
      text += ", ";
    text += shape + " (" + formatRanks(ranks) + ")";
  }
  return text;
}

namespace {
struct PrintLayouts : public dtensor::impl::PrintLayoutsBase<PrintLayouts> {
  void runOnOperation() override {
    getOperation()->walk<WalkOrder::PreOrder>([&](FunctionOpInterface fn) {
      if (!fn.isExternal() && failed(printFunction(fn)))
        signalPassFailure();
      // Everything nested in a function belongs to its table.
      return WalkResult::skip();
    });
  }

  /// Prints the table of `fn`, followed by a blank line, when anything in it
  /// has a layout.
  LogicalResult printFunction(FunctionOpInterface fn) {
    std::vector<ValueLayout> values = collectFunctionValues(fn);

    // The meshes the function uses, in order of first use; result layouts
    // count even though function results are not rows of their own.
    SymbolTableCollection tables;
    llvm::SetVector<MeshOp> meshes;
    auto addMesh = [&](LayoutAttr layout) -> LogicalResult {
      MeshOp mesh = lookupMesh(fn, layout.getMesh(), &tables);
      if (!mesh)
        return fn.emitError() << layout.getMesh() << " is not a dtensor.mesh";
      meshes.insert(mesh);
      return success();
    };
    for (const ValueLayout &value : values)
      if (value.layout && failed(addMesh(value.layout)))
        return failure();
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      if (auto layout = fn.getResultAttrOfType<LayoutAttr>(
              i, DTensorDialect::getLayoutAttrName()))
        if (failed(addMesh(layout)))
          return failure();
    if (meshes.empty())
      return success();
    // With one mesh the header names it; otherwise each layout does.
    bool singleMesh = meshes.size() == 1;

    raw_ostream &os = llvm::outs();
    os << "func @" << fn.getName() << " on ";
    llvm::interleaveComma(meshes, os,
                          [&](MeshOp mesh) { os << describeMesh(mesh); });
    os << "\n";

    // One naming state for the whole function, so names match the printer.
    AsmState state(fn);
    std::vector<TextRow> rows;
    rows.push_back({"value", "type", "layout", "local shape per rank"});
    for (const ValueLayout &value : values) {
      std::string name, type;
      llvm::raw_string_ostream nameOs(name), typeOs(type);
      value.value.printAsOperand(nameOs, state);
      value.value.getType().print(typeOs);
      auto tensorType = dyn_cast<RankedTensorType>(value.value.getType());
      if (!value.layout || !tensorType) {
        rows.push_back({name, type, "-", "-"});
        continue;
      }
      LayoutAttr normalized = value.layout.getNormalized(tensorType.getRank());
      std::string layout = layout::str(normalized.getLayoutPlacements());
      if (!singleMesh)
        layout = "@" + normalized.getMesh().getValue().str() + " " + layout;
      rows.push_back(
          {name, type, layout,
           formatLocalShapes(tensorType, normalized,
                             lookupMesh(fn, normalized.getMesh(), &tables))});
    }
    printTextTable(rows, os);
    os << "\n";
    return success();
  }
};
} // namespace
