//===- CommTrace.cpp - the collectives a job ran, per module --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/CommTrace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace dtensor::tooling {

namespace {

/// Module name of calls without a site.
constexpr const char *kNoSite = "<no site>";

using RowKey = std::tuple<std::string, std::string, std::string>;

std::string formatNumber(double value) {
  char text[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    std::snprintf(text, sizeof text, "%.0f", value);
  else
    std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

double largest(const std::vector<double> &values) {
  return values.empty() ? 0.0
                        : *std::max_element(values.begin(), values.end());
}

/// Pads every column but the last to its widest cell.
std::string formatTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> widths;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c)
        widths.push_back(0);
      widths[c] = std::max(widths[c], row[c].size());
    }
  std::string text;
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size())
        line += std::string(widths[c] - row[c].size() + 1, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    text += line + "\n";
  }
  return text;
}

/// Calls, bytes and time per step of some rows, per rank, and what the
/// report gives for them.
struct Totals {
  std::vector<double> calls, bytes, micros;
  int64_t compiledCalls = 0, compiledBytes = 0;
  bool matches = true;

  explicit Totals(int ranks)
      : calls(ranks, 0.0), bytes(ranks, 0.0), micros(ranks, 0.0) {}

  void add(const CommTraceRow &row) {
    for (size_t r = 0; r < calls.size(); ++r) {
      calls[r] += row.calls[r];
      bytes[r] += row.bytes[r];
      micros[r] += row.micros[r];
    }
    compiledCalls += row.compiledCalls;
    if (compiledBytes >= 0)
      compiledBytes = row.compiledBytes < 0 ? -1
                                            : compiledBytes + row.compiledBytes;
    matches = matches && row.matchesReport;
  }
};

nlohmann::json figuresJson(const std::vector<double> &calls,
                           const std::vector<double> &bytes,
                           const std::vector<double> &micros,
                           int64_t compiledCalls, int64_t compiledBytes,
                           bool matches) {
  nlohmann::json perRank = nlohmann::json::array();
  for (size_t r = 0; r < calls.size(); ++r)
    perRank.push_back({{"rank", r},
                       {"calls", calls[r]},
                       {"bytes_sent", bytes[r]},
                       {"time_us", micros[r]}});
  return {{"calls", largest(calls)},
          {"bytes_sent", largest(bytes)},
          {"time_us", largest(micros)},
          {"compiled_calls", compiledCalls},
          {"compiled_bytes_sent",
           compiledBytes < 0 ? nlohmann::json(nullptr)
                             : nlohmann::json(compiledBytes)},
          {"matches_report", matches},
          {"per_rank", std::move(perRank)}};
}

} // namespace

CommTrace buildCommTrace(const std::vector<TraceSite> &sites,
                         const std::vector<TracedCall> &calls, int ranks,
                         int64_t steps) {
  CommTrace trace;
  trace.ranks = ranks;
  trace.steps = steps;
  trace.hasSites = !sites.empty();
  std::map<RowKey, size_t> index;
  auto rowOf = [&](const std::string &module, const std::string &kind,
                   const std::string &reduction) -> CommTraceRow & {
    auto [it, added] =
        index.try_emplace(RowKey{module, kind, reduction}, trace.rows.size());
    if (added) {
      CommTraceRow row;
      row.module = module;
      row.kind = kind;
      row.reduction = reduction;
      row.calls.assign(ranks, 0.0);
      row.bytes.assign(ranks, 0.0);
      row.micros.assign(ranks, 0.0);
      trace.rows.push_back(std::move(row));
    }
    return trace.rows[it->second];
  };

  // Rows in the order of the sites, each site once per step.
  std::vector<size_t> siteRow;
  for (const TraceSite &site : sites) {
    CommTraceRow &row = rowOf(site.module, site.kind, site.reduction);
    ++row.compiledCalls;
    if (row.compiledBytes >= 0)
      row.compiledBytes =
          site.bytesSent < 0 ? -1 : row.compiledBytes + site.bytesSent;
    siteRow.push_back(&row - trace.rows.data());
  }
  // Calls per rank and site, to check each site ran once per step.
  std::map<std::pair<int64_t, int>, int64_t> siteCalls;
  std::map<size_t, std::set<int64_t>> groups;
  for (const TracedCall &call : calls) {
    bool known = call.site >= 0 &&
                 call.site < static_cast<int64_t>(siteRow.size()) &&
                 call.rank >= 0 && call.rank < ranks;
    if (call.rank < 0 || call.rank >= ranks)
      continue;
    size_t at = known ? siteRow[call.site]
                      : &rowOf(trace.hasSites ? kNoSite : "", call.kind, "") -
                            trace.rows.data();
    // Totals first, divided by the steps at the end (exact for whole
    // numbers of calls and bytes per step).
    CommTraceRow &row = trace.rows[at];
    row.calls[call.rank] += 1;
    row.bytes[call.rank] += static_cast<double>(call.bytesSent);
    row.micros[call.rank] += call.micros;
    groups[at].insert(call.group);
    if (known)
      ++siteCalls[{call.site, call.rank}];
    else if (trace.hasSites)
      row.matchesReport = false;
  }
  double stepCount = steps > 0 ? static_cast<double>(steps) : 1.0;
  for (size_t at = 0; at < trace.rows.size(); ++at) {
    CommTraceRow &row = trace.rows[at];
    for (std::vector<double> *figures : {&row.calls, &row.bytes, &row.micros})
      for (double &value : *figures)
        value /= stepCount;
    row.groups.assign(groups[at].begin(), groups[at].end());
    if (!trace.hasSites)
      continue;
    for (int r = 0; r < ranks; ++r) {
      if (std::fabs(row.calls[r] - static_cast<double>(row.compiledCalls)) >
          1e-9)
        row.matchesReport = false;
      if (row.compiledBytes >= 0 &&
          std::fabs(row.bytes[r] - static_cast<double>(row.compiledBytes)) >
              1e-6)
        row.matchesReport = false;
    }
  }
  // Each site once per step on every rank (a row's sum could hide one
  // site run twice and another never).
  for (size_t site = 0; site < siteRow.size(); ++site)
    for (int r = 0; r < ranks; ++r) {
      auto found = siteCalls.find({static_cast<int64_t>(site), r});
      int64_t count = found == siteCalls.end() ? 0 : found->second;
      if (count != steps)
        trace.rows[siteRow[site]].matchesReport = false;
    }
  return trace;
}

std::string formatCommTraceText(const CommTrace &trace) {
  std::string text =
      "comm trace: " + std::to_string(trace.steps) + " step" +
      (trace.steps == 1 ? "" : "s") + " on " + std::to_string(trace.ranks) +
      " rank" + (trace.ranks == 1 ? "" : "s") +
      "; per step, the largest over the ranks; [report]: the compile-time "
      "communication report\n";
  if (!trace.hasSites)
    text += "  (the artifact has no collective sites: recompile it to see "
            "modules and the report's figures)\n";
  if (trace.rows.empty())
    return text + "  no collectives\n";
  std::vector<std::vector<std::string>> table;
  table.push_back({"module", "collective", "reduction", "groups", "calls",
                   "[report]", "bytes sent", "[report]", "time us", ""});
  auto compiledBytes = [](int64_t bytes) {
    return bytes < 0 ? std::string("?") : std::to_string(bytes);
  };
  Totals total(trace.ranks);
  for (const CommTraceRow &row : trace.rows) {
    std::string groups;
    for (int64_t group : row.groups)
      groups += (groups.empty() ? "" : ",") + std::to_string(group);
    table.push_back(
        {row.module.empty() ? "<unnamed>" : row.module, row.kind,
         row.reduction.empty() ? "-" : row.reduction,
         groups.empty() ? "-" : groups, formatNumber(largest(row.calls)),
         trace.hasSites ? std::to_string(row.compiledCalls) : "-",
         formatNumber(largest(row.bytes)),
         trace.hasSites ? compiledBytes(row.compiledBytes) : "-",
         formatNumber(std::round(largest(row.micros) * 10) / 10),
         row.matchesReport ? "" : "!"});
    total.add(row);
  }
  table.push_back({"total", "", "", "", formatNumber(largest(total.calls)),
                   trace.hasSites ? std::to_string(total.compiledCalls) : "-",
                   formatNumber(largest(total.bytes)),
                   trace.hasSites ? compiledBytes(total.compiledBytes) : "-",
                   formatNumber(std::round(largest(total.micros) * 10) / 10),
                   total.matches ? "" : "!"});
  text += formatTable(table);
  if (!total.matches)
    text += "  ! differs from the compile-time report (calls or bytes of a "
            "rank, or a site not run once per step)\n";
  return text;
}

nlohmann::json commTraceJson(const CommTrace &trace) {
  // The module tree: every dotted prefix of a row's module is a node.
  struct Node {
    std::string fqn;
    std::vector<size_t> children, rows;
  };
  std::vector<Node> nodes{{"", {}, {}}};
  std::map<std::string, size_t> byName{{"", 0}};
  auto nodeOf = [&](const std::string &fqn) {
    size_t parent = 0;
    for (size_t end = 0; end != std::string::npos;) {
      end = fqn.find('.', end + 1);
      std::string prefix = fqn.substr(0, end);
      auto [it, added] = byName.try_emplace(prefix, nodes.size());
      if (added) {
        nodes.push_back({prefix, {}, {}});
        nodes[parent].children.push_back(it->second);
      }
      parent = it->second;
    }
    return parent;
  };
  for (size_t at = 0; at < trace.rows.size(); ++at) {
    const std::string &module = trace.rows[at].module;
    nodes[module.empty() ? 0 : nodeOf(module)].rows.push_back(at);
  }

  auto emit = [&](auto &self, size_t id, Totals &parent) -> nlohmann::json {
    const Node &node = nodes[id];
    Totals totals(trace.ranks);
    nlohmann::json collectives = nlohmann::json::array();
    for (size_t at : node.rows) {
      const CommTraceRow &row = trace.rows[at];
      nlohmann::json entry =
          figuresJson(row.calls, row.bytes, row.micros, row.compiledCalls,
                      row.compiledBytes, row.matchesReport);
      entry["kind"] = row.kind;
      entry["reduction"] = row.reduction.empty()
                               ? nlohmann::json(nullptr)
                               : nlohmann::json(row.reduction);
      entry["groups"] = row.groups;
      collectives.push_back(std::move(entry));
      totals.add(row);
    }
    nlohmann::json children = nlohmann::json::array();
    for (size_t child : node.children)
      children.push_back(self(self, child, totals));
    nlohmann::json out = {{"fqn", node.fqn},
                          {"collectives", std::move(collectives)},
                          {"children", std::move(children)}};
    out["total"] =
        figuresJson(totals.calls, totals.bytes, totals.micros,
                    totals.compiledCalls, totals.compiledBytes,
                    totals.matches);
    for (size_t r = 0; r < parent.calls.size(); ++r) {
      parent.calls[r] += totals.calls[r];
      parent.bytes[r] += totals.bytes[r];
      parent.micros[r] += totals.micros[r];
    }
    parent.compiledCalls += totals.compiledCalls;
    if (parent.compiledBytes >= 0)
      parent.compiledBytes = totals.compiledBytes < 0
                                 ? -1
                                 : parent.compiledBytes + totals.compiledBytes;
    parent.matches = parent.matches && totals.matches;
    return out;
  };
  Totals all(trace.ranks);
  nlohmann::json root = emit(emit, 0, all);
  return {{"ranks", trace.ranks},
          {"steps", trace.steps},
          {"has_sites", trace.hasSites},
          {"matches_report", all.matches},
          {"module", std::move(root)}};
}

} // namespace dtensor::tooling
