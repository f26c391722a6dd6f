//===- CollectiveQueue.h - Collectives on a comm thread ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The asynchronous collectives of a CPU program: dtensor_rt_* calls with
// `async` set queue their checked CollectiveOp here and return a handle; one
// communication thread runs the queue in issue order, which is program
// order on every rank, so that the ranks' collectives still match; the
// program computes meanwhile and dtensor_rt_wait blocks on the handle. The
// thread sleeps on a condition variable while the queue is empty (it never
// spins: on a machine the ranks fill, a spinning thread takes cores from
// the compute).
//
// MPI is then called from two threads, never at once: the runtime requires
// MPI_THREAD_SERIALIZED, and the program's thread runs the queue out (drain)
// before any MPI call of its own (a synchronous collective, group_sum, the
// step's agreement).
//
// After a collective failed, the later ones of the queue are not run (they
// complete with the same error): the step has failed, and the peers see it
// at the step's agreement.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_COLLECTIVEQUEUE_H
#define DTENSOR_RUNTIME_COLLECTIVEQUEUE_H

#include "CollectiveOp.h"
#include "FunctionRef.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace dtensor::rt {

class CollectiveQueue {
public:
  using Clock = std::chrono::steady_clock;

  /// A collective that ran: what it was and when, on the communication
  /// thread.
  struct Completion {
    const char *name = "";
    int64_t group = -1, site = -1;
    /// Its event in the program's trace, or -1.
    int64_t traceIndex = -1;
    Clock::time_point begin, end;
  };

  /// Runs collectives on `backend`, which must outlive the queue.
  explicit CollectiveQueue(Backend &backend);
  /// Runs the queue out and stops the thread.
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue &) = delete;
  CollectiveQueue &operator=(const CollectiveQueue &) = delete;

  /// Queues `op` after every collective issued before it and returns its
  /// handle (> 0). Takes `op`'s views; `op` gets other storage back (of an
  /// earlier collective: no allocation in the steady state). `name` is a
  /// string literal (the ABI function without dtensor_rt_).
  int64_t issue(CollectiveOp &op, const char *name, int64_t group, int64_t site,
                int64_t traceIndex);

  /// Blocks until collective `handle` ran; its status (an error when it, or
  /// one issued before it, failed, or when the handle is not one in
  /// flight). Each handle is waited for at most once.
  Status wait(int64_t handle, Completion &completion);

  /// Blocks until every issued collective ran; the first failure among
  /// them. Their handles stay valid for wait.
  Status settle();

  /// Settles, then calls `completed` for each collective not waited for, in
  /// issue order, and returns the first error among them. The queue is then
  /// empty and runs later collectives again.
  Status drain(FunctionRef<void(const Completion &)> completed);

  /// True while some issued collective was neither waited for nor drained.
  bool inFlight();

private:
  struct Job {
    CollectiveOp op;
    Completion completion;
    int64_t handle = 0;
    Status status;
    bool done = false, waited = false;
  };

  void serve();
  /// With `lock` held: blocks until every issued job is done.
  void awaitAll(std::unique_lock<std::mutex> &lock);
  /// Moves the waited jobs at the front of the queue to `spare`.
  void releaseWaited();

  Backend &backend;
  std::mutex mutex;
  std::condition_variable workReady, jobDone;
  /// Issued jobs not yet released, in issue order; the first `started` of
  /// them were taken by the communication thread.
  std::vector<std::unique_ptr<Job>> queue;
  size_t started = 0;
  /// Jobs to reuse.
  std::vector<std::unique_ptr<Job>> spare;
  int64_t lastHandle = 0;
  /// The first failure since the queue was last drained.
  Status failure;
  bool stopping = false;
  std::thread thread;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_COLLECTIVEQUEUE_H
