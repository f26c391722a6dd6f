//===- RankLoop.cpp - The step loops of rank 0 and the others -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "RankLoop.h"

#include "Batcher.h"
#include "Log.h"
#include "SlotScheduler.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace dtensor::server {

namespace {

/// --fail-at-step K on this rank at step K: with --fail-kind hang it stops
/// answering, as a deadlocked or wedged rank would (only MPI_Abort or a
/// signal ends the process then); with error it returns true, and the step
/// passes a wrong shape to dtensor_program_set.
bool injectFailure(const Options &options, const Model &model, int64_t step) {
  int failRank =
      options.failRank >= 0 ? options.failRank : model.worldSize() - 1;
  if (!options.failAtStep || *options.failAtStep != step ||
      model.rank() != failRank)
    return false;
  if (options.failKind == FailureKind::Hang) {
    logError("--fail-at-step " + std::to_string(step) +
             " --fail-kind hang: this rank stops answering");
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  logError("--fail-at-step " + std::to_string(step) +
           ": passing a wrong shape to dtensor_program_set");
  return true;
}

/// --step-delay-ms: rank 0 waits before a step.
void delayStep(const Options &options) {
  if (options.stepDelayMs > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(options.stepDelayMs));
}

/// Answers everything still queued with 503 (after a failure).
void failQueued(RequestQueue &queue, const std::string &message) {
  queue.close();
  for (const auto &job : queue.drain()) {
    JobResult result;
    result.status = 503;
    result.error = message;
    job->finish(std::move(result));
  }
}

/// After a failed step: the jobs in progress (a Batcher's rows or a
/// SlotScheduler's slots) and the queued ones get 503 (a stream: an error
/// event), and the server turns unhealthy.
template <typename InProgress>
LoopEnd failStep(ServerState &state, InProgress &inProgress, int64_t step,
                 const std::string &error, bool sent) {
  std::string message = "step " + std::to_string(step) + " failed: " + error;
  logError(message);
  state.metrics->countStepFailure();
  state.health.fail(message);
  inProgress.failAll(503, message);
  failQueued(state.queue, message);
  state.activeRows = 0;
  return sent ? LoopEnd::Failed : LoopEnd::ChannelBroken;
}

} // namespace

LoopEnd leadSteps(Model &model, const ModelSpec &spec, const Options &options,
                  CommandChannel &channel, ServerState &state,
                  StepWatchdog &watchdog) {
  Batcher batcher(spec.batch, spec.seqLen, spec.vocab);
  std::vector<int64_t> next;
  std::vector<float> logits;
  auto batchWait = std::chrono::milliseconds(options.maxBatchWaitMs);
  for (int64_t step = 0;; ++step) {
    // Rows free up as jobs finish; waiting for company only makes sense when
    // nothing is running (a generation in progress must not stall).
    bool idle = batcher.idle();
    batcher.admit(state.queue.take(
        batcher.freeRows(), idle ? batchWait : std::chrono::milliseconds(0),
        /*block=*/idle));
    state.activeRows = batcher.active().size();
    if (batcher.idle())
      break; // closed and empty: shut down

    Command command;
    command.kind = Command::Step;
    command.step = step;
    command.fetchLogits = batcher.wantsLogits();
    std::vector<int64_t> tokens = batcher.pack();
    delayStep(options);
    size_t rows = batcher.active().size();
    auto start = std::chrono::steady_clock::now();
    watchdog.arm(step, batcher.active());
    std::string error;
    dtensor_status status = DTENSOR_OK;
    bool sent = channel.send(command, tokens, error);
    if (sent)
      status = model.step(spec, tokens, command.fetchLogits,
                          injectFailure(options, model, step), next, logits,
                          error);
    watchdog.disarm();
    if (!sent || status != DTENSOR_OK)
      return failStep(state, batcher, step, error, sent);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    size_t produced = batcher.complete(next, logits);
    state.metrics->countStep(rows, seconds, produced);
    state.activeRows = batcher.active().size();
  }

  std::string error;
  Command shutdown;
  shutdown.kind = Command::Shutdown;
  if (!channel.send(shutdown, {}, error)) {
    logError("cannot tell the ranks to shut down: " + error);
    return LoopEnd::ChannelBroken;
  }
  return LoopEnd::Shutdown;
}

LoopEnd followSteps(Model &model, const ModelSpec &spec, const Options &options,
                    CommandChannel &channel) {
  Command command;
  std::vector<int64_t> tokens, next;
  std::vector<float> logits;
  for (;;) {
    std::string error;
    if (!channel.receive(command, tokens, error)) {
      logError(error);
      return LoopEnd::ChannelBroken;
    }
    if (command.kind == Command::Shutdown)
      return LoopEnd::Shutdown;
    bool inject = injectFailure(options, model, command.step);
    if (model.step(spec, tokens, command.fetchLogits, inject, next, logits,
                   error) != DTENSOR_OK) {
      logError("step " + std::to_string(command.step) + " failed: " + error);
      return LoopEnd::Failed;
    }
  }
}

LoopEnd leadCacheSteps(Model &model, const ModelSpec &spec,
                       const Options &options, CommandChannel &channel,
                       ServerState &state, StepWatchdog &watchdog) {
  SlotScheduler scheduler(spec.batch, spec.logits.empty() ? 0 : spec.vocab);
  auto batchWait = std::chrono::milliseconds(options.maxBatchWaitMs);
  int64_t step = 0;
  auto record = [&](size_t rows, std::chrono::steady_clock::time_point start,
                    size_t produced) {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    state.metrics->countStep(rows, seconds, produced);
    state.metrics->countTokenTimes(scheduler.firstTokenSeconds,
                                   scheduler.interTokenSeconds);
    scheduler.firstTokenSeconds.clear();
    scheduler.interTokenSeconds.clear();
    state.activeRows = scheduler.active().size();
  };
  for (;;) {
    // Clients gone: their slots are free for this round.
    scheduler.dropCancelled();
    bool idle = scheduler.idle();
    // --max-prefills: while requests are decoding, admit (and prefill) at
    // most that many before the next decode step, so that a burst of
    // arrivals does not stall every token in flight.
    size_t room = scheduler.freeSlots();
    if (options.maxPrefills > 0 && !scheduler.decodeRows().empty())
      room = std::min(room, static_cast<size_t>(options.maxPrefills));
    std::vector<int64_t> admitted = scheduler.admit(state.queue.take(
        room, idle ? batchWait : std::chrono::milliseconds(0),
        /*block=*/idle));
    state.activeRows = scheduler.active().size();
    if (scheduler.idle())
      break; // closed and empty: shut down

    for (int64_t slot : admitted) {
      std::shared_ptr<Job> job = scheduler.jobAt(slot);
      if (job->cancelled()) {
        scheduler.dropCancelled();
        continue;
      }
      Command command;
      command.kind = Command::Prefill;
      command.step = step;
      command.slot = slot;
      command.count = static_cast<int64_t>(job->prompt.size());
      command.fetchLogits = scheduler.wantsLogits(slot);
      delayStep(options);
      auto start = std::chrono::steady_clock::now();
      watchdog.arm(step, scheduler.active());
      std::string error;
      std::vector<int64_t> all;
      std::vector<float> logits;
      bool sent = channel.send(command, job->prompt, error);
      dtensor_status status = DTENSOR_OK;
      if (sent)
        status = model.prefill(slot, job->prompt, command.fetchLogits,
                               injectFailure(options, model, step), all, logits,
                               error);
      watchdog.disarm();
      if (!sent || status != DTENSOR_OK)
        return failStep(state, scheduler, step, error, sent);
      record(1, start, scheduler.prefilled(slot, all, logits));
      ++step;
    }

    std::vector<tooling::Generator::Row> rows = scheduler.decodeRows();
    if (rows.empty())
      continue;
    Command command;
    command.kind = Command::Decode;
    command.step = step;
    command.count = static_cast<int64_t>(rows.size());
    // Greedy rows alone fetch no logits: the argmax is the answer.
    command.fetchLogits = scheduler.wantsLogits(rows);
    std::vector<int64_t> payload;
    for (const tooling::Generator::Row &row : rows)
      payload.insert(payload.end(), {row.slot, row.token, row.position});
    delayStep(options);
    auto start = std::chrono::steady_clock::now();
    watchdog.arm(step, scheduler.active());
    std::string error;
    std::vector<int64_t> next;
    std::vector<float> logits;
    bool sent = channel.send(command, payload, error);
    dtensor_status status = DTENSOR_OK;
    if (sent)
      status = model.decode(rows, command.fetchLogits,
                            injectFailure(options, model, step), next, logits,
                            error);
    watchdog.disarm();
    if (!sent || status != DTENSOR_OK)
      return failStep(state, scheduler, step, error, sent);
    record(rows.size(), start, scheduler.decoded(rows, next, logits));
    ++step;
  }

  std::string error;
  Command shutdown;
  shutdown.kind = Command::Shutdown;
  if (!channel.send(shutdown, {}, error)) {
    logError("cannot tell the ranks to shut down: " + error);
    return LoopEnd::ChannelBroken;
  }
  return LoopEnd::Shutdown;
}

LoopEnd followCacheSteps(Model &model, const Options &options,
                         CommandChannel &channel) {
  Command command;
  std::vector<int64_t> payload, out;
  std::vector<float> logits; // empty: only rank 0 receives them
  for (;;) {
    std::string error;
    if (!channel.receive(command, payload, error)) {
      logError(error);
      return LoopEnd::ChannelBroken;
    }
    if (command.kind == Command::Shutdown)
      return LoopEnd::Shutdown;
    bool inject = injectFailure(options, model, command.step);
    dtensor_status status = DTENSOR_OK;
    if (command.kind == Command::Prefill) {
      std::vector<int64_t> prompt(payload.begin(),
                                  payload.begin() + command.count);
      status = model.prefill(command.slot, prompt, command.fetchLogits, inject,
                             out, logits, error);
    } else if (command.kind == Command::Decode) {
      std::vector<tooling::Generator::Row> rows;
      for (int64_t i = 0; i < command.count; ++i)
        rows.push_back({payload[3 * i], payload[3 * i + 1],
                        payload[3 * i + 2]});
      status =
          model.decode(rows, command.fetchLogits, inject, out, logits, error);
    } else {
      logError("rank 0 sent a recompute step to a KV-cache server");
      return LoopEnd::ChannelBroken;
    }
    if (status != DTENSOR_OK) {
      logError("step " + std::to_string(command.step) + " failed: " + error);
      return LoopEnd::Failed;
    }
  }
}

} // namespace dtensor::server
