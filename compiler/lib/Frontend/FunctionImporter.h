//===- FunctionImporter.h - One entry of a plan as one function -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The importer of one entry of a model plan (ImportJson.cpp drives it once
// per entry): it builds the entry's function in the module, its arguments
// laid out as the plan says and its body the plan's ops, with the
// `dtensor.distribute` / `dtensor.redistribute` / `dtensor.to_layout` ops
// that the styles, placements, local maps and context parallelism ask for.
//
// Its members are implemented by concept:
//   BuildFunction.cpp     the function: arguments, ops, results (run).
//   LayoutClaims.cpp      layouts of values: default placements, claims,
//                         redistributions, context parallelism's sequence.
//   ParallelStyles.cpp    tensor-parallel styles at module boundaries.
//   ParameterLayouts.cpp  layouts of parameters, state and local-map
//                         arguments; grouped-query attention's replicated
//                         key/value projections.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_FUNCTIONIMPORTER_H
#define DTENSOR_COMPILER_FRONTEND_FUNCTIONIMPORTER_H

#include "EmitPlanOp.h"
#include "LocalMaps.h"
#include "ModuleTree.h"
#include "dtensor/Frontend/ModelPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::frontend {

/// Where one parameter's layout came from, for conflict messages.
struct ParameterLayout {
  llvm::SmallVector<PlacementAttr> placements;
  const JsonNode *source = nullptr;
  /// Sharded on dim 0 over the data-parallel dim by plan.fully_shard.
  bool fullyShard = false;
};

/// A colwise key/value projection of grouped-query attention applied
/// replicated: its module's heads, the devices of the style's mesh dim,
/// and the attention op.
struct ReplicatedProjection {
  int64_t heads = 0;
  int64_t devices = 0;
  const JsonNode *attention = nullptr;
};
using ReplicatedProjections = llvm::StringMap<ReplicatedProjection>;

class FunctionImporter {
public:
  FunctionImporter(const ModelPlan &plan, const ModuleTree &tree,
                   const JsonLocator &locator, mlir::ModuleOp module,
                   const ReplicatedProjections &replicated)
      : plan(plan), tree(tree), locator(locator), module(module),
        context(module.getContext()), builder(context), replicated(replicated) {
  }

  mlir::LogicalResult run();

  /// Projections this import found to replicate that it did not know of:
  /// when there are any, the plan must be imported again with them.
  const ReplicatedProjections &getDiscovered() const { return discovered; }

private:
  const ModelPlan &plan;
  const ModuleTree &tree;
  const JsonLocator &locator;
  mlir::ModuleOp module;
  mlir::MLIRContext *context;
  mlir::OpBuilder builder;
  mlir::FlatSymbolRefAttr meshRef;
  const ReplicatedProjections &replicated;
  ReplicatedProjections discovered;

  /// The value each name has where it is defined (after its raw-placement
  /// claim, if any).
  llvm::StringMap<mlir::Value> values;
  /// The layout each value is claimed to have.
  llvm::DenseMap<mlir::Value, LayoutAttr> claims;
  /// Values after the output styles of the innermost `n` modules they
  /// leave: key (name, n).
  std::map<std::pair<std::string, unsigned>, mlir::Value> outputStages;
  /// Values after the input style of a module: key (module path, name).
  std::map<std::pair<std::string, std::string>, mlir::Value> inputStages;
  llvm::StringSet<> parameterNames;
  /// plan.fully_shard: each parameter its unit shards, with the layout it
  /// is gathered to (replicated over the data-parallel dim) before its first
  /// reader, as FSDP2 all-gathers a unit's parameters before its forward.
  llvm::StringMap<LayoutAttr> fullyShardGathers;
  llvm::StringMap<const PlacementDecl *> rawPlacements;
  /// Context parallelism: each value claimed sequence-sharded, and gathered,
  /// for attention; attentions reading one value share them, so k and v are
  /// gathered once however many attentions read them.
  llvm::DenseMap<mlir::Value, mlir::Value> sequenceClaims, sequenceGathers;
  std::vector<LocalMapModule> localMaps;

  mlir::Location getOpLocation(llvm::StringRef module,
                               const JsonNode &node) const {
    return getPlanLocation(module, node, locator);
  }

  // BuildFunction.cpp: the function's body.

  mlir::LogicalResult emitOp(const OpDecl &op);
  /// The dtensor.local_map of a module of `plan.local_maps`, its inputs
  /// claimed (or, with redistribute_inputs, requested) in their layouts.
  mlir::LogicalResult emitLocalMapModule(const LocalMapModule &localMap);

  // LayoutClaims.cpp: layouts of values.

  /// The layout of a `rank`-D tensor with `placement` over `meshDim`,
  /// Shard(0) over the data-parallel dim (when the tensor has a dim) and
  /// Replicate elsewhere. Errors at `at` when a shard dim is out of range.
  mlir::FailureOr<LayoutAttr>
  getStyleLayout(PlacementAttr placement, int64_t meshDim, int64_t rank,
                 bool activation, const JsonNode &at, llvm::StringRef what);
  mlir::FailureOr<llvm::SmallVector<PlacementAttr>>
  normalizePlacements(llvm::ArrayRef<PlacementAttr> placements, int64_t rank,
                      const JsonNode &at, llvm::StringRef what);
  llvm::SmallVector<PlacementAttr> getDefaultPlacements(int64_t rank,
                                                        bool activation) const;
  LayoutAttr getLayout(llvm::ArrayRef<PlacementAttr> placements) const {
    return LayoutAttr::get(context, meshRef, placements);
  }

  /// Claims that `value` has `layout` (a distribute), or redistributes it
  /// when it is already claimed to have another layout.
  mlir::Value claim(mlir::Value value, LayoutAttr layout, mlir::Location loc);
  mlir::Value redistribute(mlir::Value value, LayoutAttr from, LayoutAttr to,
                           mlir::Location loc);
  /// Asks for `value` in `layout`, whatever layout it has (a to_layout).
  mlir::Value request(mlir::Value value, LayoutAttr layout, mlir::Location loc);
  /// Context parallelism: claims `value` sharded on `dim` over the
  /// context-parallel mesh dim, its other mesh dims left to propagation
  /// (or kept from an earlier claim); with `gather`, then asks for it
  /// replicated over that dim (the all-gather rotation of k and v).
  mlir::Value claimSequence(mlir::Value value, int64_t dim, bool gather,
                            mlir::Location loc);
  /// Tensor `name`'s `value` claimed in the layout of its `placements`
  /// entry when it has one, else `value`.
  mlir::FailureOr<mlir::Value> claimPlacementsEntry(llvm::StringRef name,
                                                    mlir::Value value,
                                                    mlir::Location loc);

  // ParallelStyles.cpp: values crossing the boundaries of styled modules.

  /// Claims `value` is `given`, then redistributes it to the style's
  /// `desired` placement when there is one (PyTorch's from_local followed by
  /// redistribute).
  mlir::FailureOr<mlir::Value>
  claimThenRedistribute(mlir::Value value, LayoutAttr given,
                        StylePlacement desired, const StyleDecl &style,
                        int64_t rank, llvm::StringRef what, mlir::Location loc);
  /// The value of `name` as op `reader` of module `readerModule` sees it.
  mlir::FailureOr<mlir::Value>
  getValueFor(llvm::StringRef name,
              std::optional<llvm::StringRef> readerModule);
  mlir::FailureOr<mlir::Value> getOutputStage(llvm::StringRef name,
                                              unsigned stage);
  mlir::FailureOr<mlir::Value> applyInputStyle(const StyledModule &styled,
                                               llvm::StringRef name,
                                               mlir::Value value);
  mlir::FailureOr<mlir::Value> applyOutputStyle(const StyledModule &styled,
                                                llvm::StringRef name,
                                                mlir::Value value);
  /// True when the (colwise/rowwise) module's op is an embedding.
  bool holdsEmbedding(const StyledModule &styled) const;
  bool isShardableLeaf(const OpDecl &op) const;
  /// The styled modules `name` leaves, innermost first.
  llvm::SmallVector<const StyledModule *>
  getOutputChain(llvm::StringRef name) const;
  mlir::LogicalResult checkStyledModules();

  // ParameterLayouts.cpp: layouts of the function's arguments.

  mlir::LogicalResult
  computeParameterLayouts(llvm::StringMap<ParameterLayout> &layouts);
  /// plan.fully_shard: parameters of its units sharded on dim 0 over the
  /// data-parallel dim, added to their style's layout.
  mlir::LogicalResult
  addFullyShardLayouts(llvm::StringMap<ParameterLayout> &layouts);
  /// Gathers each fully sharded parameter among `names` that no op read
  /// before, at the builder's point (before its first reader, at `loc`):
  /// later readers share the gathered value.
  void gatherFullyShardedParameters(llvm::ArrayRef<std::string> names,
                                    mlir::Location loc);
  /// Model inputs and parameters that nothing else lays out take the input
  /// layout of the first local map reading them.
  void setLocalMapArgumentPlacements(
      llvm::StringMap<llvm::SmallVector<PlacementAttr>> &placements) const;
  /// The colwise module whose linear computes `name`, through ops that only
  /// move or rotate heads; null when there is none.
  const StyledModule *getColwiseProjection(llvm::StringRef name) const;
  /// After a grouped-query attention `op` with key/value heads `heads`:
  /// records its colwise key/value projections that the style's mesh dim
  /// does not divide.
  void findReplicatedProjections(const OpDecl &op, int64_t heads);
  /// The layout of a state tensor without raw placements: a KV cache
  /// follows the heads of its projection.
  llvm::SmallVector<PlacementAttr>
  getStatePlacements(const TensorDecl &state) const;
  bool isReplicatedProjection(const StyledModule &styled) const {
    return styled.style->kind == StyleDecl::Kind::Colwise &&
           replicated.count(styled.path);
  }
};

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_FUNCTIONIMPORTER_H
