//===- CollectiveQueue.cpp - Collectives run on a communication thread ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CollectiveQueue.h"

#include <exception>
#include <new>

namespace dtensor::rt {

CollectiveQueue::CollectiveQueue(Backend &backend)
    : backend(backend), thread([this] { serve(); }) {}

CollectiveQueue::~CollectiveQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workReady.notify_one();
  thread.join();
}

int64_t CollectiveQueue::issue(CollectiveOp &op, const char *name,
                               int64_t group, int64_t site,
                               int64_t traceIndex) {
  std::unique_ptr<Job> job;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!spare.empty()) {
      job = std::move(spare.back());
      spare.pop_back();
    }
  }
  if (!job)
    job = std::make_unique<Job>();
  std::swap(job->op, op);
  job->completion = Completion{name, group, site, traceIndex, {}, {}};
  job->status = Status::success();
  job->done = job->waited = false;
  int64_t handle;
  {
    std::lock_guard<std::mutex> lock(mutex);
    handle = job->handle = ++lastHandle;
    queue.push_back(std::move(job));
  }
  workReady.notify_one();
  return handle;
}

Status CollectiveQueue::wait(int64_t handle, Completion &completion) {
  std::unique_lock<std::mutex> lock(mutex);
  Job *job = nullptr;
  for (const std::unique_ptr<Job> &queued : queue)
    if (queued->handle == handle && !queued->waited)
      job = queued.get();
  if (!job)
    return runtimeError("wait: handle " + std::to_string(handle) +
                        " is not a collective in flight");
  jobDone.wait(lock, [&] { return job->done; });
  job->waited = true;
  completion = job->completion;
  Status status = job->status;
  releaseWaited();
  return status;
}

void CollectiveQueue::awaitAll(std::unique_lock<std::mutex> &lock) {
  // Jobs complete in issue order: the last one done means all are.
  jobDone.wait(lock, [&] { return queue.empty() || queue.back()->done; });
}

Status CollectiveQueue::settle() {
  std::unique_lock<std::mutex> lock(mutex);
  awaitAll(lock);
  return failure;
}

Status CollectiveQueue::drain(FunctionRef<void(const Completion &)> completed) {
  std::unique_lock<std::mutex> lock(mutex);
  awaitAll(lock);
  Status first;
  for (const std::unique_ptr<Job> &job : queue) {
    if (job->waited)
      continue;
    job->waited = true;
    completed(job->completion);
    if (first.ok() && !job->status.ok())
      first = job->status;
  }
  releaseWaited();
  failure = Status::success();
  return first;
}

bool CollectiveQueue::inFlight() {
  std::lock_guard<std::mutex> lock(mutex);
  return !queue.empty();
}

void CollectiveQueue::releaseWaited() {
  size_t released = 0;
  while (released < queue.size() && queue[released]->done &&
         queue[released]->waited)
    spare.push_back(std::move(queue[released++]));
  queue.erase(queue.begin(), queue.begin() + released);
  started -= released;
}

void CollectiveQueue::serve() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    workReady.wait(lock, [&] { return stopping || started < queue.size(); });
    if (started == queue.size())
      return;
    // The job stays where it is (queue holds pointers) while it runs
    // unlocked; nothing else touches it until it is done.
    Job &job = *queue[started++];
    Status earlier = failure;
    lock.unlock();
    job.completion.begin = Clock::now();
    Status status = earlier;
    if (status.ok()) {
      try {
        status = job.op.runOn(backend);
      } catch (const std::bad_alloc &) {
        status = runtimeError("out of memory");
      } catch (const std::exception &error) {
        status = runtimeError(error.what());
      }
      if (!status.ok())
        status = Status(status.code(), std::string(job.completion.name) +
                                           " (in flight): " + status.message());
    }
    job.completion.end = Clock::now();
    lock.lock();
    if (failure.ok() && !status.ok())
      failure = status;
    job.status = std::move(status);
    job.done = true;
    jobDone.notify_all();
  }
}

} // namespace dtensor::rt
