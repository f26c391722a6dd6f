//===- Context.h - The ranks a program runs on ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A context owns a duplicate of the host's MPI communicator. MPI is
// initialised by the first context when the host has not done it, and then
// finalised when the last context goes (MPI cannot be initialised twice in
// a process: a context created after that fails with a clear message).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CONTEXT_H
#define DTENSOR_RUNTIME_CONTEXT_H

#include "MpiCommunicator.h"

#include <vector>

struct dtensor_context {
  std::unique_ptr<dtensor::rt::MpiCommunicator> world;
  /// BLAS threads of this rank.
  int threads = 1;
  /// This rank's index among the context's ranks on its node (shared
  /// memory), and their number: a GPU program's rank uses device
  /// localRank % (devices on the node).
  int localRank = 0, ranksOnNode = 1;
  /// MPI may be called from another thread than the host's, never at once
  /// (MPI_THREAD_SERIALIZED or above): asynchronous collectives then run on
  /// a communication thread (CollectiveQueue).
  bool threadedCollectives = false;
  /// Programs loaded on this context and not yet destroyed.
  std::vector<dtensor_program *> programs;
};

namespace dtensor::rt {

/// COLLECTIVE. Creates a context (options may be null).
Status createContext(const dtensor_context_options *options,
                     dtensor_context *&context);

/// COLLECTIVE. Destroys the context and the programs still on it.
Status destroyContext(dtensor_context *context);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_CONTEXT_H
