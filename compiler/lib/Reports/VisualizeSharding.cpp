//===- VisualizeSharding.cpp - which rank holds which block ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compiler's visualize_sharding: the shared layer's ShardingView of the
// values a user names, as text tables on standard output and, on request,
// SVG pictures.
//
//===----------------------------------------------------------------------===//

#include "FunctionValues.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Layout/ShardingView.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_VISUALIZESHARDING
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;

namespace {

/// A value to show: how it is named, its type and its layout.
struct View {
  std::string irName;    // "%arg0", "%3", "result #0"
  std::string userName;  // the dtensor.name, or empty
  Type type;
  LayoutAttr layout;
};

/// "fc1.weight" -> itself; anything but [A-Za-z0-9._-] becomes '_'.
std::string fileStem(StringRef text) {
  std::string stem;
  for (char c : text)
    stem += llvm::isAlnum(c) || c == '.' || c == '_' || c == '-' ? c : '_';
  return stem;
}

struct VisualizeSharding
    : public dtensor::impl::VisualizeShardingBase<VisualizeSharding> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringSet<> wanted;
    for (const std::string &name : values)
      wanted.insert(name);
    llvm::StringSet<> found;
    std::vector<std::string> known;
    bool failedAny = false;
    getOperation()->walk<WalkOrder::PreOrder>([&](FunctionOpInterface fn) {
      if (!fn.isExternal() && failed(showFunction(fn, wanted, found, known)))
        failedAny = true;
      return WalkResult::skip();
    });
    for (const std::string &name : values)
      if (!found.contains(name)) {
        std::string list;
        for (const std::string &k : known)
          list += (list.empty() ? "" : ", ") + k;
        getOperation()->emitError()
            << "--dtensor-visualize-sharding: no value named '" << name
            << "' (names: " << (list.empty() ? "none" : list)
            << "; or an IR name such as %arg0 or %3)";
        failedAny = true;
      }
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult showFunction(FunctionOpInterface fn,
                             const llvm::StringSet<> &wanted,
                             llvm::StringSet<> &found,
                             std::vector<std::string> &known) {
    AsmState state(fn);
    std::vector<View> views;
    for (const ValueLayout &value : collectFunctionValues(fn)) {
      View view;
      llvm::raw_string_ostream os(view.irName);
      value.value.printAsOperand(os, state);
      if (auto arg = dyn_cast<BlockArgument>(value.value))
        if (arg.getOwner()->isEntryBlock())
          if (auto name = fn.getArgAttrOfType<StringAttr>(
                  arg.getArgNumber(), DTensorDialect::getNameAttrName()))
            view.userName = name.getValue().str();
      view.type = value.value.getType();
      view.layout = value.layout;
      views.push_back(view);
    }
    size_t arguments = fn.getNumArguments();
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
      View view;
      view.irName = "result #" + std::to_string(i);
      if (auto name = fn.getResultAttrOfType<StringAttr>(
              i, DTensorDialect::getNameAttrName()))
        view.userName = name.getValue().str();
      view.type = fn.getResultTypes()[i];
      view.layout = fn.getResultAttrOfType<LayoutAttr>(
          i, DTensorDialect::getLayoutAttrName());
      views.push_back(view);
    }

    for (size_t index = 0; index < views.size(); ++index) {
      const View &view = views[index];
      bool isArgOrResult =
          index < arguments || index >= views.size() - fn.getNumResults();
      if (!view.userName.empty())
        known.push_back(view.userName);
      bool show = wanted.empty() ? isArgOrResult
                                 : wanted.contains(view.irName) ||
                                       (!view.userName.empty() &&
                                        wanted.contains(view.userName));
      if (!show)
        continue;
      found.insert(view.irName);
      if (!view.userName.empty())
        found.insert(view.userName);
      if (failed(showValue(fn, view)))
        return failure();
    }
    return success();
  }

  LogicalResult showValue(FunctionOpInterface fn, const View &view) {
    raw_ostream &os = llvm::outs();
    std::string typeText;
    llvm::raw_string_ostream typeOs(typeText);
    view.type.print(typeOs);
    os << "func @" << fn.getName() << ": " << view.irName;
    if (!view.userName.empty())
      os << " \"" << view.userName << "\"";
    os << " " << typeText;
    auto type = dyn_cast<RankedTensorType>(view.type);
    if (!view.layout || !type) {
      os << ": no layout\n\n";
      return success();
    }
    LayoutAttr layout = view.layout.getNormalized(type.getRank());
    SymbolTableCollection tables;
    MeshOp mesh = lookupMesh(fn, layout.getMesh(), &tables);
    if (!mesh)
      return fn.emitError() << layout.getMesh() << " is not a dtensor.mesh";
    std::vector<layout::Placement> placements = layout.getLayoutPlacements();
    os << " " << layout::str(placements) << " on " << describeMesh(mesh)
       << "\n";
    if (!type.hasStaticShape()) {
      os << "  (a dynamic shape: not shown)\n\n";
      return success();
    }
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    layout::Mesh layoutMesh = mesh.getLayoutMesh();
    std::string table =
        layout::formatShardingTable(shape, placements, layoutMesh);
    for (StringRef line : llvm::split(StringRef(table).rtrim('\n'), '\n'))
      os << "  " << line << "\n";
    os << "\n";
    if (svgDir.empty())
      return success();

    std::string stem = fileStem(fn.getName()) + "." +
                       fileStem(view.userName.empty()
                                    ? StringRef(view.irName).ltrim('%')
                                    : StringRef(view.userName));
    SmallString<256> path(svgDir.getValue());
    llvm::sys::path::append(path, stem + ".svg");
    if (std::error_code error = llvm::sys::fs::create_directories(svgDir))
      return fn.emitError() << "cannot create '" << svgDir
                            << "': " << error.message();
    std::string errorMessage;
    auto file = openOutputFile(path, &errorMessage);
    if (!file)
      return fn.emitError() << errorMessage;
    file->os() << layout::renderShardingSvg(
        shape, placements, layoutMesh,
        "@" + fn.getName().str() + " " +
            (view.userName.empty() ? view.irName : view.userName) + " " +
            typeText + " " + layout::str(placements));
    file->keep();
    return success();
  }
};

} // namespace
