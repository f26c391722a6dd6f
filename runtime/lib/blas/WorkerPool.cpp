//===- WorkerPool.cpp - Threads for the runtime's own kernels -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "WorkerPool.h"

#include <chrono>

namespace dtensor::rt {

namespace {
/// How long an idle worker polls for the next loop before it sleeps.
constexpr auto kSpinTime = std::chrono::microseconds(200);
} // namespace

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(wakeMutex);
    stopping = true;
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void WorkerPool::runPieces() {
  for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
       i = next.fetch_add(1, std::memory_order_relaxed))
    (*body)(i);
}

void WorkerPool::work() {
  uint64_t seen = 0;
  while (true) {
    // Poll for a new loop, then sleep until one is posted.
    auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    while (generation.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    {
      std::unique_lock<std::mutex> lock(wakeMutex);
      wake.wait(lock, [&] {
        return generation.load(std::memory_order_acquire) != seen;
      });
      if (stopping)
        return;
      seen = generation.load(std::memory_order_acquire);
    }
    runPieces();
    busyWorkers.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WorkerPool::parallelFor(int64_t pieces,
                             const std::function<void(int64_t)> &loopBody) {
  if (pieces <= 0)
    return;
  std::lock_guard<std::mutex> loop(loopMutex);
  if (workers.empty() || pieces == 1) {
    for (int64_t i = 0; i < pieces; ++i)
      loopBody(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(wakeMutex);
    body = &loopBody;
    count = pieces;
    next.store(0, std::memory_order_relaxed);
    busyWorkers.store(static_cast<int>(workers.size()),
                      std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  runPieces();
  // Every worker takes part in every loop, so none is still reading `body`
  // or `count` when the next loop overwrites them.
  while (busyWorkers.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
  body = nullptr;
}

} // namespace dtensor::rt
