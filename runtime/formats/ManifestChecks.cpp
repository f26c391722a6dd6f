//===- ManifestChecks.cpp - The semantic checks of a manifest -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the types of the JSON cannot say: names unique and non-empty, indices
// in range, meshes, placements and initializers well-formed, each entry's
// tensors its own. Writing checks before it encodes, reading after it
// decodes; each error names its JSON path.
//
//===----------------------------------------------------------------------===//

#include "ManifestInternals.h"

#include "dtensor/Layout/CollectiveBytes.h"
#include "dtensor/Layout/LayoutMath.h"

#include <limits>
#include <set>

namespace dtensor::rt {

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string keyPath(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

std::string formatVersionError(int64_t version) {
  return "this runtime reads format versions " +
         std::to_string(kOldestArtifactFormatVersion) + " to " +
         std::to_string(kArtifactFormatVersion) + ", got " +
         std::to_string(version);
}

namespace {

bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos &&
         name.find("..") == std::string::npos;
}

bool checkLibraryName(ManifestChecker &check, const char *key,
                      const std::string &name) {
  if (!isPlainFileName(name))
    return check.fail(key, "expected a plain file name in the artifact "
                           "directory (no '/' or \"..\"), got \"" +
                               name + "\"");
  if (name == kManifestFileName)
    return check.fail(key, "the library cannot be called manifest.json");
  return true;
}

bool checkMesh(ManifestChecker &check, const MeshInfo &mesh,
               const std::string &path, int64_t worldSize) {
  if (mesh.name.empty())
    return check.fail(keyPath(path, "name"), "expected a non-empty name");
  // The manifest always lists the device ids (the layout library would take
  // an empty list as the identity).
  if (mesh.deviceIds.empty())
    return check.fail(keyPath(path, "device_ids"),
                      "expected the device id of every mesh position, got "
                      "an empty list");
  layout::Mesh layoutMesh(mesh.shape, mesh.deviceIds);
  if (std::string error = layoutMesh.validate(); !error.empty())
    return check.fail(path, "invalid mesh: " + error);
  if (layoutMesh.size() > worldSize)
    return check.fail(keyPath(path, "shape"),
                      "the mesh has " + std::to_string(layoutMesh.size()) +
                          " devices, more than world_size (" +
                          std::to_string(worldSize) + ")");
  if (!mesh.dimNames.empty()) {
    if (mesh.dimNames.size() != mesh.shape.size())
      return check.fail(keyPath(path, "dim_names"),
                        "expected one name per mesh dim (" +
                            std::to_string(mesh.shape.size()) + "), got " +
                            std::to_string(mesh.dimNames.size()));
    std::set<std::string> seen;
    for (size_t d = 0; d < mesh.dimNames.size(); ++d) {
      const std::string &name = mesh.dimNames[d];
      std::string namePath = indexPath(keyPath(path, "dim_names"), d);
      if (name.empty())
        return check.fail(namePath, "expected a non-empty name");
      if (!seen.insert(name).second)
        return check.fail(namePath, "duplicate mesh dim name \"" + name + "\"");
    }
  }
  return true;
}

bool checkGroup(ManifestChecker &check, const GroupInfo &group,
                const std::string &path, const std::vector<MeshInfo> &meshes) {
  if (group.mesh < 0 || group.mesh >= static_cast<int64_t>(meshes.size()))
    return check.fail(keyPath(path, "mesh"), "expected a mesh index in [0, " +
                                                 std::to_string(meshes.size()) +
                                                 "), got " +
                                                 std::to_string(group.mesh));
  int64_t meshRank = meshes[group.mesh].shape.size();
  std::set<int64_t> seen;
  for (size_t i = 0; i < group.meshDims.size(); ++i) {
    int64_t dim = group.meshDims[i];
    std::string dimPath = indexPath(keyPath(path, "mesh_dims"), i);
    if (dim < 0 || dim >= meshRank)
      return check.fail(dimPath, "expected a dim of mesh " +
                                     std::to_string(group.mesh) + " in [0, " +
                                     std::to_string(meshRank) + "), got " +
                                     std::to_string(dim));
    if (!seen.insert(dim).second)
      return check.fail(dimPath,
                        "mesh dim " + std::to_string(dim) + " listed twice");
  }
  return true;
}

std::string describeShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The row writes of `entry` (at `path`): each names a state the entry
/// takes, of rank 2 or more whose dims 0 and 1 are cache_slots and
/// cache_positions, and two inputs of the entry that are replicated 1-D
/// i32/i64 tensors of one length; 0 <= rows <= cache_positions.
bool checkRowWrites(ManifestChecker &check, const Manifest &manifest,
                    const EntryInfo &entry, const std::string &path) {
  // The entry's argument named `name` with role `role`, or nullptr.
  auto argument = [&](const std::string &name,
                      TensorRole role) -> const TensorInfo * {
    for (int64_t index : entry.arguments) {
      const TensorInfo &tensor = manifest.tensors[index];
      if (tensor.name == name && tensor.role == role)
        return &tensor;
    }
    return nullptr;
  };
  for (size_t i = 0; i < entry.rowWrites.size(); ++i) {
    const RowWriteInfo &write = entry.rowWrites[i];
    std::string at = indexPath(keyPath(path, "row_writes"), i);
    const TensorInfo *state = argument(write.state, TensorRole::State);
    if (!state)
      return check.fail(keyPath(at, "state"), "\"" + write.state +
                                                  "\" is not a state tensor of "
                                                  "entry \"" +
                                                  entry.name + "\"");
    if (state->shape.size() < 2)
      return check.fail(keyPath(at, "state"),
                        "the state \"" + state->name + "\" has shape " +
                            describeShape(state->shape) +
                            "; rows are written into [slots, positions, ...]");
    if (write.cacheSlots != state->shape[0])
      return check.fail(keyPath(at, "cache_slots"),
                        "expected " + std::to_string(state->shape[0]) +
                            ", dim 0 of the state \"" + state->name +
                            "\", got " + std::to_string(write.cacheSlots));
    if (write.cachePositions != state->shape[1])
      return check.fail(keyPath(at, "cache_positions"),
                        "expected " + std::to_string(state->shape[1]) +
                            ", dim 1 of the state \"" + state->name +
                            "\", got " + std::to_string(write.cachePositions));
    if (write.rows < 0 || write.rows > write.cachePositions)
      return check.fail(keyPath(at, "rows"),
                        "expected an integer in [0, " +
                            std::to_string(write.cachePositions) +
                            "] (the positions of the state \"" + state->name +
                            "\"), got " + std::to_string(write.rows));
    const TensorInfo *indices[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
      const char *key = k ? "positions" : "slots";
      const std::string &name = k ? write.positions : write.slots;
      const TensorInfo *input = argument(name, TensorRole::Input);
      if (!input)
        return check.fail(keyPath(at, key), "\"" + name +
                                                "\" is not an input of entry "
                                                "\"" +
                                                entry.name + "\"");
      if (input->dtype != DType::I32 && input->dtype != DType::I64)
        return check.fail(keyPath(at, key), "the input \"" + name + "\" is " +
                                                dtypeName(input->dtype) +
                                                "; row indices are i32 or i64");
      if (input->shape.size() != 1)
        return check.fail(keyPath(at, key),
                          "the input \"" + name + "\" has shape " +
                              describeShape(input->shape) +
                              "; expected one dim, an index per row");
      for (const std::string &placement : input->placements)
        if (placement != "R")
          return check.fail(keyPath(at, key),
                            "the input \"" + name + "\" is placed " +
                                placement +
                                "; row indices are checked replicated (\"R\" "
                                "on every mesh dim)");
      indices[k] = input;
    }
    if (indices[0]->shape[0] != indices[1]->shape[0])
      return check.fail(keyPath(at, "positions"),
                        "the input \"" + indices[1]->name + "\" has " +
                            std::to_string(indices[1]->shape[0]) +
                            " rows, the slots \"" + indices[0]->name + "\" " +
                            std::to_string(indices[0]->shape[0]));
  }
  return true;
}

/// The entries: names unique and non-empty, the default `entry` among
/// them, each argument an input of the entry, a weight or a state, each
/// result an output of the entry, each listed once, and every input and
/// output in its entry.
bool checkEntries(ManifestChecker &check, const Manifest &manifest) {
  std::set<std::string> names;
  bool multiEntry = manifest.entries.size() > 1;
  std::vector<int> uses(manifest.tensors.size(), 0);
  for (size_t e = 0; e < manifest.entries.size(); ++e) {
    const EntryInfo &entry = manifest.entries[e];
    std::string path = indexPath("entries", e);
    if (entry.name.empty())
      return check.fail(keyPath(path, "name"), "expected a non-empty name");
    if (!names.insert(entry.name).second)
      return check.fail(keyPath(path, "name"),
                        "duplicate entry name \"" + entry.name + "\"");
    std::set<int64_t> seen;
    for (bool results : {false, true}) {
      const std::vector<int64_t> &list =
          results ? entry.results : entry.arguments;
      const char *key = results ? "results" : "arguments";
      for (size_t i = 0; i < list.size(); ++i) {
        std::string at = indexPath(keyPath(path, key), i);
        int64_t index = list[i];
        if (index < 0 || index >= static_cast<int64_t>(manifest.tensors.size()))
          return check.fail(at, "expected a tensor index in [0, " +
                                    std::to_string(manifest.tensors.size()) +
                                    "), got " + std::to_string(index));
        if (!seen.insert(index).second)
          return check.fail(at, "tensor " + std::to_string(index) +
                                    " listed twice");
        const TensorInfo &tensor = manifest.tensors[index];
        bool shared = isSharedRole(tensor.role);
        bool fits = results ? tensor.role == TensorRole::Output
                            : tensor.role != TensorRole::Output;
        if (!fits)
          return check.fail(
              at, std::string("the ") + tensorRoleName(tensor.role) + " \"" +
                      tensor.name + "\" cannot be one of the " + key);
        if (!shared && multiEntry && tensor.entry != entry.name)
          return check.fail(at, std::string("the ") +
                                    tensorRoleName(tensor.role) + " \"" +
                                    tensor.name + "\" belongs to entry \"" +
                                    tensor.entry + "\"");
        if (!shared)
          ++uses[index];
      }
    }
    if (!checkRowWrites(check, manifest, entry, path))
      return false;
    // Each index bound names an integer input of the entry.
    for (size_t i = 0; i < entry.indexBounds.size(); ++i) {
      const IndexBoundInfo &bound = entry.indexBounds[i];
      std::string at = indexPath(keyPath(path, "index_bounds"), i);
      bool found = false;
      for (int64_t index : entry.arguments) {
        const TensorInfo &tensor = manifest.tensors[index];
        if (tensor.name == bound.input && tensor.role == TensorRole::Input &&
            (tensor.dtype == DType::I32 || tensor.dtype == DType::I64))
          found = true;
      }
      if (!found)
        return check.fail(keyPath(at, "input"),
                          "\"" + bound.input +
                              "\" is not an i32 or i64 input of entry \"" +
                              entry.name + "\"");
      if (bound.bound < 0)
        return check.fail(keyPath(at, "bound"),
                          "expected a non-negative integer, got " +
                              std::to_string(bound.bound));
    }
  }
  if (!names.count(manifest.entry))
    return check.fail("entry", "expected the name of one of the entries, got "
                               "\"" +
                                   manifest.entry + "\"");
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorInfo &tensor = manifest.tensors[i];
    bool shared = isSharedRole(tensor.role);
    if (!shared && uses[i] != 1)
      return check.fail(indexPath("tensors", i),
                        std::string("the ") + tensorRoleName(tensor.role) +
                            " \"" + tensor.name +
                            "\" is not in its entry's arguments or results");
  }
  return true;
}

bool checkTensor(ManifestChecker &check, const TensorInfo &tensor,
                 const std::string &path, const std::vector<MeshInfo> &meshes) {
  if (tensor.name.empty())
    return check.fail(keyPath(path, "name"), "expected a non-empty name");
  if (!dtypeFromInt(static_cast<int32_t>(tensor.dtype)))
    return check.fail(keyPath(path, "dtype"), "unknown dtype");
  for (size_t d = 0; d < tensor.shape.size(); ++d)
    if (tensor.shape[d] < 0)
      return check.fail(indexPath(keyPath(path, "shape"), d),
                        "expected a non-negative integer, got " +
                            std::to_string(tensor.shape[d]));
  int64_t elements = 1;
  for (int64_t dim : tensor.shape) {
    if (dim != 0 &&
        elements > std::numeric_limits<int64_t>::max() /
                       static_cast<int64_t>(dtypeSize(tensor.dtype)) / dim)
      return check.fail(keyPath(path, "shape"),
                        "the tensor's size in bytes overflows 64 bits");
    elements *= dim;
  }
  if (tensor.mesh < 0 || tensor.mesh >= static_cast<int64_t>(meshes.size()))
    return check.fail(keyPath(path, "mesh"), "expected a mesh index in [0, " +
                                                 std::to_string(meshes.size()) +
                                                 "), got " +
                                                 std::to_string(tensor.mesh));
  size_t meshRank = meshes[tensor.mesh].shape.size();
  if (tensor.placements.size() != meshRank)
    return check.fail(keyPath(path, "placements"),
                      "expected one placement per dim of mesh " +
                          std::to_string(tensor.mesh) + " (" +
                          std::to_string(meshRank) + "), got " +
                          std::to_string(tensor.placements.size()));
  int64_t rank = tensor.shape.size();
  for (size_t i = 0; i < tensor.placements.size(); ++i) {
    std::string placementPath = indexPath(keyPath(path, "placements"), i);
    std::optional<layout::Placement> placement =
        layout::parsePlacement(tensor.placements[i]);
    if (!placement)
      return check.fail(placementPath,
                        "expected a placement (\"S(<dim>)\", \"R\", "
                        "\"P(sum|avg|max|min)\"), got \"" +
                            tensor.placements[i] + "\"");
    if (placement->isShard() && !layout::normalizeDim(placement->dim, rank))
      return check.fail(placementPath,
                        "shard dim " + std::to_string(placement->dim) +
                            " is out of range for a tensor of rank " +
                            std::to_string(rank));
  }
  if (tensor.init) {
    if (!isWeightRole(tensor.role))
      return check.fail(keyPath(path, "init"),
                        std::string("only weights have an initializer, not "
                                    "the ") +
                            tensorRoleName(tensor.role) + " \"" + tensor.name +
                            "\"");
    if (std::string error = validateInitializer(*tensor.init, tensor.dtype);
        !error.empty())
      return check.fail(keyPath(path, "init"), error);
  }
  return true;
}

} // namespace

std::string checkManifest(const Manifest &manifest, const std::string &file) {
  ManifestChecker check(file);
  if (manifest.formatVersion < kOldestArtifactFormatVersion ||
      manifest.formatVersion > kArtifactFormatVersion) {
    check.fail("format_version", formatVersionError(manifest.formatVersion));
    return check.result();
  }
  if (manifest.worldSize < 1) {
    check.fail("world_size", "expected a positive integer, got " +
                                 std::to_string(manifest.worldSize));
    return check.result();
  }
  if (manifest.target.empty()) {
    check.fail("target", "expected a non-empty target name");
    return check.result();
  }
  if (manifest.entry.empty()) {
    check.fail("entry", "expected a non-empty function name");
    return check.result();
  }
  if (!checkLibraryName(check, "library", manifest.library))
    return check.result();
  if (!manifest.referenceLibrary.empty()) {
    if (!checkLibraryName(check, "reference_library",
                          manifest.referenceLibrary))
      return check.result();
    if (manifest.referenceLibrary == manifest.library) {
      check.fail("reference_library",
                 "expected a file other than the library \"" +
                     manifest.library + "\"");
      return check.result();
    }
  }

  std::set<std::string> meshNames;
  for (size_t i = 0; i < manifest.meshes.size(); ++i) {
    std::string path = indexPath("meshes", i);
    if (!checkMesh(check, manifest.meshes[i], path, manifest.worldSize))
      return check.result();
    if (!meshNames.insert(manifest.meshes[i].name).second) {
      check.fail(keyPath(path, "name"),
                 "duplicate mesh name \"" + manifest.meshes[i].name + "\"");
      return check.result();
    }
  }
  for (size_t i = 0; i < manifest.groups.size(); ++i)
    if (!checkGroup(check, manifest.groups[i], indexPath("groups", i),
                    manifest.meshes))
      return check.result();

  if (!manifest.entries.empty() && !checkEntries(check, manifest))
    return check.result();

  // Names are unique among the shared tensors and within each entry (whose
  // inputs and outputs checkEntries matched with the entries).
  std::set<std::pair<std::string, std::string>> tensorNames;
  std::set<std::string> sharedNames;
  bool seenOutput = false;
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorInfo &tensor = manifest.tensors[i];
    std::string path = indexPath("tensors", i);
    if (!checkTensor(check, tensor, path, manifest.meshes))
      return check.result();
    bool shared = isSharedRole(tensor.role);
    if (tensor.role == TensorRole::Parameter && manifest.formatVersion < 2) {
      check.fail(keyPath(path, "role"),
                 "the role \"parameter\" needs format version 2, the "
                 "manifest is version " +
                     std::to_string(manifest.formatVersion));
      return check.result();
    }
    if (shared && !tensor.entry.empty()) {
      check.fail(keyPath(path, "entry"),
                 std::string("the ") + tensorRoleName(tensor.role) + " \"" +
                     tensor.name +
                     "\" is shared by the entries and names none");
      return check.result();
    }
    bool fresh = tensorNames.insert({tensor.entry, tensor.name}).second;
    if (shared)
      sharedNames.insert(tensor.name);
    if (!fresh) {
      check.fail(keyPath(path, "name"),
                 "duplicate tensor name \"" + tensor.name + "\"");
      return check.result();
    }
    if (!manifest.entries.empty())
      continue;
    if (tensor.role == TensorRole::State) {
      check.fail(keyPath(path, "role"),
                 "state tensors need the manifest's \"entries\"");
      return check.result();
    }
    if (tensor.role == TensorRole::Output) {
      seenOutput = true;
    } else if (seenOutput) {
      check.fail(keyPath(path, "role"),
                 std::string("the ") + tensorRoleName(tensor.role) + " \"" +
                     tensor.name +
                     "\" comes after an output (expected the arguments "
                     "first, then the results)");
      return check.result();
    }
  }
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorInfo &tensor = manifest.tensors[i];
    if (!tensor.entry.empty() && sharedNames.count(tensor.name)) {
      check.fail(keyPath(indexPath("tensors", i), "name"),
                 "the " + std::string(tensorRoleName(tensor.role)) + " \"" +
                     tensor.name + "\" of entry \"" + tensor.entry +
                     "\" has the name of a shared tensor");
      return check.result();
    }
  }
  for (size_t i = 0; i < manifest.collectiveSites.size(); ++i) {
    const CollectiveSiteInfo &site = manifest.collectiveSites[i];
    std::string path = indexPath("collective_sites", i);
    if (!layout::collectiveKindNamed(site.kind)) {
      check.fail(keyPath(path, "kind"),
                 "expected \"all_reduce\", \"all_gather\", "
                 "\"reduce_scatter\", \"all_to_all\", \"broadcast\" or "
                 "\"shift\", got \"" +
                     site.kind + "\"");
      return check.result();
    }
    if (site.bytesSent < -1) {
      check.fail(keyPath(path, "bytes_sent"),
                 "expected a non-negative integer, got " +
                     std::to_string(site.bytesSent));
      return check.result();
    }
  }
  for (size_t i = 0; i < manifest.customOpLibraries.size(); ++i)
    if (manifest.customOpLibraries[i].empty()) {
      check.fail(indexPath("custom_op_libraries", i),
                 "expected the path of a shared library, got \"\"");
      return check.result();
    }
  std::set<std::string> customNames;
  for (size_t i = 0; i < manifest.customOps.size(); ++i) {
    const CustomOpInfo &op = manifest.customOps[i];
    std::string path = indexPath("custom_ops", i);
    if (op.name.empty() || !customNames.insert(op.name).second) {
      check.fail(keyPath(path, "name"),
                 op.name.empty()
                     ? std::string("expected a non-empty name")
                     : "custom op \"" + op.name + "\" is listed twice");
      return check.result();
    }
    if (op.symbol.empty()) {
      check.fail(keyPath(path, "symbol"), "expected a non-empty symbol");
      return check.result();
    }
    if (op.library < 0 ||
        op.library >= static_cast<int64_t>(manifest.customOpLibraries.size())) {
      check.fail(keyPath(path, "library"),
                 "library " + std::to_string(op.library) +
                     " is out of range: the manifest lists " +
                     std::to_string(manifest.customOpLibraries.size()) +
                     " custom-op libraries");
      return check.result();
    }
  }
  return "";
}

std::string validateManifest(const Manifest &manifest) {
  return checkManifest(manifest, kManifestFileName);
}

} // namespace dtensor::rt
