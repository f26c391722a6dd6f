//===- RunRanks.h - The ranks a run session runs on -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// This rank and its world as a run session (RunSession.h) sees them, and
// the few collective steps it needs beyond the runtime's calls: agreeing on
// a failure of the tool's own steps (reading and writing files, --check's
// verdict) so that every rank exits with the same status, and a barrier
// before tracing. The tool that launched the ranks provides them (over
// MPI): this library stays on the runtime's C API, without MPI.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNRANKS_H
#define DTENSOR_TOOLING_RUNRANKS_H

#include "dtensor/runtime.h"

#include <string>
#include <utility>

namespace dtensor::tooling {

class RunRanks {
public:
  /// `toolName` prefixes each message ("dtensor-run").
  RunRanks(std::string toolName, int rank, int worldSize)
      : tool(std::move(toolName)), rankNumber(rank), ranks(worldSize) {}
  virtual ~RunRanks() = default;

  int rank() const { return rankNumber; }
  int worldSize() const { return ranks; }

  /// Prints an error of this rank to standard error, as "TOOL: MESSAGE"
  /// (with "rank R: " before the message when there are several ranks).
  /// The other ranks' copies of a failure the runtime agreed on
  /// (DTENSOR_ERR_PEER) are left to rank 0.
  void report(const std::string &message,
              dtensor_status status = DTENSOR_OK) const;

  /// COLLECTIVE. True when any rank passes `failed`.
  virtual bool anyFailed(bool failed) = 0;
  /// COLLECTIVE. Returns once every rank has called it.
  virtual void barrier() = 0;
  /// A pointer to the communicator of this rank alone (an MPI_Comm *, for
  /// dtensor_context_options::mpi_comm): the reference program's context.
  virtual void *selfCommunicator() = 0;

private:
  std::string tool;
  int rankNumber;
  int ranks;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNRANKS_H
