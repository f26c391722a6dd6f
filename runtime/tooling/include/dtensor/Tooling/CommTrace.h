//===- CommTrace.h - the collectives a job ran, per module ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What `dtensor-run --comm-trace` prints: the collectives every rank ran in
// the traced steps, attributed to the model's modules through the sites the
// compiler numbered, with calls, bytes sent and time per step next to the
// compile-time communication report's figures for the same sites, and
// every difference flagged. A text table, or JSON in the spirit of
// PyTorch's CommDebugMode.generate_json_dump (a module tree of `fqn`,
// `children` and `collectives`).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_COMMTRACE_H
#define DTENSOR_TOOLING_COMMTRACE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::tooling {

/// One collective site of the program (dtensor_site_info).
struct TraceSite {
  std::string kind, reduction, module, position;
  /// Bytes a rank sends in one call at compile time; -1: not known.
  int64_t bytesSent = -1;
};

/// One collective call a rank ran (a dtensor_trace_event that is not a
/// step).
struct TracedCall {
  int rank = 0;
  /// The site, or -1 when the program has none for it.
  int64_t site = -1;
  std::string kind;
  int64_t group = -1;
  int64_t bytesSent = 0;
  double micros = 0;
};

/// One row: the calls of one collective kind and reduction in one module.
struct CommTraceRow {
  std::string module; // "" for sites without a module
  std::string kind, reduction;
  /// The groups its calls used, ascending.
  std::vector<int64_t> groups;
  /// The compile-time report: sites (calls per step), and the bytes one
  /// rank sends in them (-1: some not known).
  int64_t compiledCalls = 0;
  int64_t compiledBytes = 0;
  /// Per rank, per step: calls, bytes sent, microseconds in the calls.
  std::vector<double> calls, bytes, micros;
  /// Whether every rank ran each site once per step with the bytes the
  /// report gives (unknown compile-time bytes are not compared).
  bool matchesReport = true;
};

/// The trace of a job of `ranks` ranks over `steps` steps.
struct CommTrace {
  int ranks = 0;
  int64_t steps = 0;
  /// Rows in the order of their first site, then rows of calls without a
  /// site.
  std::vector<CommTraceRow> rows;
  /// Whether the artifact numbered its collectives (else every call is in
  /// module "" and nothing is compared).
  bool hasSites = false;
};

/// Aggregates `calls` (of all ranks) against `sites`.
CommTrace buildCommTrace(const std::vector<TraceSite> &sites,
                         const std::vector<TracedCall> &calls, int ranks,
                         int64_t steps);

/// The text table: one row per CommTraceRow with the largest per-rank
/// figures, the compile-time ones beside them and `!` where they differ,
/// then the totals.
std::string formatCommTraceText(const CommTrace &trace);

/// The JSON document: {"ranks", "steps", "module": the root of the module
/// tree}; each module {"fqn", "collectives": its own rows, "total": calls,
/// bytes and time per step of it and its children, "children"}.
nlohmann::json commTraceJson(const CommTrace &trace);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_COMMTRACE_H
