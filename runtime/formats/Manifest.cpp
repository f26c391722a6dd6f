//===- Manifest.cpp - The artifact manifest -------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading decodes the JSON into a Manifest with a JSON path for every type
// error, then runs the semantic checks (validate), then checks the content
// hash. Writing validates, hashes and renames a temporary file into place.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Formats/Manifest.h"

#include "AtomicFile.h"
#include "JsonText.h"
#include "Sha256.h"
#include "dtensor/Layout/CollectiveBytes.h"
#include "dtensor/Layout/LayoutMath.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unistd.h>

using json = nlohmann::json;

namespace dtensor::rt {

namespace {

constexpr const char *kContentHashKey = "content_hash";
constexpr const char *kHashPrefix = "sha256:";

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string keyPath(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

//===----------------------------------------------------------------------===//
// Semantic checks
//===----------------------------------------------------------------------===//

/// Collects the first error of a check, as "<file>: <path>: <message>".
class Checker {
public:
  explicit Checker(std::string file) : file(std::move(file)) {}

  bool fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  const std::string &result() const { return error; }

private:
  std::string file;
  std::string error;
};

bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos &&
         name.find("..") == std::string::npos;
}

bool checkLibraryName(Checker &check, const char *key,
                      const std::string &name) {
  if (!isPlainFileName(name))
    return check.fail(key, "expected a plain file name in the artifact "
                           "directory (no '/' or \"..\"), got \"" +
                               name + "\"");
  if (name == kManifestFileName)
    return check.fail(key, "the library cannot be called manifest.json");
  return true;
}

bool checkMesh(Checker &check, const MeshInfo &mesh, const std::string &path,
               int64_t worldSize) {
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

bool checkGroup(Checker &check, const GroupInfo &group, const std::string &path,
                const std::vector<MeshInfo> &meshes) {
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
bool checkRowWrites(Checker &check, const Manifest &manifest,
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
      return check.fail(keyPath(at, "state"),
                        "\"" + write.state + "\" is not a state tensor of "
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
        return check.fail(keyPath(at, key),
                          "the input \"" + name + "\" is " +
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
bool checkEntries(Checker &check, const Manifest &manifest) {
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
        bool shared = tensor.role == TensorRole::Weight ||
                      tensor.role == TensorRole::State;
        bool fits = results ? tensor.role == TensorRole::Output
                            : tensor.role != TensorRole::Output;
        if (!fits)
          return check.fail(at, std::string("the ") +
                                    tensorRoleName(tensor.role) + " \"" +
                                    tensor.name + "\" cannot be one of the " +
                                    key);
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
  }
  if (!names.count(manifest.entry))
    return check.fail("entry", "expected the name of one of the entries, got "
                               "\"" +
                                   manifest.entry + "\"");
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorInfo &tensor = manifest.tensors[i];
    bool shared = tensor.role == TensorRole::Weight ||
                  tensor.role == TensorRole::State;
    if (!shared && uses[i] != 1)
      return check.fail(indexPath("tensors", i),
                        std::string("the ") + tensorRoleName(tensor.role) +
                            " \"" + tensor.name +
                            "\" is not in its entry's arguments or results");
  }
  return true;
}

bool checkTensor(Checker &check, const TensorInfo &tensor,
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
    if (tensor.role != TensorRole::Weight)
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

std::string validate(const Manifest &manifest, const std::string &file) {
  Checker check(file);
  if (manifest.formatVersion != kArtifactFormatVersion) {
    check.fail("format_version", "this runtime reads format version " +
                                     std::to_string(kArtifactFormatVersion) +
                                     " only, got " +
                                     std::to_string(manifest.formatVersion));
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
    bool shared = tensor.role == TensorRole::Weight ||
                  tensor.role == TensorRole::State;
    if (shared && !tensor.entry.empty()) {
      check.fail(keyPath(path, "entry"),
                 std::string("the ") + tensorRoleName(tensor.role) + " \"" +
                     tensor.name + "\" is shared by the entries and names none");
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
                 op.name.empty() ? std::string("expected a non-empty name")
                                 : "custom op \"" + op.name +
                                       "\" is listed twice");
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

//===----------------------------------------------------------------------===//
// JSON encoding
//===----------------------------------------------------------------------===//

/// The manifest as JSON, without the content hash.
json toJson(const Manifest &manifest) {
  json root = json::object();
  root["format"] = kArtifactFormat;
  root["format_version"] = manifest.formatVersion;
  root["compiler_version"] = manifest.compilerVersion;
  root["target"] = manifest.target;
  root["target_cpu"] = manifest.targetCpu;
  root["world_size"] = manifest.worldSize;
  root["entry"] = manifest.entry;
  root["library"] = manifest.library;
  if (!manifest.referenceLibrary.empty())
    root["reference_library"] = manifest.referenceLibrary;
  if (!manifest.gpuArch.empty())
    root["gpu_arch"] = manifest.gpuArch;
  if (!manifest.referenceTarget.empty())
    root["reference_target"] = manifest.referenceTarget;
  json meshes = json::array();
  for (const MeshInfo &mesh : manifest.meshes) {
    json entry = {{"name", mesh.name},
                  {"shape", mesh.shape},
                  {"device_ids", mesh.deviceIds}};
    if (!mesh.dimNames.empty())
      entry["dim_names"] = mesh.dimNames;
    meshes.push_back(std::move(entry));
  }
  root["meshes"] = std::move(meshes);
  json groups = json::array();
  for (const GroupInfo &group : manifest.groups)
    groups.push_back({{"mesh", group.mesh}, {"mesh_dims", group.meshDims}});
  root["groups"] = std::move(groups);
  json tensors = json::array();
  for (const TensorInfo &tensor : manifest.tensors) {
    json entry = {{"name", tensor.name},
                  {"role", tensorRoleName(tensor.role)},
                  {"dtype", dtypeName(tensor.dtype)},
                  {"shape", tensor.shape},
                  {"mesh", tensor.mesh},
                  {"placements", tensor.placements}};
    if (tensor.init) {
      json init = {{"kind", initKindName(tensor.init->kind)}};
      std::vector<const char *> names = initParameterNames(tensor.init->kind);
      for (size_t i = 0; i < names.size(); ++i)
        init[names[i]] = tensor.init->params[i];
      entry["init"] = std::move(init);
    }
    if (!tensor.entry.empty())
      entry["entry"] = tensor.entry;
    tensors.push_back(std::move(entry));
  }
  root["tensors"] = std::move(tensors);
  if (!manifest.entries.empty()) {
    json entries = json::array();
    for (const EntryInfo &entry : manifest.entries) {
      json object = {{"name", entry.name},
                     {"arguments", entry.arguments},
                     {"results", entry.results}};
      if (!entry.rowWrites.empty()) {
        json writes = json::array();
        for (const RowWriteInfo &write : entry.rowWrites)
          writes.push_back({{"state", write.state},
                            {"slots", write.slots},
                            {"positions", write.positions},
                            {"rows", write.rows},
                            {"cache_slots", write.cacheSlots},
                            {"cache_positions", write.cachePositions}});
        object["row_writes"] = std::move(writes);
      }
      entries.push_back(std::move(object));
    }
    root["entries"] = std::move(entries);
  }
  if (!manifest.collectiveSites.empty()) {
    json sites = json::array();
    for (const CollectiveSiteInfo &site : manifest.collectiveSites) {
      json entry = {{"kind", site.kind}};
      if (!site.reduction.empty())
        entry["reduction"] = site.reduction;
      if (!site.module.empty())
        entry["module"] = site.module;
      if (!site.position.empty())
        entry["position"] = site.position;
      if (site.bytesSent >= 0)
        entry["bytes_sent"] = site.bytesSent;
      sites.push_back(std::move(entry));
    }
    root["collective_sites"] = std::move(sites);
  }
  if (!manifest.customOpLibraries.empty())
    root["custom_op_libraries"] = manifest.customOpLibraries;
  if (!manifest.customOps.empty()) {
    json ops = json::array();
    for (const CustomOpInfo &op : manifest.customOps) {
      json inputs = json::array();
      for (DType dtype : op.inputs)
        inputs.push_back(dtypeName(dtype));
      ops.push_back({{"name", op.name},
                     {"symbol", op.symbol},
                     {"library", op.library},
                     {"inputs", std::move(inputs)},
                     {"output", dtypeName(op.output)}});
    }
    root["custom_ops"] = std::move(ops);
  }
  return root;
}

//===----------------------------------------------------------------------===//
// JSON decoding
//===----------------------------------------------------------------------===//

/// Decodes JSON values into C++ ones, recording the first type error with
/// its JSON path.
class Decoder {
public:
  explicit Decoder(Checker &check) : check(check) {}

  /// The member `key` of `object` (at `path`), or nullptr; a missing
  /// required member is an error.
  const json *member(const json &object, const std::string &path,
                     const char *key, bool required = true) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required)
        check.fail(path, std::string("missing key \"") + key + "\"");
      return nullptr;
    }
    return &*it;
  }

  bool object(const json &value, const std::string &path) {
    if (value.is_object())
      return true;
    return check.fail(path, "expected an object, got " + describeJson(value));
  }

  bool array(const json &value, const std::string &path) {
    if (value.is_array())
      return true;
    return check.fail(path, "expected an array, got " + describeJson(value));
  }

  bool string(const json &value, const std::string &path, std::string &out) {
    if (!value.is_string())
      return check.fail(path, "expected a string, got " + describeJson(value));
    out = value.get<std::string>();
    return true;
  }

  /// An integer; `expectation` words the message ("an integer", "a
  /// non-negative integer").
  bool integer(const json &value, const std::string &path, int64_t &out,
               const char *expectation = "an integer") {
    bool fits = value.is_number_integer() &&
                (!value.is_number_unsigned() ||
                 value.get<uint64_t>() <=
                     uint64_t(std::numeric_limits<int64_t>::max()));
    if (!fits)
      return check.fail(path, std::string("expected ") + expectation +
                                  ", got " + describeJson(value));
    out = value.get<int64_t>();
    return true;
  }

  bool integers(const json &value, const std::string &path,
                std::vector<int64_t> &out,
                const char *expectation = "an integer") {
    if (!array(value, path))
      return false;
    out.clear();
    for (size_t i = 0; i < value.size(); ++i) {
      int64_t element;
      if (!integer(value[i], indexPath(path, i), element, expectation))
        return false;
      out.push_back(element);
    }
    return true;
  }

  bool strings(const json &value, const std::string &path,
               std::vector<std::string> &out) {
    if (!array(value, path))
      return false;
    out.clear();
    for (size_t i = 0; i < value.size(); ++i) {
      std::string element;
      if (!string(value[i], indexPath(path, i), element))
        return false;
      out.push_back(std::move(element));
    }
    return true;
  }

  /// Decodes the required member `key` with `decode(value, path, out)`.
  template <typename T, typename DecodeFn>
  bool field(const json &object, const std::string &path, const char *key,
             T &out, DecodeFn decode) {
    const json *value = member(object, path, key);
    return value && decode(*value, keyPath(path, key), out);
  }

  bool stringField(const json &object, const std::string &path, const char *key,
                   std::string &out) {
    return field(object, path, key, out,
                 [&](const json &v, const std::string &p, std::string &o) {
                   return string(v, p, o);
                 });
  }

  bool integerField(const json &object, const std::string &path,
                    const char *key, int64_t &out,
                    const char *expectation = "an integer") {
    return field(object, path, key, out,
                 [&](const json &v, const std::string &p, int64_t &o) {
                   return integer(v, p, o, expectation);
                 });
  }

  bool integersField(const json &object, const std::string &path,
                     const char *key, std::vector<int64_t> &out,
                     const char *expectation = "an integer") {
    return field(
        object, path, key, out,
        [&](const json &v, const std::string &p, std::vector<int64_t> &o) {
          return integers(v, p, o, expectation);
        });
  }

  bool mesh(const json &value, const std::string &path, MeshInfo &out) {
    if (!object(value, path) || !stringField(value, path, "name", out.name) ||
        !integersField(value, path, "shape", out.shape, "a positive integer") ||
        !integersField(value, path, "device_ids", out.deviceIds,
                       "a non-negative integer"))
      return false;
    if (const json *names = member(value, path, "dim_names", false))
      return strings(*names, keyPath(path, "dim_names"), out.dimNames);
    return true;
  }

  bool group(const json &value, const std::string &path, GroupInfo &out) {
    return object(value, path) &&
           integerField(value, path, "mesh", out.mesh,
                        "a non-negative mesh index") &&
           integersField(value, path, "mesh_dims", out.meshDims,
                         "a non-negative mesh dim");
  }

  bool tensor(const json &value, const std::string &path, TensorInfo &out) {
    if (!object(value, path) || !stringField(value, path, "name", out.name))
      return false;
    std::string role, dtype;
    if (!stringField(value, path, "role", role))
      return false;
    if (role == "input")
      out.role = TensorRole::Input;
    else if (role == "weight")
      out.role = TensorRole::Weight;
    else if (role == "output")
      out.role = TensorRole::Output;
    else if (role == "state")
      out.role = TensorRole::State;
    else
      return check.fail(keyPath(path, "role"),
                        "expected \"input\", \"weight\", \"output\" or "
                        "\"state\", got \"" +
                            role + "\"");
    if (!stringField(value, path, "dtype", dtype))
      return false;
    std::optional<DType> parsed = parseDType(dtype);
    if (!parsed)
      return check.fail(keyPath(path, "dtype"),
                        "expected one of f32, f64, f16, bf16, i32, i64, i8, "
                        "bool, got \"" +
                            dtype + "\"");
    out.dtype = *parsed;
    if (!integersField(value, path, "shape", out.shape,
                       "a non-negative integer") ||
        !integerField(value, path, "mesh", out.mesh,
                      "a non-negative mesh index"))
      return false;
    if (!field(value, path, "placements", out.placements,
               [&](const json &v, const std::string &p,
                   std::vector<std::string> &o) { return strings(v, p, o); }))
      return false;
    out.entry.clear();
    if (const json *entry = member(value, path, "entry", false))
      if (!string(*entry, keyPath(path, "entry"), out.entry))
        return false;
    out.init.reset();
    if (const json *init = member(value, path, "init", false)) {
      out.init.emplace();
      return initializer(*init, keyPath(path, "init"), *out.init);
    }
    return true;
  }

  /// {"name": ..., "arguments": [...], "results": [...], and optional
  /// "row_writes": [...]}.
  bool entry(const json &value, const std::string &path, EntryInfo &out) {
    if (!object(value, path) || !stringField(value, path, "name", out.name) ||
        !integersField(value, path, "arguments", out.arguments,
                       "a tensor index") ||
        !integersField(value, path, "results", out.results, "a tensor index"))
      return false;
    out.rowWrites.clear();
    const json *writes = member(value, path, "row_writes", false);
    if (!writes)
      return true;
    std::string writesPath = keyPath(path, "row_writes");
    if (!array(*writes, writesPath))
      return false;
    for (size_t i = 0; i < writes->size(); ++i) {
      RowWriteInfo write;
      if (!rowWrite((*writes)[i], indexPath(writesPath, i), write))
        return false;
      out.rowWrites.push_back(std::move(write));
    }
    return true;
  }

  /// {"state", "slots", "positions", "rows", "cache_slots",
  /// "cache_positions"}.
  bool rowWrite(const json &value, const std::string &path,
                RowWriteInfo &out) {
    return object(value, path) &&
           stringField(value, path, "state", out.state) &&
           stringField(value, path, "slots", out.slots) &&
           stringField(value, path, "positions", out.positions) &&
           integerField(value, path, "rows", out.rows,
                        "a non-negative integer") &&
           integerField(value, path, "cache_slots", out.cacheSlots,
                        "a non-negative integer") &&
           integerField(value, path, "cache_positions", out.cachePositions,
                        "a non-negative integer");
  }

  /// {"kind": ..., and optional "reduction", "module", "position",
  /// "bytes_sent"}.
  bool site(const json &value, const std::string &path,
            CollectiveSiteInfo &out) {
    if (!object(value, path) || !stringField(value, path, "kind", out.kind))
      return false;
    for (auto [key, text] : {std::pair{"reduction", &out.reduction},
                             std::pair{"module", &out.module},
                             std::pair{"position", &out.position}})
      if (const json *member = this->member(value, path, key, false))
        if (!string(*member, keyPath(path, key), *text))
          return false;
    out.bytesSent = -1;
    if (const json *bytes = member(value, path, "bytes_sent", false))
      return integer(*bytes, keyPath(path, "bytes_sent"), out.bytesSent,
                     "a non-negative integer") &&
             (out.bytesSent >= 0 ||
              check.fail(keyPath(path, "bytes_sent"),
                         "expected a non-negative integer, got " +
                             std::to_string(out.bytesSent)));
    return true;
  }

  /// A dtype name at `path`.
  bool dtypeValue(const json &value, const std::string &path, DType &out) {
    std::string text;
    if (!string(value, path, text))
      return false;
    std::optional<DType> parsed = parseDType(text);
    if (!parsed)
      return check.fail(path, "expected one of f32, f64, f16, bf16, i32, "
                              "i64, i8, bool, got \"" +
                                  text + "\"");
    out = *parsed;
    return true;
  }

  /// {"name", "symbol", "library", "inputs": [dtypes], "output": dtype}.
  bool customOp(const json &value, const std::string &path,
                CustomOpInfo &out) {
    if (!object(value, path) || !stringField(value, path, "name", out.name) ||
        !stringField(value, path, "symbol", out.symbol) ||
        !integerField(value, path, "library", out.library,
                      "a custom-op library index"))
      return false;
    const json *inputs = member(value, path, "inputs");
    std::string inputsPath = keyPath(path, "inputs");
    if (!inputs || !array(*inputs, inputsPath))
      return false;
    out.inputs.clear();
    for (size_t i = 0; i < inputs->size(); ++i) {
      DType dtype;
      if (!dtypeValue((*inputs)[i], indexPath(inputsPath, i), dtype))
        return false;
      out.inputs.push_back(dtype);
    }
    const json *output = member(value, path, "output");
    return output && dtypeValue(*output, keyPath(path, "output"), out.output);
  }

  /// {"kind": ..., and the kind's parameters}.
  bool initializer(const json &value, const std::string &path,
                   Initializer &out) {
    std::string kind;
    if (!object(value, path) || !stringField(value, path, "kind", kind))
      return false;
    std::optional<InitKind> parsed = parseInitKind(kind);
    if (!parsed)
      return check.fail(keyPath(path, "kind"),
                        "expected \"zeros\", \"ones\", \"constant\", "
                        "\"normal\" or \"uniform\", got \"" +
                            kind + "\"");
    out.kind = *parsed;
    std::vector<const char *> names = initParameterNames(out.kind);
    for (size_t i = 0; i < names.size(); ++i) {
      const json *param = member(value, path, names[i]);
      if (!param)
        return false;
      if (!param->is_number())
        return check.fail(keyPath(path, names[i]),
                          "expected a number, got " + describeJson(*param));
      out.params[i] = param->get<double>();
    }
    return true;
  }

  /// Decodes the array member `key` element by element.
  template <typename T, typename DecodeFn>
  bool list(const json &root, const char *key, std::vector<T> &out,
            DecodeFn decode) {
    const json *value = member(root, "", key);
    if (!value || !array(*value, key))
      return false;
    out.clear();
    for (size_t i = 0; i < value->size(); ++i) {
      T element;
      if (!decode((*value)[i], indexPath(key, i), element))
        return false;
      out.push_back(std::move(element));
    }
    return true;
  }

  bool manifest(const json &root, Manifest &out) {
    if (!integerField(root, "", "format_version", out.formatVersion) ||
        !stringField(root, "", "compiler_version", out.compilerVersion) ||
        !stringField(root, "", "target", out.target) ||
        !stringField(root, "", "target_cpu", out.targetCpu) ||
        !integerField(root, "", "world_size", out.worldSize,
                      "a positive integer") ||
        !stringField(root, "", "entry", out.entry) ||
        !stringField(root, "", "library", out.library))
      return false;
    out.referenceLibrary.clear();
    if (const json *reference = member(root, "", "reference_library", false))
      if (!string(*reference, "reference_library", out.referenceLibrary))
        return false;
    out.gpuArch.clear();
    if (const json *arch = member(root, "", "gpu_arch", false))
      if (!string(*arch, "gpu_arch", out.gpuArch))
        return false;
    out.referenceTarget.clear();
    if (const json *target = member(root, "", "reference_target", false))
      if (!string(*target, "reference_target", out.referenceTarget))
        return false;
    return list(root, "meshes", out.meshes,
                [&](const json &v, const std::string &p, MeshInfo &o) {
                  return mesh(v, p, o);
                }) &&
           list(root, "groups", out.groups,
                [&](const json &v, const std::string &p, GroupInfo &o) {
                  return group(v, p, o);
                }) &&
           list(root, "tensors", out.tensors,
                [&](const json &v, const std::string &p, TensorInfo &o) {
                  return tensor(v, p, o);
                }) &&
           ((out.entries.clear(), !member(root, "", "entries", false)) ||
            list(root, "entries", out.entries,
                 [&](const json &v, const std::string &p, EntryInfo &o) {
                   return entry(v, p, o);
                 })) &&
           ((out.collectiveSites.clear(),
             !member(root, "", "collective_sites", false)) ||
            list(root, "collective_sites", out.collectiveSites,
                 [&](const json &v, const std::string &p,
                     CollectiveSiteInfo &o) { return site(v, p, o); })) &&
           ((out.customOpLibraries.clear(),
             !member(root, "", "custom_op_libraries", false)) ||
            list(root, "custom_op_libraries", out.customOpLibraries,
                 [&](const json &v, const std::string &p, std::string &o) {
                   return string(v, p, o);
                 })) &&
           ((out.customOps.clear(), !member(root, "", "custom_ops", false)) ||
            list(root, "custom_ops", out.customOps,
                 [&](const json &v, const std::string &p, CustomOpInfo &o) {
                   return customOp(v, p, o);
                 }));
  }

private:
  Checker &check;
};

//===----------------------------------------------------------------------===//
// Content hash
//===----------------------------------------------------------------------===//

/// Feeds the bytes of `path` to `sha`. "" or the error.
std::string hashFile(Sha256 &sha, const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::vector<char> chunk(1 << 20);
  size_t got;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0)
    sha.update(chunk.data(), got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return "cannot read " + path + ": " + std::strerror(errno);
  return "";
}

/// "sha256:<hex>" over `withoutHash` (the manifest object without
/// content_hash) and the libraries in `dir`. "" or the error.
std::string contentHash(const json &withoutHash, const Manifest &manifest,
                        const std::string &dir, std::string &hash) {
  Sha256 sha;
  std::string text = withoutHash.dump();
  sha.update(text.data(), text.size());
  const uint8_t separator = 0;
  sha.update(&separator, 1);
  if (std::string error = hashFile(sha, joinPath(dir, manifest.library));
      !error.empty())
    return error;
  if (!manifest.referenceLibrary.empty())
    if (std::string error =
            hashFile(sha, joinPath(dir, manifest.referenceLibrary));
        !error.empty())
      return error;
  hash = kHashPrefix + toHex(sha.finish());
  return "";
}

bool isContentHash(const std::string &text) {
  std::string prefix = kHashPrefix;
  if (text.size() != prefix.size() + 64 ||
      text.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (size_t i = prefix.size(); i < text.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(text[i])) ||
        std::isupper(static_cast<unsigned char>(text[i])))
      return false;
  return true;
}

} // namespace

const char *tensorRoleName(TensorRole role) {
  switch (role) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Weight:
    return "weight";
  case TensorRole::Output:
    return "output";
  case TensorRole::State:
    return "state";
  }
  return "unknown";
}

std::vector<EntryInfo> entryTable(const Manifest &manifest) {
  if (!manifest.entries.empty())
    return manifest.entries;
  EntryInfo entry;
  entry.name = manifest.entry;
  for (size_t i = 0; i < manifest.tensors.size(); ++i)
    (manifest.tensors[i].role == TensorRole::Output ? entry.results
                                                    : entry.arguments)
        .push_back(static_cast<int64_t>(i));
  return {entry};
}

std::string validateManifest(const Manifest &manifest) {
  return validate(manifest, kManifestFileName);
}

std::string writeManifest(const Manifest &manifest, const std::string &dir) {
  const std::string path = joinPath(dir, kManifestFileName);
  if (std::string error = validate(manifest, path); !error.empty())
    return error;
  std::string text;
  try {
    json root = toJson(manifest);
    std::string hash;
    if (std::string error = contentHash(root, manifest, dir, hash);
        !error.empty())
      return path + ": " + error;
    root[kContentHashKey] = hash;
    text = root.dump(2) + "\n";
  } catch (const json::exception &e) {
    return path + ": cannot serialize the manifest (" + e.what() + ")";
  }

  return writeFileAtomically(path, [&](const WriteBytesFn &write) {
    return write(text.data(), text.size());
  });
}

std::string readManifest(const std::string &dir, Manifest &manifest) {
  const std::string path = joinPath(dir, kManifestFileName);
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::stringstream contents;
  contents << stream.rdbuf();
  if (stream.bad())
    return "cannot read " + path;

  json root = json::parse(contents.str(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return path + ": not valid JSON (truncated or malformed)";
  Checker check(path);
  if (!root.is_object()) {
    check.fail("", "expected a JSON object at the top level, got " +
                       describeJson(root));
    return check.result();
  }

  try {
    Decoder decode(check);
    std::string format;
    if (!decode.stringField(root, "", "format", format))
      return check.result();
    if (format != kArtifactFormat) {
      check.fail("format", std::string("expected \"") + kArtifactFormat +
                               "\", got \"" + format + "\"");
      return check.result();
    }
    int64_t version;
    if (!decode.integerField(root, "", "format_version", version))
      return check.result();
    if (version != kArtifactFormatVersion) {
      check.fail("format_version", "this runtime reads format version " +
                                       std::to_string(kArtifactFormatVersion) +
                                       " only, got " + std::to_string(version));
      return check.result();
    }
    std::string storedHash;
    if (!decode.stringField(root, "", kContentHashKey, storedHash))
      return check.result();
    if (!isContentHash(storedHash)) {
      check.fail(kContentHashKey,
                 "expected \"sha256:\" and 64 lower-case hex digits, got \"" +
                     storedHash + "\"");
      return check.result();
    }

    Manifest decoded;
    if (!decode.manifest(root, decoded))
      return check.result();
    if (std::string error = validate(decoded, path); !error.empty())
      return error;

    json withoutHash = root;
    withoutHash.erase(kContentHashKey);
    std::string hash;
    if (std::string error = contentHash(withoutHash, decoded, dir, hash);
        !error.empty())
      return path + ": " + error;
    if (hash != storedHash)
      return path + ": content hash mismatch (the artifact was modified "
                    "after it was written)";
    manifest = std::move(decoded);
  } catch (const json::exception &e) {
    return path + ": cannot decode the manifest (" + e.what() + ")";
  }
  return "";
}

} // namespace dtensor::rt
