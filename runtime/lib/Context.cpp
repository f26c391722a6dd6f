//===- Context.cpp - The ranks a program runs on --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Context.h"
#include "Blas.h"
#include "FaultInjection.h"
#include "Program.h"

#include <algorithm>
#include <mutex>
#include <sched.h>

namespace dtensor::rt {

namespace {

std::mutex contextsMutex;
int liveContexts = 0;
bool weInitializedMpi = false;

Status initializeMpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return Status::success();
  MPI_Finalized(&finalized);
  if (finalized)
    return commError("MPI was already finalized in this process (it cannot "
                     "be initialised again; keep a context or MPI alive)");
  int provided = 0;
  // Serialized: asynchronous collectives run on a communication thread.
  int code =
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (code != MPI_SUCCESS)
    return mpiError("MPI_Init_thread", code);
  weInitializedMpi = true;
  return Status::success();
}

/// This rank's index among the ranks of `comm` on its node, and their number.
Status nodePlace(MPI_Comm comm, int &localRank, int &ranksOnNode) {
  MPI_Comm node = MPI_COMM_NULL;
  int code =
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (code != MPI_SUCCESS)
    return mpiError("MPI_Comm_split_type", code);
  MPI_Comm_rank(node, &localRank);
  MPI_Comm_size(node, &ranksOnNode);
  MPI_Comm_free(&node);
  return Status::success();
}

/// Cores this process may use, shared among the ranks on this node.
int defaultThreads(int ranksOnNode) {
  cpu_set_t set;
  int cores = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    cores = std::max(CPU_COUNT(&set), 1);
  return std::max(cores / std::max(ranksOnNode, 1), 1);
}

} // namespace

Status createContext(const dtensor_context_options *options,
                     dtensor_context *&context) {
  if (options && options->struct_size < sizeof(uint32_t))
    return invalidArgument("dtensor_context_create: options->struct_size is " +
                           std::to_string(options->struct_size));
  auto field = [&](size_t offset, size_t size) {
    return options && options->struct_size >= offset + size;
  };
  MPI_Comm parent = MPI_COMM_WORLD;
  if (field(offsetof(dtensor_context_options, mpi_comm), sizeof(void *)) &&
      options->mpi_comm)
    parent = *static_cast<MPI_Comm *>(options->mpi_comm);
  int threads = 0;
  if (field(offsetof(dtensor_context_options, threads), sizeof(int32_t)))
    threads = options->threads;
  if (threads < 0)
    return invalidArgument("dtensor_context_create: threads is " +
                           std::to_string(threads));

  // Every rank reads the same environment: they all refuse a malformed
  // setting, before any collective.
  if (Status s = loadFaultSetting())
    return s;
  std::lock_guard<std::mutex> lock(contextsMutex);
  if (Status s = initializeMpi())
    return s;
  auto created = std::make_unique<dtensor_context>();
  if (Status s = MpiCommunicator::create(parent, created->world))
    return s;
  Status local = nodePlace(created->world->handle(), created->localRank,
                           created->ranksOnNode);
  if (threads == 0)
    threads = defaultThreads(created->ranksOnNode);
  if (Status s = created->world->agree(local))
    return s;
  created->threads = threads;
  int threadLevel = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threadLevel);
  created->threadedCollectives = threadLevel >= MPI_THREAD_SERIALIZED;
  blas::setThreads(threads);
  ++liveContexts;
  context = created.release();
  return Status::success();
}

Status destroyContext(dtensor_context *context) {
  if (!context)
    return Status::success();
  Status status;
  for (dtensor_program *program : context->programs)
    delete program;
  context->programs.clear();
  status = context->world->barrier();
  delete context;
  std::lock_guard<std::mutex> lock(contextsMutex);
  if (--liveContexts == 0 && weInitializedMpi) {
    int code = MPI_Finalize();
    weInitializedMpi = false;
    if (code != MPI_SUCCESS && status.ok())
      status = mpiError("MPI_Finalize", code);
  }
  return status;
}

} // namespace dtensor::rt
