//===- ModelPlan.h - A JSON model plan, read and checked --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The structure of a model plan (docs/model-plan.md) after its JSON has been
// read: every member checked for presence, kind and spelling, names resolved
// to declarations, placements and styles parsed. Shapes and op attributes
// are checked later, while the importer builds IR. Each piece keeps the JSON
// node it came from, for diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_MODELPLAN_H
#define DTENSOR_FRONTEND_MODELPLAN_H

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Frontend/JsonTree.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::frontend {

struct CustomOpDecl;

struct MeshDecl {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<std::string> names;
  const JsonNode *node = nullptr;
};

/// The size in bytes of a tensor of `type` (static shape), or nullopt when
/// it does not fit an int64: such a tensor cannot be allocated, indexed or
/// described in the artifact's manifest, and the importer refuses it.
std::optional<int64_t> getTensorBytes(mlir::RankedTensorType type);

/// An entry of `model.inputs`, `model.state` or `model.parameters`.
struct TensorDecl {
  std::string name;
  mlir::RankedTensorType type;
  /// A parameter's `init`; null when it has none (and for inputs).
  InitAttr init;
  const JsonNode *node = nullptr;
};

/// An entry of `model.ops`.
struct OpDecl {
  const JsonNode *node = nullptr;
  const OpDefinition *definition = nullptr;
  /// Dotted module path; "" is the root module.
  std::string module;
  llvm::SmallVector<std::string> inputs;
  llvm::SmallVector<const JsonNode *> inputNodes;
  llvm::SmallVector<std::string> outputs;
  llvm::SmallVector<const JsonNode *> outputNodes;
  /// A call of a custom op of `model.custom_ops` (CustomOpDecls.h); its
  /// `definition` is then the declaration's.
  std::shared_ptr<const CustomOpDecl> custom;
};

/// A member of `model.updates`: the value a state tensor holds after a
/// step.
struct StateUpdate {
  std::string state;
  std::string value;
  /// The value's string.
  const JsonNode *node = nullptr;
};

/// A placement of a style, or a skipped entry (`null`) of a layout list.
using StylePlacement = std::optional<PlacementAttr>;

struct StyleDecl {
  enum class Kind {
    Colwise,
    Rowwise,
    SequenceParallel,
    PrepareModuleInput,
    PrepareModuleOutput
  };
  Kind kind;
  /// The module pattern (the key in `plan.styles`).
  std::string pattern;
  const JsonNode *node = nullptr;
  int64_t meshDim = 0;
  /// Given layouts; an empty list means the style's default.
  std::vector<StylePlacement> inputLayouts;
  std::vector<StylePlacement> desiredInputLayouts;
  std::vector<StylePlacement> outputLayouts;
  std::vector<StylePlacement> desiredOutputLayouts;
  int64_t sequenceDim = 1;
  bool useLocalOutput = true;
};

/// An entry of `plan.placements`: one placement per mesh dim.
struct PlacementDecl {
  std::string tensor;
  llvm::SmallVector<PlacementAttr> placements;
  const JsonNode *node = nullptr;
};

/// An entry of `plan.local_maps`: the modules matching `pattern` run their
/// ops on each rank's local pieces (PyTorch's local_map).
struct LocalMapDecl {
  std::string pattern;
  const JsonNode *node = nullptr;
  /// One list of placements (one per mesh dim) per module input / output,
  /// with the JSON value each came from.
  std::vector<llvm::SmallVector<PlacementAttr>> inPlacements;
  std::vector<const JsonNode *> inNodes;
  std::vector<llvm::SmallVector<PlacementAttr>> outPlacements;
  std::vector<const JsonNode *> outNodes;
  bool redistributeInputs = false;
};

/// `plan.context_parallel`: activations sharded along their sequence over a
/// mesh dim, and each scaled_dot_product_attention computed on the rank's
/// queries against the keys and values of every rank (PyTorch's
/// context_parallel).
struct ContextParallelDecl {
  int64_t meshDim = 0;
  /// The sequence dim of model inputs and outputs and of the activations of
  /// styles.
  int64_t sequenceDim = 1;
  /// How keys and values reach every rank: "allgather", "alltoall" (a ring
  /// of blocks passed to the next rank), or "" (the compiler's cost model).
  std::string rotateMethod;
  /// `load_balance`: the sequence is sharded head-tail (rank r of n holds
  /// pieces r and 2n-1-r of 2n), PyTorch's load balancing of causal
  /// attention.
  bool loadBalance = false;
  const JsonNode *node = nullptr;
};

/// `plan.fully_shard`: FSDP2's fully_shard units over the data-parallel
/// mesh dim. Each pattern's modules are units (nested as fully_shard calls
/// are; "" the root); a parameter belongs to the innermost unit whose module
/// owns it (its name's module path) and is sharded on its dim 0 over the
/// last data-parallel dim (replicated over the others: HSDP), beside its
/// tensor-parallel placement.
struct FullyShardDecl {
  std::vector<std::string> patterns;
  std::vector<const JsonNode *> patternNodes;
  const JsonNode *node = nullptr;
};

struct ModelPlan {
  MeshDecl mesh;
  std::string name = "main";
  std::vector<TensorDecl> inputs;
  std::vector<TensorDecl> parameters;
  /// Tensors that persist across steps (zero at load), shared by the
  /// entries.
  std::vector<TensorDecl> state;
  std::vector<StateUpdate> updates;
  std::vector<OpDecl> ops;
  /// `model.custom_ops`: ops implemented by a user's shared library.
  std::vector<std::shared_ptr<const CustomOpDecl>> customOps;
  llvm::SmallVector<std::string> outputs;
  llvm::SmallVector<const JsonNode *> outputNodes;
  /// The plan: the styles' default mesh dim, the data-parallel mesh dims
  /// (one; or several, HSDP's replicate then shard dims).
  int64_t styleMeshDim = 0;
  llvm::SmallVector<int64_t> dataParallelDims;
  std::optional<ContextParallelDecl> contextParallel;
  std::optional<FullyShardDecl> fullyShard;
  std::vector<StyleDecl> styles;
  std::vector<PlacementDecl> placements;
  std::vector<LocalMapDecl> localMaps;
  const JsonNode *planNode = nullptr;
  /// `model.training`, if any (read by TrainingSection.h).
  const JsonNode *trainingNode = nullptr;

  bool isDataParallelDim(int64_t dim) const {
    return llvm::is_contained(dataParallelDims, dim);
  }
};

/// Reads `root`, which must outlive the result. Errors are emitted through
/// `locator`.
mlir::FailureOr<ModelPlan> readModelPlan(const JsonNode &root,
                                         const JsonLocator &locator);

/// Parses a placement string (`R`, `S(1)`, `Shard(-1)`, `P(max)`, ...).
std::optional<PlacementAttr> parsePlacement(mlir::MLIRContext *context,
                                            llvm::StringRef text);

/// The element type of a dtype name (`f32`, `f16`, `bf16`, `i32`, `i64`).
std::optional<mlir::Type> parseElementType(mlir::MLIRContext *context,
                                           llvm::StringRef name);

/// Style names as written in plans.
llvm::StringRef stringifyStyleKind(StyleDecl::Kind kind);

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_MODELPLAN_H
