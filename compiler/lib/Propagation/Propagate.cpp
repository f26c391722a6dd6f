//===- Propagate.cpp - The --dtensor-propagate pass -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gives every tensor value of a function a layout and inserts
// dtensor.redistribute where a user needs another layout than its operand
// has. Functions are propagated callees first, so that a call sees its
// callee's signature as a contract; each one is a FunctionPropagation
// (FunctionPropagation.h): its problem built, solved, and the choice
// written back as attributes and redistributes.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Planner/TopologyCosts.h"
#include "dtensor/Propagation/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_PROPAGATE
#include "dtensor/Propagation/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-propagate"

using namespace mlir;
using namespace dtensor;
using propagation::FunctionPropagation;
using propagation::PropagationCounts;

// One function: its problem built, solved, and the choice written back.
LogicalResult FunctionPropagation::run(unsigned maxSweeps,
                                       PropagationCounts &counts) {
  if (failed(collectAssertions()))
    return failure();
  buildNodes();
  if (explain)
    findGradients();
  unsigned sweeps = 0;
  std::vector<int> choice = problem.solve(maxSweeps, &sweeps);
  counts.sweeps += sweeps;
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": @" << func.getSymName()
                          << ": strategies chosen after " << sweeps
                          << " improvement sweeps\n");
  materialize(choice, counts);
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": @" << func.getSymName() << ": "
                          << counts.redistributes << " redistributes, "
                          << counts.recreated
                          << " producers recreated (so far in the module)\n");
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Mesh dims that some layout of `func` (its arguments, results and layout
/// ops) shards head-tail.
std::vector<bool> getHeadTailMeshDims(func::FuncOp func, int64_t meshRank) {
  std::vector<bool> dims(meshRank, false);
  auto note = [&](Attribute attr) {
    auto layout = dyn_cast_or_null<LayoutAttr>(attr);
    if (!layout)
      return;
    for (auto [meshDim, placement] : llvm::enumerate(layout.getPlacements()))
      if (auto shard = dyn_cast<ShardAttr>(placement);
          shard && shard.getHeadTail() &&
          static_cast<int64_t>(meshDim) < meshRank)
        dims[meshDim] = true;
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    note(func.getArgAttr(i, DTensorDialect::getLayoutAttrName()));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    note(func.getResultAttr(i, DTensorDialect::getLayoutAttrName()));
  func.walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs()) {
      note(attr.getValue());
      if (auto array = dyn_cast<ArrayAttr>(attr.getValue()))
        for (Attribute element : array)
          note(element);
    }
  });
  return dims;
}

/// The mesh references a function uses, with a location for each.
struct MeshUse {
  FlatSymbolRefAttr mesh;
  Location loc;
};

/// Finds the one mesh `func` uses; null when it uses none. Two meshes are
/// an error.
FailureOr<FlatSymbolRefAttr> getFunctionMesh(func::FuncOp func) {
  std::optional<MeshUse> found;
  auto use = [&](LayoutAttr layout, Location loc) -> LogicalResult {
    if (!layout)
      return success();
    if (!found) {
      found = MeshUse{layout.getMesh(), loc};
      return success();
    }
    if (found->mesh == layout.getMesh())
      return success();
    InFlightDiagnostic diag =
        emitError(loc) << "function '" << func.getSymName() << "' uses mesh "
                       << layout.getMesh() << " here and mesh " << found->mesh
                       << " elsewhere; propagation needs one mesh per function";
    diag.attachNote(found->loc) << "mesh " << found->mesh << " is used here";
    return failure();
  };
  StringRef name = DTensorDialect::getLayoutAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (failed(use(func.getArgAttrOfType<LayoutAttr>(i, name),
                   func.getArgument(i).getLoc())))
      return failure();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (failed(
            use(func.getResultAttrOfType<LayoutAttr>(i, name), func.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    LogicalResult result = success();
    if (auto distribute = dyn_cast<DistributeOp>(op))
      result = use(distribute.getLayout(), op->getLoc());
    else if (auto request = dyn_cast<ToLayoutOp>(op))
      result = use(request.getLayout(), op->getLoc());
    else if (auto redistribute = dyn_cast<RedistributeOp>(op))
      result = use(redistribute.getSource(), op->getLoc());
    else if (auto localMap = dyn_cast<LocalMapOp>(op)) {
      for (Attribute layout : localMap.getInLayouts())
        if (succeeded(result))
          result = use(cast<LayoutAttr>(layout), op->getLoc());
      for (Attribute layout : localMap.getOutLayouts())
        if (succeeded(result))
          result = use(cast<LayoutAttr>(layout), op->getLoc());
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          op, call.getCalleeAttr());
      for (unsigned i = 0, e = callee ? callee.getNumArguments() : 0;
           i < e && succeeded(result); ++i)
        result =
            use(callee.getArgAttrOfType<LayoutAttr>(i, name), op->getLoc());
      for (unsigned i = 0, e = callee ? callee.getNumResults() : 0;
           i < e && succeeded(result); ++i)
        result =
            use(callee.getResultAttrOfType<LayoutAttr>(i, name), op->getLoc());
    }
    return failed(result) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return found ? found->mesh : FlatSymbolRefAttr();
}

struct Propagate : public dtensor::impl::PropagateBase<Propagate> {
  using PropagateBase::PropagateBase;

  void runOnOperation() override;

private:
  /// Orders functions so that callees come before callers.
  LogicalResult orderFunctions(SmallVectorImpl<func::FuncOp> &order);
  LogicalResult propagate(func::FuncOp func);
  /// The per-rank compute rate in GFLOP/s, and where it comes from.
  std::pair<double, std::string> getComputeRate() const;

  PropagationCounts total;
  /// The `topology` file, once read.
  std::optional<rt::Topology> topologyFile;
  /// The meshes whose links and compute rate `explain` has shown.
  llvm::DenseSet<Operation *> explainedMeshes;
};

} // namespace

LogicalResult Propagate::orderFunctions(SmallVectorImpl<func::FuncOp> &order) {
  ModuleOp module = getOperation();
  enum class Mark { InProgress, Done };
  DenseMap<Operation *, Mark> marks;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    auto [it, inserted] = marks.try_emplace(func, Mark::InProgress);
    if (!inserted)
      return success();
    WalkResult walk = func.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
      if (!callee)
        return WalkResult::advance();
      auto mark = marks.find(callee);
      if (mark != marks.end() && mark->second == Mark::InProgress) {
        call.emitError() << "recursive call to '" << callee.getSymName()
                         << "': propagation needs an acyclic call graph";
        return WalkResult::interrupt();
      }
      return failed(visit(callee)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    marks[func] = Mark::Done;
    order.push_back(func);
    return success();
  };
  for (auto func : module.getOps<func::FuncOp>())
    if (failed(visit(func)))
      return failure();
  return success();
}

/// What compute costs when neither `compute-gflops` nor the topology file
/// says: a guess at one rank of a CPU server, kept as the model's default
/// so that programs compiled without a measurement do not change.
static constexpr double kAssumedComputeGflops = 100.0;

/// A rate as people write it: 100, 0.01, 245.469.
static std::string formatGflops(double gflops) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", gflops);
  return text;
}

std::pair<double, std::string> Propagate::getComputeRate() const {
  if (computeGflops > 0)
    return {computeGflops, "compute-gflops"};
  if (topologyFile && topologyFile->computeGflops > 0)
    return {topologyFile->computeGflops,
            "compute_gflops of topology " + topology.getValue()};
  return {kAssumedComputeGflops, "assumed; compute-gflops or a topology "
                                 "file's compute_gflops sets it"};
}

LogicalResult Propagate::propagate(func::FuncOp func) {
  if (func.isExternal())
    return success();
  FailureOr<FlatSymbolRefAttr> meshRef = getFunctionMesh(func);
  if (failed(meshRef))
    return failure();
  // A function with no layout anywhere is not distributed: it runs whole
  // on every rank, as it is.
  if (!*meshRef) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": @" << func.getSymName()
                            << " has no layout: left whole\n");
    return success();
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "propagation supports functions with a single block";
  // The verifier resolved every layout's mesh before any pass runs.
  MeshOp mesh = lookupMesh(func, *meshRef);
  assert(mesh && "layouts of a verified module name existing meshes");
  for (Operation &op : func.getBody().front()) {
    WalkResult nested =
        op.walk([&](Operation *inner) {
          if (inner != &op &&
              isa<DistributeOp, RedistributeOp, ToLayoutOp>(inner)) {
            inner->emitError()
                << "layout constraints must be at the top level of a function";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (nested.wasInterrupted())
      return failure();
  }
  layout::CostParams costs;
  costs.callUs = callUs;
  costs.latencyUs = latencyUs;
  costs.bandwidthGBps = bandwidthGBps;
  if (topologyFile) {
    std::vector<std::string> dimNames;
    if (std::optional<ArrayAttr> names = mesh.getDimNames())
      for (Attribute name : *names)
        dimNames.push_back(cast<StringAttr>(name).str());
    std::vector<int64_t> shape(mesh.getShape().begin(), mesh.getShape().end());
    if (std::string error = layout::setMeshDimLinks(*topologyFile, topology,
                                                    shape, dimNames, costs);
        !error.empty())
      return mesh.emitError() << error;
    if (explain && !explainedMeshes.contains(mesh.getOperation()))
      emitRemark(mesh.getLoc())
          << "explain: topology " << topology << ": "
          << layout::describeMeshDimLinks(costs, dimNames);
  }
  auto [gflops, source] = getComputeRate();
  if (explain && explainedMeshes.insert(mesh.getOperation()).second)
    emitRemark(mesh.getLoc())
        << "explain: compute priced at " << formatGflops(gflops)
        << " GFLOP/s per rank (" << source << ")";
  ComputeParams compute;
  compute.usPerPoint = 1.0 / (gflops * 1e3);
  compute.headTailMeshDims = getHeadTailMeshDims(func, mesh.getRank());
  FunctionPropagation propagation(func, mesh, *meshRef, costs, compute,
                                  explain);
  PropagationCounts counts;
  if (failed(propagation.run(maxSweeps, counts)))
    return failure();
  ++total.functions;
  total.redistributes += counts.redistributes;
  total.recreated += counts.recreated;
  total.sweeps += counts.sweeps;
  return success();
}

void Propagate::runOnOperation() {
  if (callUs < 0 || latencyUs < 0 || bandwidthGBps <= 0 || computeGflops < 0) {
    getOperation().emitError()
        << "dtensor-propagate: call-us and latency-us must be >= 0, "
           "bandwidth-gbps and compute-gflops > 0 (or compute-gflops 0 for "
           "the topology file's compute_gflops, else the assumed "
        << formatGflops(kAssumedComputeGflops) << ")";
    return signalPassFailure();
  }
  topologyFile.reset();
  explainedMeshes.clear();
  if (!topology.empty()) {
    rt::Topology file;
    if (std::string error = rt::readTopologyFile(topology, file);
        !error.empty()) {
      getOperation().emitError() << "dtensor-propagate: " << error;
      return signalPassFailure();
    }
    topologyFile = std::move(file);
  }
  SmallVector<func::FuncOp> order;
  if (failed(orderFunctions(order)))
    return signalPassFailure();
  total = {};
  for (func::FuncOp func : order)
    if (failed(propagate(func)))
      return signalPassFailure();
  // MLIR's own pass statistics are compiled out of release builds of MLIR
  // (Debian's among them), so the counts are a remark.
  if (statistics)
    emitRemark(getOperation().getLoc())
        << "dtensor-propagate: " << total.functions << " functions given "
        << "layouts, " << total.redistributes << " redistributes inserted, "
        << total.recreated << " producers recreated, " << total.sweeps
        << " improvement sweeps";
}
