//===- Topology.cpp - Reading, writing and resolving topology files -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Topology.h"

#include "JsonText.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

using json = nlohmann::json;

namespace dtensor::rt {

const LinkClass *Topology::findLink(const std::string &name) const {
  for (const LinkClass &link : links)
    if (link.name == name)
      return &link;
  return nullptr;
}

namespace {

/// "links.nvlink", or links["a b"] for a key that is not an identifier
/// (mesh_dims["0"]: a dim's index is a key, not an array index).
std::string keyPath(const std::string &path, const std::string &key) {
  bool plain =
      !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
  for (char c : key)
    plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (!plain)
    return path + "[" + json(key).dump() + "]";
  return path.empty() ? key : path + "." + key;
}

/// Records the first error, as "<file>: <path>: <message>".
class Decoder {
public:
  explicit Decoder(std::string file) : file(std::move(file)) {}

  bool fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }

  bool object(const json &value, const std::string &path) {
    return value.is_object() ||
           fail(path, "expected an object, got " + describeJson(value));
  }

  bool string(const json &value, const std::string &path, std::string &out) {
    if (!value.is_string())
      return fail(path, "expected a string, got " + describeJson(value));
    out = value.get<std::string>();
    return true;
  }

  /// A finite number, > 0 when `positive`, else >= 0.
  bool number(const json &value, const std::string &path, double &out,
              bool positive) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        (positive ? value.get<double>() <= 0 : value.get<double>() < 0))
      return fail(path, std::string("expected a ") +
                            (positive ? "positive" : "non-negative") +
                            " number, got " + describeJson(value));
    out = value.get<double>();
    return true;
  }

  /// Every key of `object` is one of `known`.
  bool onlyKeys(const json &object, const std::string &path,
                const std::set<std::string> &known) {
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!known.count(it.key())) {
        std::string list;
        for (const std::string &key : known)
          list += (list.empty() ? "" : ", ") + key;
        return fail(keyPath(path, it.key()),
                    "unknown key; expected one of " + list);
      }
    return true;
  }

  /// A class name that "links" defines.
  bool linkName(const json &value, const std::string &path,
                const Topology &topology, std::string &out) {
    if (!string(value, path, out))
      return false;
    if (!topology.findLink(out))
      return fail(path, "no link class \"" + out + "\" in \"links\"");
    return true;
  }

  bool decode(const json &root, Topology &topology) {
    if (!object(root, "") ||
        !onlyKeys(root, "",
                  {"links", "intra_host", "inter_host", "mesh_dims",
                   "compute_gflops", "comment"}))
      return false;
    auto links = root.find("links");
    if (links == root.end())
      return fail("", "missing key \"links\"");
    if (!object(*links, "links"))
      return false;
    if (links->empty())
      return fail("links", "expected at least one link class");
    for (auto it = links->begin(); it != links->end(); ++it) {
      std::string path = keyPath("links", it.key());
      if (it.key().empty())
        return fail(path, "expected a non-empty class name");
      if (!object(*it, path) ||
          !onlyKeys(*it, path, {"latency_us", "bandwidth_gbps"}))
        return false;
      LinkClass link;
      link.name = it.key();
      for (auto [key, out, positive] :
           {std::tuple<const char *, double *, bool>{"latency_us",
                                                     &link.latencyUs, false},
            {"bandwidth_gbps", &link.bandwidthGBps, true}}) {
        auto value = it->find(key);
        if (value == it->end())
          return fail(path, std::string("missing key \"") + key + "\"");
        if (!number(*value, keyPath(path, key), *out, positive))
          return false;
      }
      topology.links.push_back(std::move(link));
    }
    for (auto [key, out] : {std::pair<const char *, std::string *>{
                                "intra_host", &topology.intraHost},
                            {"inter_host", &topology.interHost}}) {
      auto value = root.find(key);
      if (value != root.end() && !linkName(*value, key, topology, *out))
        return false;
    }
    // One class is the whole machine: every dim crosses it.
    if (topology.links.size() == 1) {
      if (topology.intraHost.empty())
        topology.intraHost = topology.links.front().name;
      if (topology.interHost.empty())
        topology.interHost = topology.links.front().name;
    }
    if (auto dims = root.find("mesh_dims"); dims != root.end()) {
      if (!object(*dims, "mesh_dims"))
        return false;
      for (auto it = dims->begin(); it != dims->end(); ++it) {
        std::string path = keyPath("mesh_dims", it.key());
        if (it.key().empty())
          return fail(path, "expected a mesh dim's name or index");
        std::string link;
        if (!linkName(*it, path, topology, link))
          return false;
        topology.meshDims.emplace_back(it.key(), std::move(link));
      }
    }
    if (auto rate = root.find("compute_gflops");
        rate != root.end() &&
        !number(*rate, "compute_gflops", topology.computeGflops,
                /*positive=*/true))
      return false;
    if (auto comment = root.find("comment"); comment != root.end())
      return string(*comment, "comment", topology.comment);
    return true;
  }

  std::string file;
  std::string error;
};

} // namespace

std::string parseTopology(const std::string &text, const std::string &file,
                          Topology &topology) {
  topology = Topology();
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return file + ": not valid JSON";
  Decoder decoder(file);
  decoder.decode(root, topology);
  return decoder.error;
}

std::string readTopologyFile(const std::string &path, Topology &topology) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return "cannot open topology file " + path + ": " + std::strerror(errno);
  std::stringstream contents;
  contents << stream.rdbuf();
  return parseTopology(contents.str(), path, topology);
}

std::string encodeTopology(const Topology &topology) {
  json root = json::object();
  json links = json::object();
  for (const LinkClass &link : topology.links)
    links[link.name] = {{"latency_us", link.latencyUs},
                        {"bandwidth_gbps", link.bandwidthGBps}};
  root["links"] = std::move(links);
  if (!topology.intraHost.empty())
    root["intra_host"] = topology.intraHost;
  if (!topology.interHost.empty())
    root["inter_host"] = topology.interHost;
  if (!topology.meshDims.empty()) {
    json dims = json::object();
    for (const auto &[dim, link] : topology.meshDims)
      dims[dim] = link;
    root["mesh_dims"] = std::move(dims);
  }
  if (topology.computeGflops > 0)
    root["compute_gflops"] = topology.computeGflops;
  if (!topology.comment.empty())
    root["comment"] = topology.comment;
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string resolveMeshDimLinks(const Topology &topology,
                                const std::string &file,
                                const std::vector<int64_t> &shape,
                                const std::vector<std::string> &dimNames,
                                std::vector<LinkClass> &links) {
  size_t rank = shape.size();
  auto describeDim = [&](size_t dim) {
    std::string text = "mesh dim " + std::to_string(dim);
    if (dim < dimNames.size() && !dimNames[dim].empty())
      text += " ('" + dimNames[dim] + "')";
    return text;
  };
  std::vector<std::string> chosen(rank);
  for (const auto &[key, link] : topology.meshDims) {
    std::string path = file + ": " + keyPath("mesh_dims", key);
    std::optional<size_t> dim;
    for (size_t d = 0; d < dimNames.size() && d < rank; ++d)
      if (dimNames[d] == key)
        dim = d;
    if (!dim && key.find_first_not_of("0123456789") == std::string::npos &&
        key.size() <= 9 && std::stoul(key) < rank)
      dim = std::stoul(key);
    if (!dim) {
      std::string names;
      for (size_t d = 0; d < rank; ++d)
        names += (d ? ", " : "") +
                 (d < dimNames.size() && !dimNames[d].empty()
                      ? dimNames[d] + " (" + std::to_string(d) + ")"
                      : std::to_string(d));
      return path + ": the mesh has no dim \"" + key + "\"; its dims are " +
             names;
    }
    if (!chosen[*dim].empty())
      return path + ": " + describeDim(*dim) + " is given a class twice";
    chosen[*dim] = link;
  }
  links.clear();
  for (size_t d = 0; d < rank; ++d) {
    const std::string &defaultName =
        d + 1 == rank ? topology.intraHost : topology.interHost;
    const std::string &name = chosen[d].empty() ? defaultName : chosen[d];
    const LinkClass *link = topology.findLink(name);
    if (!link)
      return file + ": " + describeDim(d) +
             " has no link class: name it in \"mesh_dims\" or set \"" +
             (d + 1 == rank ? "intra_host" : "inter_host") + "\"";
    links.push_back(*link);
  }
  return "";
}

} // namespace dtensor::rt
