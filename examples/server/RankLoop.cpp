//===- RankLoop.cpp - The step loops of rank 0 and the others -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "RankLoop.h"

#include "Batcher.h"
#include "Log.h"

#include <chrono>
#include <thread>

namespace dtensor::server {

namespace {

/// --fail-at-step on this rank?
bool injectHere(const Options &options, int rank, int worldSize, int64_t step) {
  int failRank = options.failRank >= 0 ? options.failRank : worldSize - 1;
  return options.failAtStep && *options.failAtStep == step && rank == failRank;
}

/// --fail-kind hang: stop answering, as a deadlocked or wedged rank would.
/// Only MPI_Abort (or a signal) ends this process now.
[[noreturn]] void hang(int64_t step) {
  logError("--fail-at-step " + std::to_string(step) +
           " --fail-kind hang: this rank stops answering");
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds(1));
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
    size_t rows = batcher.active().size();
    auto start = std::chrono::steady_clock::now();
    watchdog.arm(step, batcher.active());
    std::string error;
    dtensor_status status = DTENSOR_OK;
    bool sent = channel.send(command, tokens, error);
    if (sent) {
      bool inject = injectHere(options, model.rank(), model.worldSize(), step);
      if (inject && options.failKind == FailureKind::Hang)
        hang(step);
      if (inject)
        logError("--fail-at-step " + std::to_string(step) +
                 ": passing a wrong shape to dtensor_program_set");
      status = model.step(spec, tokens, command.fetchLogits, inject, next,
                          logits, error);
    }
    watchdog.disarm();
    if (status != DTENSOR_OK) {
      std::string message =
          "step " + std::to_string(step) + " failed: " + error;
      logError(message);
      state.metrics->countStepFailure();
      state.health.fail(message);
      batcher.failAll(503, message);
      failQueued(state.queue, message);
      state.activeRows = 0;
      return sent ? LoopEnd::Failed : LoopEnd::ChannelBroken;
    }
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
    bool inject =
        injectHere(options, model.rank(), model.worldSize(), command.step);
    if (inject && options.failKind == FailureKind::Hang)
      hang(command.step);
    if (inject)
      logError("--fail-at-step " + std::to_string(command.step) +
               ": passing a wrong shape to dtensor_program_set");
    if (model.step(spec, tokens, command.fetchLogits, inject, next, logits,
                   error) != DTENSOR_OK) {
      logError("step " + std::to_string(command.step) + " failed: " + error);
      return LoopEnd::Failed;
    }
  }
}

} // namespace dtensor::server
