//===- WorkerPool.h - Threads for the runtime's own kernels -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A fixed set of threads that run the pieces of one parallel loop at a
// time, the caller taking a piece too. Workers spin briefly after each loop
// before they sleep: a decode step runs its products microseconds apart,
// and waking a sleeping thread costs about as much as a small product.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BLAS_WORKERPOOL_H
#define DTENSOR_RUNTIME_BLAS_WORKERPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dtensor::rt {

class WorkerPool {
public:
  /// `threads` threads in all: the caller of parallelFor and threads - 1
  /// workers.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  int threads() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs body(i) for every i in [0, count), spread over the threads, and
  /// returns when all have run. One loop at a time: calls are serialised.
  void parallelFor(int64_t count, const std::function<void(int64_t)> &body);

private:
  void work();
  void runPieces();

  std::vector<std::thread> workers;
  std::mutex loopMutex; // one parallelFor at a time
  std::mutex wakeMutex;
  std::condition_variable wake;
  const std::function<void(int64_t)> *body = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int> busyWorkers{0};
  std::atomic<uint64_t> generation{0};
  bool stopping = false;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_BLAS_WORKERPOOL_H
