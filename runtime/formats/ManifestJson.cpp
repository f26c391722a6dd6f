//===- ManifestJson.cpp - The manifest as JSON, both ways -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Encoding writes every member the manifest has (optional ones only when
// set). Decoding reads the JSON into a Manifest and stops at the first type
// error, naming its JSON path; the semantic checks come after.
//
//===----------------------------------------------------------------------===//

#include "JsonText.h"
#include "ManifestInternals.h"

#include <limits>
#include <optional>
#include <utility>

using json = nlohmann::json;

namespace dtensor::rt {

//===----------------------------------------------------------------------===//
// JSON encoding
//===----------------------------------------------------------------------===//

json encodeManifest(const Manifest &manifest) {
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
      if (!entry.indexBounds.empty()) {
        json bounds = json::array();
        for (const IndexBoundInfo &bound : entry.indexBounds) {
          json object = {{"input", bound.input},
                         {"bound", bound.bound},
                         {"table", bound.table}};
          if (bound.ignoreIndex)
            object["ignore_index"] = *bound.ignoreIndex;
          bounds.push_back(std::move(object));
        }
        object["index_bounds"] = std::move(bounds);
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

namespace {

/// Decodes JSON values into C++ ones, recording the first type error with
/// its JSON path.
class Decoder {
public:
  explicit Decoder(ManifestChecker &check) : check(check) {}

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
    else if (role == "parameter")
      out.role = TensorRole::Parameter;
    else
      return check.fail(keyPath(path, "role"),
                        "expected \"input\", \"weight\", \"parameter\", "
                        "\"output\" or \"state\", got \"" +
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
    out.indexBounds.clear();
    if (const json *bounds = member(value, path, "index_bounds", false)) {
      std::string boundsPath = keyPath(path, "index_bounds");
      if (!array(*bounds, boundsPath))
        return false;
      for (size_t i = 0; i < bounds->size(); ++i) {
        IndexBoundInfo bound;
        std::string at = indexPath(boundsPath, i);
        if (!object((*bounds)[i], at) ||
            !stringField((*bounds)[i], at, "input", bound.input) ||
            !integerField((*bounds)[i], at, "bound", bound.bound,
                          "a non-negative integer") ||
            !stringField((*bounds)[i], at, "table", bound.table))
          return false;
        if (member((*bounds)[i], at, "ignore_index", false)) {
          int64_t ignoreIndex = 0;
          if (!integerField((*bounds)[i], at, "ignore_index", ignoreIndex,
                            "an integer"))
            return false;
          bound.ignoreIndex = ignoreIndex;
        }
        out.indexBounds.push_back(std::move(bound));
      }
    }
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
  bool rowWrite(const json &value, const std::string &path, RowWriteInfo &out) {
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
  bool customOp(const json &value, const std::string &path, CustomOpInfo &out) {
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
  ManifestChecker &check;
};

} // namespace

bool decodeManifestHeader(const json &root, ManifestChecker &check,
                          std::string &storedHash) {
  Decoder decode(check);
  std::string format;
  if (!decode.stringField(root, "", "format", format))
    return false;
  if (format != kArtifactFormat)
    return check.fail("format", std::string("expected \"") + kArtifactFormat +
                                    "\", got \"" + format + "\"");
  int64_t version;
  if (!decode.integerField(root, "", "format_version", version))
    return false;
  if (version < kOldestArtifactFormatVersion ||
      version > kArtifactFormatVersion)
    return check.fail("format_version", formatVersionError(version));
  return decode.stringField(root, "", kContentHashKey, storedHash);
}

bool decodeManifest(const json &root, ManifestChecker &check, Manifest &out) {
  return Decoder(check).manifest(root, out);
}

} // namespace dtensor::rt
