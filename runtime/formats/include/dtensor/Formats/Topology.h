//===- Topology.h - The links between ranks, per mesh dim -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A topology file (docs/topology.md) names link classes (NVLink,
// InfiniBand, Ethernet, this machine's shared memory) with the latency and
// bandwidth of one message over them, and says which class each mesh dim's
// groups cross: by default the last mesh dim stays inside a host
// (`intra_host`) and the others cross hosts (`inter_host`); `mesh_dims`
// names the class of a dim by its name or index. The compiler's cost model
// prices each collective with the slowest class its group crosses, and
// compute at the file's `compute_gflops` per rank when it gives one;
// dtensor-bench-ceilings --calibrate-topology writes such a file from
// measurements.
//
// Reading stops at the first error and names its JSON path, as the
// manifest's reader does. Plain C++17 and nlohmann/json; no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_TOPOLOGY_H
#define DTENSOR_FORMATS_TOPOLOGY_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::rt {

/// One class of link between two ranks.
struct LinkClass {
  /// The key of the class in the file's "links".
  std::string name;
  /// Time of one message of no bytes (one step of a collective), in
  /// microseconds: the alpha of an alpha-beta model.
  double latencyUs = 0.0;
  /// Bytes per second one rank sends over the link, in GB/s (1e9 bytes):
  /// 1 / beta.
  double bandwidthGBps = 0.0;
};

/// The contents of a topology file.
struct Topology {
  /// The classes, in the order of their names.
  std::vector<LinkClass> links;
  /// The class of the last mesh dim when mesh_dims does not name it; ""
  /// when unset (a file with a single class defaults both to it).
  std::string intraHost;
  /// The class of the other mesh dims when mesh_dims does not name them.
  std::string interHost;
  /// mesh_dims: a mesh dim's name or index (as text), and its class, in
  /// the order of the keys.
  std::vector<std::pair<std::string, std::string>> meshDims;
  /// compute_gflops: one rank's arithmetic throughput, in GFLOP/s, which
  /// propagation's cost model weighs collectives against; 0 when absent
  /// (the compiler then assumes its default).
  double computeGflops = 0.0;
  /// A free-form note (how the numbers were measured); "" when absent.
  std::string comment;

  /// The class named `name`, or null.
  const LinkClass *findLink(const std::string &name) const;
};

/// Decodes the JSON text `text` of a topology file called `file` (which
/// messages name) into `topology`. "" or the first error, as
/// "<file>: <JSON path>: <message>".
std::string parseTopology(const std::string &text, const std::string &file,
                          Topology &topology);

/// Reads and decodes the topology file at `path`. "" or the first error.
std::string readTopologyFile(const std::string &path, Topology &topology);

/// The file's JSON text (2-space indentation, ending in a newline), which
/// parseTopology reads back to an equal topology.
std::string encodeTopology(const Topology &topology);

/// The class of each mesh dim of a mesh of `shape`, whose dims are called
/// `dimNames` (empty when unnamed), under `topology` read from `file`:
/// mesh_dims first, then intra_host for the last dim and inter_host for
/// the others. "" or an error: a mesh_dims key that names no dim of the
/// mesh or a dim named twice, or a dim left without a class.
std::string resolveMeshDimLinks(const Topology &topology,
                                const std::string &file,
                                const std::vector<int64_t> &shape,
                                const std::vector<std::string> &dimNames,
                                std::vector<LinkClass> &links);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_TOPOLOGY_H
