//===- Partition.cpp - global program to per-rank program -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rewrites every function with layouts (after propagation) into the program
// each rank runs: tensor types become the rank's shard types, each op its
// local form (PartitionOps.cpp), and each dtensor.redistribute the local
// collectives the redistribute planner picks (LowerRedistribute.cpp).
//
//===----------------------------------------------------------------------===//

#include "LowerRedistribute.h"
#include "PartitionState.h"
#include "dtensor/Analysis/ResultLayout.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Partition/Passes.h"
#include "dtensor/Planner/TopologyCosts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <optional>
#include <string>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_PARTITION
#include "dtensor/Partition/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-partition"

using namespace mlir;
using namespace dtensor;

namespace {

/// Adds the mesh `layout` refers to, if any, to `meshes`.
void addMesh(Attribute layout, llvm::SetVector<Attribute> &meshes) {
  if (auto layoutAttr = dyn_cast_or_null<LayoutAttr>(layout))
    meshes.insert(layoutAttr.getMesh());
}

/// The mesh the layouts of `func` are on; null when it has no layout.
FailureOr<MeshOp> findMesh(func::FuncOp func) {
  llvm::SetVector<Attribute> meshes;
  StringRef layoutName = DTensorDialect::getLayoutAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    addMesh(func.getArgAttr(i, layoutName), meshes);
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    addMesh(func.getResultAttr(i, layoutName), meshes);
  func.walk([&](Operation *op) {
    if (auto distribute = dyn_cast<DistributeOp>(op))
      addMesh(distribute.getLayout(), meshes);
    if (auto redistribute = dyn_cast<RedistributeOp>(op))
      addMesh(redistribute.getSource(), meshes);
    if (auto layouts = op->getAttrOfType<ArrayAttr>(
            DTensorDialect::getResultLayoutsAttrName()))
      for (Attribute layout : layouts)
        addMesh(layout, meshes);
  });
  if (meshes.empty())
    return MeshOp();
  if (meshes.size() > 1)
    return func.emitOpError()
           << "uses meshes " << meshes[0] << " and " << meshes[1]
           << "; partitioning needs one mesh per function";
  // The verifier checked that layouts name meshes.
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(
      func, cast<FlatSymbolRefAttr>(meshes[0]));
}

/// True when `func` was partitioned already: its boundary carries global
/// shapes.
bool isPartitioned(func::FuncOp func) {
  StringRef name = DTensorDialect::getGlobalShapeAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, name))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, name))
      return true;
  return false;
}

/// Gives the arguments and results of `func` that have a layout their local
/// types, recording their global shapes. Works on declarations too, so that
/// callers and callees agree.
void rewriteSignature(func::FuncOp func, const layout::Mesh &mesh) {
  StringRef layoutName = DTensorDialect::getLayoutAttrName();
  StringRef shapeName = DTensorDialect::getGlobalShapeAttrName();
  Builder builder(func.getContext());
  auto localize = [&](Type type, LayoutAttr layout,
                      llvm::function_ref<void(Attribute)> setShape) -> Type {
    auto globalType = dyn_cast<RankedTensorType>(type);
    if (!layout || !globalType)
      return type;
    setShape(builder.getDenseI64ArrayAttr(globalType.getShape()));
    return getLocalType(
        globalType,
        layout.getNormalized(globalType.getRank()).getLayoutPlacements(), mesh);
  };
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (auto [index, type] : llvm::enumerate(argTypes))
    type = localize(
        type, func.getArgAttrOfType<LayoutAttr>(index, layoutName),
        [&](Attribute shape) { func.setArgAttr(index, shapeName, shape); });
  SmallVector<Type> resultTypes(func.getResultTypes());
  for (auto [index, type] : llvm::enumerate(resultTypes))
    type = localize(
        type, func.getResultAttrOfType<LayoutAttr>(index, layoutName),
        [&](Attribute shape) { func.setResultAttr(index, shapeName, shape); });
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  if (!func.isExternal())
    for (auto [arg, type] : llvm::zip_equal(func.getArguments(), argTypes))
      arg.setType(type);
}

class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp mesh,
                      const layout::CostParams &params, bool explain)
      : func(func), state(mesh, func.front(), params) {
    state.explain = explain;
  }

  LogicalResult run() {
    if (failed(collectGlobals()) || failed(checkResults()))
      return failure();
    // Arguments first: ops build their local forms from their operands.
    for (BlockArgument arg : func.getArguments())
      if (const GlobalValue *global = state.lookup(arg))
        arg.setType(state.getLocalType(*global));
    for (Operation &op : llvm::make_early_inc_range(func.front())) {
      LLVM_DEBUG(llvm::dbgs() << "  partitioning '" << op.getName() << "' at "
                              << op.getLoc() << "\n");
      if (failed(partitionOp(&op, state)))
        return failure();
    }
    rewriteSignature(func, state.mesh);
    state.index.eraseUnused();
    func.walk([](Operation *op) {
      op->removeAttr(DTensorDialect::getResultLayoutsAttrName());
    });
    return success();
  }

private:
  /// Records `value`'s global type and layout; sharded dims must be static.
  LogicalResult addGlobal(Value value, LayoutAttr layout,
                          llvm::function_ref<InFlightDiagnostic()> emitError) {
    auto type = cast<RankedTensorType>(value.getType());
    state.setGlobal(value, type, layout);
    const GlobalValue &global = *state.lookup(value);
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim) &&
          !state.getShardingMeshDims(global, dim).empty())
        return emitError() << "shards dim " << dim
                           << ", whose global size is dynamic; partitioning "
                              "needs static sizes for sharded dims";
    return success();
  }

  /// The global view of the arguments and of every top-level tensor result.
  LogicalResult collectGlobals() {
    StringRef name = DTensorDialect::getLayoutAttrName();
    for (BlockArgument arg : func.getArguments()) {
      if (!isa<RankedTensorType>(arg.getType()))
        continue;
      unsigned index = arg.getArgNumber();
      auto emitError = [&] {
        return func.emitOpError() << "argument #" << index << " ";
      };
      auto layout = func.getArgAttrOfType<LayoutAttr>(index, name);
      if (!layout)
        return emitError() << "has no layout; run --dtensor-propagate before "
                              "--dtensor-partition";
      if (failed(addGlobal(arg, layout, emitError)))
        return failure();
    }
    for (Operation &op : func.front()) {
      for (OpResult result : op.getResults()) {
        if (!isa<RankedTensorType>(result.getType()))
          continue;
        auto emitError = [&] {
          return op.emitOpError()
                 << "result #" << result.getResultNumber() << " ";
        };
        LayoutAttr layout = getResultLayout(result);
        if (!layout)
          return emitError() << "has no layout; run --dtensor-propagate before "
                                "--dtensor-partition";
        if (failed(addGlobal(result, layout, emitError)))
          return failure();
      }
    }
    return success();
  }

  /// Each returned tensor must have the layout its function result declares.
  LogicalResult checkResults() {
    Operation *terminator = func.front().getTerminator();
    StringRef name = DTensorDialect::getLayoutAttrName();
    for (OpOperand &operand : terminator->getOpOperands()) {
      const GlobalValue *global = state.lookup(operand.get());
      if (!global)
        continue;
      unsigned index = operand.getOperandNumber();
      auto layout = func.getResultAttrOfType<LayoutAttr>(index, name);
      if (!layout)
        return func.emitOpError()
               << "result #" << index
               << " has no layout; run --dtensor-propagate before "
                  "--dtensor-partition";
      std::vector<layout::Placement> declared =
          layout.getNormalized(global->type.getRank()).getLayoutPlacements();
      if (declared != global->placements)
        return terminator->emitOpError()
               << "returns a value laid out as "
               << layout::str(global->placements) << " as result #" << index
               << ", which is declared " << layout::str(declared);
    }
    return success();
  }

  func::FuncOp func;
  PartitionState state;
};

struct PartitionPass : dtensor::impl::PartitionBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (callUs < 0 || latencyUs < 0 || bandwidthGBps <= 0) {
      getOperation().emitError()
          << "--dtensor-partition options need call-us >= 0, latency-us >= 0 "
             "and bandwidth-gbps > 0";
      return signalPassFailure();
    }
    layout::CostParams params;
    params.callUs = callUs;
    params.latencyUs = latencyUs;
    params.bandwidthGBps = bandwidthGBps;
    std::optional<rt::Topology> topologyFile;
    if (!topology.empty()) {
      rt::Topology file;
      if (std::string error = rt::readTopologyFile(topology, file);
          !error.empty()) {
        getOperation().emitError() << "dtensor-partition: " << error;
        return signalPassFailure();
      }
      topologyFile = std::move(file);
    }

    // The functions to partition, and their meshes.
    llvm::MapVector<Operation *, MeshOp> targets;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (isPartitioned(func)) {
        LLVM_DEBUG(llvm::dbgs() << "skipping @" << func.getSymName()
                                << ": partitioned already (its boundary "
                                   "carries global shapes)\n");
        continue;
      }
      FailureOr<MeshOp> mesh = findMesh(func);
      if (failed(mesh))
        return signalPassFailure();
      if (!*mesh) {
        LLVM_DEBUG(llvm::dbgs() << "skipping @" << func.getSymName()
                                << ": no layout names a mesh\n");
        continue;
      }
      if (!func.isExternal() && !func.getBody().hasOneBlock()) {
        func.emitOpError("has several blocks; partitioning handles "
                         "single-block functions");
        return signalPassFailure();
      }
      targets[func] = *mesh;
    }

    // A function left global cannot call one that becomes per-rank.
    WalkResult calls = getOperation().walk([&](func::CallOp call) {
      auto caller = call->getParentOfType<func::FuncOp>();
      Operation *callee =
          SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
      if (targets.count(caller) || !targets.count(callee))
        return WalkResult::advance();
      call.emitOpError() << "calls " << call.getCalleeAttr()
                         << ", which is partitioned, from a function without "
                            "layouts";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();

    for (auto [op, mesh] : targets) {
      auto func = cast<func::FuncOp>(op);
      LLVM_DEBUG(llvm::dbgs()
                 << (func.isExternal() ? "localizing the signature of "
                                       : "partitioning ")
                 << "@" << func.getSymName() << " on mesh @"
                 << mesh.getSymName() << "\n");
      // With a topology, each mesh has its links.
      layout::CostParams meshParams = params;
      if (topologyFile) {
        std::vector<std::string> dimNames;
        if (std::optional<ArrayAttr> names = mesh.getDimNames())
          for (Attribute name : *names)
            dimNames.push_back(cast<StringAttr>(name).str());
        std::vector<int64_t> shape(mesh.getShape().begin(),
                                   mesh.getShape().end());
        if (std::string error = layout::setMeshDimLinks(
                *topologyFile, topology, shape, dimNames, meshParams);
            !error.empty()) {
          mesh.emitError() << error;
          return signalPassFailure();
        }
      }
      if (func.isExternal())
        rewriteSignature(func, mesh.getLayoutMesh());
      else if (failed(
                   FunctionPartitioner(func, mesh, meshParams, explain).run()))
        return signalPassFailure();
      LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << " now has type "
                              << func.getFunctionType() << "\n");
    }
  }
};

} // namespace
