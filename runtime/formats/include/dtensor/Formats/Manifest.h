//===- Manifest.h - The artifact manifest -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An artifact is a directory holding manifest.json, the shared object named
// by "library" and optionally the single-device build named by
// "reference_library". The manifest describes the program: the ranks it was
// compiled for, its meshes, the collective groups its calls index, and the
// entry function's tensors with their global shapes and placements.
//
//   {
//     "format": "dtensor-artifact",
//     "format_version": 1,
//     "compiler_version": "0.1.0",
//     "target": "cpu",
//     "target_cpu": "skylake-avx512",
//     "world_size": 4,
//     "meshes": [{"name": "mesh", "shape": [2, 2], "dim_names": ["dp", "tp"],
//                 "device_ids": [0, 1, 2, 3]}],
//     "groups": [{"mesh": 0, "mesh_dims": [1]}],
//     "entry": "main",
//     "library": "program.so",
//     "reference_library": "reference.so",
//     "tensors": [{"name": "x", "role": "input", "dtype": "f32",
//                  "shape": [8, 16], "mesh": 0,
//                  "placements": ["S(0)", "R"]},
//                 {"name": "w", "role": "weight", ...,
//                  "init": {"kind": "normal", "mean": 0.0, "std": 0.02}},
//                 ...],
//     "content_hash": "sha256:<64 hex digits>"
//   }
//
// A manifest with several entries or state also has "entries": each entry's
// name, arguments and results as tensor indices, and optionally the
// "row_writes" the runtime checks before its steps ({"state", "slots",
// "positions", "rows", "cache_slots", "cache_positions"}, RowWriteInfo).
// A "cuda" target's manifest also has "gpu_arch" and "reference_target".
// "dim_names", "reference_library" and a weight's "init" (its initializer,
// with the parameters Init.h names for its kind) are optional. Keys this
// runtime does not know are ignored when reading (though covered by the content
// hash), so that newer compilers may add information without breaking older
// runtimes; they are not kept in the Manifest.
//
// The content hash is SHA-256 over the manifest object without
// "content_hash", serialized compactly with sorted keys (nlohmann::json's
// dump()), then one zero byte, then the bytes of the library, then those of
// the reference library if there is one. Reading decodes and validates the
// manifest first, then checks the hash, so a well-formed but edited manifest
// reports a hash mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_MANIFEST_H
#define DTENSOR_FORMATS_MANIFEST_H

#include "dtensor/Formats/DType.h"
#include "dtensor/Formats/Init.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::rt {

/// The value of the manifest's "format" key.
inline constexpr const char *kArtifactFormat = "dtensor-artifact";
/// The newest "format_version" this runtime reads and writes. Version 2
/// added the role "parameter" (a weight that an entry trains in place,
/// which an older runtime would treat as read-only); a manifest without
/// parameters is written as version 1, which older runtimes read.
inline constexpr int64_t kArtifactFormatVersion = 2;
/// The oldest version this runtime reads.
inline constexpr int64_t kOldestArtifactFormatVersion = 1;
/// File name of the manifest inside an artifact directory.
inline constexpr const char *kManifestFileName = "manifest.json";

/// What a tensor of the program is. State tensors live across steps: every
/// entry that takes one reads this rank's shard and may update it in place.
/// A parameter is a weight (loaded and initialized as one) that an entry
/// (a training step) updates in place.
enum class TensorRole { Input, Weight, Output, State, Parameter };

/// "input", "weight", "output", "state" or "parameter".
const char *tensorRoleName(TensorRole role);

/// Weights and parameters: the tensors loaded from weight files and
/// initializers.
inline bool isWeightRole(TensorRole role) {
  return role == TensorRole::Weight || role == TensorRole::Parameter;
}

/// The tensors that entries share rather than own: weights, parameters and
/// state.
inline bool isSharedRole(TensorRole role) {
  return isWeightRole(role) || role == TensorRole::State;
}

/// A device mesh: an N-D array of ranks.
struct MeshInfo {
  std::string name;
  std::vector<int64_t> shape;
  /// Optional; empty or one name per mesh dim.
  std::vector<std::string> dimNames;
  /// Rank of each mesh position, row-major over `shape`; a permutation of
  /// 0 .. size-1.
  std::vector<int64_t> deviceIds;
};

/// A collective group: some dims of a mesh (ranks ordered row-major over
/// them, the first listed most significant).
struct GroupInfo {
  int64_t mesh = 0;
  std::vector<int64_t> meshDims;
};

/// One collective call site of the program (the compiler's
/// --dtensor-number-collective-sites): what the compile-time communication
/// report knows of it, for comparison with the run-time trace.
struct CollectiveSiteInfo {
  /// "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
  /// "broadcast" or "shift".
  std::string kind;
  /// The reduction ("sum", ...), the model's module and the source position
  /// ("file:line:col"); each "" when it has none.
  std::string reduction, module, position;
  /// Bytes a rank sends in one call under the report's model; -1 when not
  /// statically known.
  int64_t bytesSent = -1;
};

/// A custom op the program calls ("custom_ops"; docs/custom-ops.md): the
/// kernel `symbol` of custom-op library `library` (an index into
/// Manifest::customOpLibraries), with its signature. The program names it
/// by its position in the list.
struct CustomOpInfo {
  std::string name, symbol;
  int64_t library = 0;
  std::vector<DType> inputs;
  DType output = DType::F32;
};

/// One tensor of the entry function, with its global shape and layout.
struct TensorInfo {
  std::string name;
  TensorRole role = TensorRole::Input;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t mesh = 0;
  /// One per mesh dim, in LayoutMath's notation ("S(0)", "R", "P(sum)").
  std::vector<std::string> placements;
  /// A weight's initializer, if it has one.
  std::optional<Initializer> init;
  /// An input or output of an artifact with several entries: its entry's
  /// name (inputs and outputs of different entries may share names).
  /// Weights and state are shared by the entries and have none.
  std::string entry;
};

/// A write of rows into a state tensor that the runtime checks before each
/// step of its entry ("row_writes"): a dtensor.write_rows of the entry
/// writes `rows` (T) consecutive positions of slot `slots[b]`, from position
/// `positions[b]`, into the state `state` of shape [S, M, ...] for every row
/// b, where `slots` and `positions` name 1-D i32 or i64 inputs of the entry,
/// replicated. A negative slot marks a padding row (nothing is written); any
/// other slot must be below S = `cacheSlots`, and its positions within
/// [0, M = `cachePositions`).
struct RowWriteInfo {
  std::string state, slots, positions;
  int64_t rows = 0;
  int64_t cacheSlots = 0, cachePositions = 0;

  bool operator==(const RowWriteInfo &other) const {
    return state == other.state && slots == other.slots &&
           positions == other.positions && rows == other.rows &&
           cacheSlots == other.cacheSlots &&
           cachePositions == other.cachePositions;
  }
};

/// An integer input of an entry whose values index the rows of a table or
/// name classes ("index_bounds": {"input", "bound", "table"[,
/// "ignore_index"]}; a training step's token ids and a cross-entropy's
/// targets): the runtime checks before each step that every value lies in
/// [0, bound) or equals ignore_index, and refuses the step otherwise.
struct IndexBoundInfo {
  std::string input;
  int64_t bound = 0;
  /// The weight or parameter whose rows the values index ("" if none).
  std::string table;
  /// A value that stands for no row or class (a cross-entropy's
  /// ignore_index), allowed beside [0, bound).
  std::optional<int64_t> ignoreIndex;

  bool operator==(const IndexBoundInfo &other) const {
    return input == other.input && bound == other.bound &&
           table == other.table && ignoreIndex == other.ignoreIndex;
  }
};

/// One entry point of the program: its tensors (indices into
/// Manifest::tensors) in the order of the exported function's descriptors.
struct EntryInfo {
  std::string name;
  /// Inputs, weights and state, in argument order.
  std::vector<int64_t> arguments;
  /// Outputs, in result order.
  std::vector<int64_t> results;
  /// The row writes to check before a step ("row_writes"; absent in the
  /// JSON when empty).
  std::vector<RowWriteInfo> rowWrites;
  /// The index inputs to check before a step ("index_bounds"; absent in the
  /// JSON when empty).
  std::vector<IndexBoundInfo> indexBounds;
};

/// The format version a manifest with `tensors` is written as: the oldest
/// that can describe them.
int64_t formatVersionFor(const std::vector<TensorInfo> &tensors);

/// The decoded manifest (without format and content hash, which are checked
/// and computed by the reader and writer).
struct Manifest {
  int64_t formatVersion = kOldestArtifactFormatVersion;
  std::string compilerVersion, target, targetCpu, entry, library,
      referenceLibrary;
  /// Target "cuda": the GPU architecture of the device code ("sm_90"), and
  /// the target of the reference library ("cpu"; empty: `target`).
  std::string gpuArch, referenceTarget;
  int64_t worldSize = 1;
  std::vector<MeshInfo> meshes;
  std::vector<GroupInfo> groups;
  /// The tensors. Without `entries`: the entry's arguments (inputs and
  /// weights) in argument order, then its results (outputs) in result order.
  std::vector<TensorInfo> tensors;
  /// The entry points ("entries"); `entry` names the default one. Empty in
  /// a manifest of one entry written before entries existed: then
  /// entryTable derives it from `entry` and the tensors' order.
  std::vector<EntryInfo> entries;
  /// The collective sites, by number ("collective_sites"; absent in the
  /// JSON when empty).
  std::vector<CollectiveSiteInfo> collectiveSites;
  /// The custom-op libraries the runtime opens at load, as paths
  /// ("custom_op_libraries"), and the custom ops the program calls
  /// ("custom_ops"); both absent in the JSON when empty.
  std::vector<std::string> customOpLibraries;
  std::vector<CustomOpInfo> customOps;
};

/// The entries of `manifest`: `entries`, or the one entry `entry` whose
/// arguments are the tensors before the first output and results the rest.
std::vector<EntryInfo> entryTable(const Manifest &manifest);

/// Validates `manifest`, computes the content hash over it and the libraries
/// in `dir`, and writes dir/manifest.json (through a temporary file renamed
/// into place, so a failure leaves no half-written manifest). "" or the
/// error.
std::string writeManifest(const Manifest &manifest, const std::string &dir);

/// Reads and validates dir/manifest.json and checks the content hash. "" or
/// the error, which names the file and the JSON path concerned.
std::string readManifest(const std::string &dir, Manifest &manifest);

/// Semantic checks shared by both: known format version, mesh shapes
/// positive and device ids a permutation, world_size >= mesh sizes, groups'
/// mesh index and dims in range (distinct), each tensor's mesh in range,
/// placements parse and their count equals the mesh rank, shard dims within
/// the tensor rank, shapes non-negative, names unique and non-empty, library
/// names plain file names (no '/' or ".."), initializers on weights only and
/// valid for the weight's dtype, collective sites of a known kind; entries
/// with unique names (the default among them) whose arguments are their own
/// inputs, weights and state and whose results their own outputs, names
/// unique among the shared tensors and within each entry; each row write
/// naming a state of its entry (rank 2 or more, S and M its dims 0 and 1)
/// and two replicated 1-D i32/i64 inputs of its entry of one length, with
/// 0 <= rows <= M; custom-op libraries non-empty paths, custom ops with
/// unique non-empty names, a symbol and a library index in range. "" or the
/// error.
std::string validateManifest(const Manifest &manifest);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_MANIFEST_H
