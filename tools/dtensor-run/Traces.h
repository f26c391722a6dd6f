//===- Traces.h - every rank's trace, gathered on rank 0 --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The events of dtensor_program_trace from every rank, gathered over MPI,
// and the Chrome trace (--trace) made of them.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLS_DTENSOR_RUN_TRACES_H
#define DTENSOR_TOOLS_DTENSOR_RUN_TRACES_H

#include "dtensor/runtime.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

/// One event of one rank: `kind` 0 is a step, kWaitKind the program's wait
/// for an asynchronous collective, else a collective (traceEventName).
struct TraceEvent {
  int rank = 0;
  int kind = 0;
  int64_t step = 0, group = -1, bytes = 0, site = -1, bytesSent = 0;
  double start = 0, end = 0;
  /// A collective that ran on the communication thread.
  bool async = false;
};

/// "step", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
/// "broadcast", "shift", "wait" for kinds 0 to 7.
const char *traceEventName(int kind);
inline constexpr int kWaitKind = 7;
/// True for the kinds of collectives.
inline bool isCollectiveKind(int kind) { return kind > 0 && kind < kWaitKind; }

/// COLLECTIVE over MPI_COMM_WORLD: every rank's events, in rank order and
/// each rank's order, on rank 0; nothing on the others.
std::vector<TraceEvent> gatherTrace(dtensor_program *program, int rank,
                                    int worldSize);

/// The events as a Chrome trace (JSON object format): one process per
/// rank with its steps (thread 1); on thread 0 the program's synchronous
/// collectives, its waits for asynchronous ones and the compute between
/// them; on thread 2 the asynchronous collectives as they ran on the
/// communication thread, under the compute. Times in microseconds; a
/// collective's arguments name its site and the site's module
/// (`siteModules`, by site).
nlohmann::json chromeTrace(const std::vector<TraceEvent> &events,
                           int worldSize,
                           const std::vector<std::string> &siteModules);

#endif // DTENSOR_TOOLS_DTENSOR_RUN_TRACES_H
