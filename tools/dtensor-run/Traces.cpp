//===- Traces.cpp - every rank's trace, gathered on rank 0 ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Traces.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

namespace {
constexpr const char *kNames[] = {"step",           "all_reduce", "all_gather",
                                  "reduce_scatter", "all_to_all", "broadcast",
                                  "shift",          "wait"};
constexpr int kNumKinds = 8;
/// Doubles per event on the wire.
constexpr int kFields = 9;
/// Chrome trace threads of a rank.
constexpr int kProgramThread = 0, kStepThread = 1, kCommunicationThread = 2;
} // namespace

const char *traceEventName(int kind) {
  return kind >= 0 && kind < kNumKinds ? kNames[kind] : "unknown";
}

std::vector<TraceEvent> gatherTrace(dtensor_program *program, int rank,
                                    int worldSize) {
  const dtensor_trace_event *events = nullptr;
  int32_t count = 0;
  dtensor_program_trace(program, &events, &count);
  // Every field as a double: exact for the integers a trace holds.
  std::vector<double> mine;
  for (int32_t i = 0; i < count; ++i) {
    const dtensor_trace_event &e = events[i];
    int kind = 0;
    for (int k = 0; k < kNumKinds; ++k)
      if (std::strcmp(e.name, kNames[k]) == 0)
        kind = k;
    mine.insert(mine.end(),
                {static_cast<double>(kind), static_cast<double>(e.step),
                 static_cast<double>(e.group), static_cast<double>(e.bytes),
                 static_cast<double>(e.site), static_cast<double>(e.bytes_sent),
                 e.start_us, e.end_us, static_cast<double>(e.async)});
  }
  int size = static_cast<int>(mine.size());
  std::vector<int> sizes(rank == 0 ? worldSize : 0), offsets;
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<double> all;
  if (rank == 0) {
    int total = 0;
    for (int s : sizes) {
      offsets.push_back(total);
      total += s;
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), size, MPI_DOUBLE, all.data(), sizes.data(),
              offsets.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<TraceEvent> gathered;
  for (int r = 0; rank == 0 && r < worldSize; ++r)
    for (int at = offsets[r]; at < offsets[r] + sizes[r]; at += kFields) {
      const double *f = &all[at];
      TraceEvent event;
      event.rank = r;
      event.kind = static_cast<int>(f[0]);
      event.step = static_cast<int64_t>(f[1]);
      event.group = static_cast<int64_t>(f[2]);
      event.bytes = static_cast<int64_t>(f[3]);
      event.site = static_cast<int64_t>(f[4]);
      event.bytesSent = static_cast<int64_t>(f[5]);
      event.start = f[6];
      event.end = f[7];
      event.async = f[8] != 0;
      gathered.push_back(event);
    }
  return gathered;
}

nlohmann::json chromeTrace(const std::vector<TraceEvent> &events,
                           int worldSize,
                           const std::vector<std::string> &siteModules) {
  nlohmann::json trace = {{"displayTimeUnit", "ms"},
                          {"traceEvents", nlohmann::json::array()}};
  nlohmann::json &out = trace["traceEvents"];
  for (int r = 0; r < worldSize; ++r) {
    out.push_back({{"name", "process_name"},
                   {"ph", "M"},
                   {"pid", r},
                   {"args", {{"name", "rank " + std::to_string(r)}}}});
    for (auto [thread, name] :
         {std::pair<int, const char *>{kProgramThread, "program"},
          {kStepThread, "steps"},
          {kCommunicationThread, "communication"}})
      out.push_back({{"name", "thread_name"},
                     {"ph", "M"},
                     {"pid", r},
                     {"tid", thread},
                     {"args", {{"name", name}}}});
    // Steps are recorded after their collectives: their starts first.
    // Compute is the program thread's time outside its synchronous
    // collectives and waits; asynchronous collectives run beside it.
    std::map<int64_t, double> stepStarts;
    for (const TraceEvent &e : events)
      if (e.rank == r && e.kind == 0)
        stepStarts[e.step] = e.start;
    double lastEnd = 0;
    int64_t step = -1;
    // A complete ("X") event of this rank.
    auto complete = [&](std::string name, const char *category, int thread,
                        double from, double to, nlohmann::json args) {
      args["step"] = step;
      out.push_back({{"name", std::move(name)},
                     {"cat", category},
                     {"ph", "X"},
                     {"pid", r},
                     {"tid", thread},
                     {"ts", from},
                     {"dur", to - from},
                     {"args", std::move(args)}});
    };
    auto compute = [&](double from, double to) {
      if (to > from)
        complete("compute", "compute", kProgramThread, from, to,
                 nlohmann::json::object());
    };
    for (const TraceEvent &e : events) {
      if (e.rank != r)
        continue;
      step = e.step;
      if (e.kind == 0) {
        // A step ends after its collectives: close its last compute run.
        compute(std::max(lastEnd, e.start), e.end);
        complete("step " + std::to_string(step), "step", kStepThread, e.start,
                 e.end, nlohmann::json::object());
      } else {
        if (!e.async)
          compute(std::max(lastEnd, stepStarts[step]), e.start);
        nlohmann::json args = {{"group", e.group},
                               {"bytes", e.bytes},
                               {"bytes_sent", e.bytesSent}};
        if (e.site >= 0) {
          args["site"] = e.site;
          // A wait names the site it waits for; the module is the
          // collective's.
          if (e.kind != kWaitKind &&
              e.site < static_cast<int64_t>(siteModules.size()) &&
              !siteModules[e.site].empty())
            args["module"] = siteModules[e.site];
        }
        if (e.kind == kWaitKind) {
          complete("wait", "wait", kProgramThread, e.start, e.end,
                   std::move(args));
        } else {
          args["async"] = e.async;
          complete(traceEventName(e.kind), "collective",
                   e.async ? kCommunicationThread : kProgramThread, e.start,
                   e.end, std::move(args));
        }
      }
      if (!e.async)
        lastEnd = std::max(lastEnd, e.end);
    }
  }
  return trace;
}
