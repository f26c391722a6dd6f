//===- Main.cpp - dtensor-server: a compiled token model over HTTP --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mpirun -n RANKS dtensor-server model.dtc [--port P] [--seed N] ...
//
// One process per rank. Every rank loads the artifact through the runtime's
// C API; rank 0 also serves HTTP on threads of its own, while its main
// thread is the only one that calls MPI or the runtime (so
// MPI_THREAD_FUNNELED is enough; the runtime does not initialise MPI again
// when the host has). See README.md.
//
//===----------------------------------------------------------------------===//

#include "CommandChannel.h"
#include "HttpServer.h"
#include "Log.h"
#include "Model.h"
#include "Options.h"
#include "RankLoop.h"
#include "SignalWatcher.h"
#include "StepWatchdog.h"

#include "dtensor/Tooling/TokenizerConfig.h"

#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

using namespace dtensor::server;

namespace {

/// True when any rank passes `failed` (a step that is not a runtime call).
bool anyFailed(bool failed) {
  int local = failed, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any != 0;
}

/// Writes the port to `path` through a temporary file, so that a reader
/// never sees it half-written.
bool writePortFile(const std::string &path, int port) {
  std::string temporary = path + ".tmp";
  FILE *file = std::fopen(temporary.c_str(), "w");
  if (!file)
    return false;
  bool ok = std::fprintf(file, "%d\n", port) > 0;
  ok = std::fclose(file) == 0 && ok;
  return ok && std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::string failMessage(int64_t step, double seconds) {
  char text[160];
  std::snprintf(text, sizeof(text),
                "step %lld did not finish within %g s (--step-timeout-s): a "
                "rank is stuck; aborting the MPI job",
                static_cast<long long>(step), seconds);
  return text;
}

/// --tokenizer's tokenizer and end-of-sequence tokens into `state`.
bool loadTokenizer(const Options &options, ServerState &state,
                   std::string &error) {
  if (options.tokenizer.empty())
    return true;
  state.tokenizer = dtensor::tooling::loadTokenizer(options.tokenizer, error);
  if (!state.tokenizer) {
    error = "--tokenizer: " + error;
    return false;
  }
  dtensor::tooling::TokenizerConfig config;
  if (!dtensor::tooling::readTokenizerConfig(options.tokenizer,
                                             *state.tokenizer, config, error)) {
    error = "--tokenizer: " + error;
    return false;
  }
  state.endOfSequence = config.endOfSequence;
  state.bosToken = config.bosToken;
  state.eosToken = config.eosToken;
  // A template beyond the supported subset is refused here, at start, not
  // per request.
  if (!config.chatTemplate.empty() &&
      !(state.chatTemplate = dtensor::tooling::ChatTemplate::parse(
            config.chatTemplate, error))) {
    error = "--tokenizer: " + error;
    return false;
  }
  std::string ends;
  for (int64_t id : config.endOfSequence)
    ends += (ends.empty() ? "" : ", ") + std::to_string(id);
  logInfo("tokenizer: " + state.tokenizer->kind() + " of " +
          std::to_string(state.tokenizer->size()) + " tokens from " +
          options.tokenizer + "; end of sequence: " +
          (ends.empty() ? "none" : ends) +
          (state.chatTemplate ? "; a chat template" : "; no chat template"));
  if (state.tokenizer->size() > state.limits.vocab)
    logInfo("tokenizer: it has more tokens than the model's vocabulary (" +
            std::to_string(state.limits.vocab) +
            "): prompts with the others are refused");
  return true;
}

/// Rank 0: the HTTP server, the watchdog and signals around the step loop.
LoopEnd serve(Model &model, const ModelSpec &spec, const Options &options,
              CommandChannel &channel) {
  ServerState state;
  state.limits = {spec.seqLen, spec.vocab, !spec.logits.empty(), spec.cache};
  state.batch = spec.batch;
  state.modelName = options.modelName;
  if (state.modelName.empty()) {
    std::string path = options.artifact;
    while (path.size() > 1 && path.back() == '/')
      path.pop_back();
    state.modelName = path.substr(path.find_last_of('/') + 1);
    if (state.modelName.size() > 4 &&
        state.modelName.compare(state.modelName.size() - 4, 4, ".dtc") == 0)
      state.modelName.resize(state.modelName.size() - 4);
  }
  state.ranks = model.worldSize();
  state.metrics =
      std::make_unique<Metrics>(spec.batch, spec.seqLen, model.worldSize());
  state.requestShutdown = [&state](const std::string &reason) {
    if (state.health.state() == Health::State::Serving)
      logInfo("shutting down (" + reason + "): finishing " +
              std::to_string(state.queue.depth() + state.activeRows.load()) +
              " request(s) in progress");
    state.health.drain(reason);
    state.queue.close();
  };

  HttpServer http(options, state);
  std::string error;
  if (!loadTokenizer(options, state, error) || !http.bind(error)) {
    logError(error);
    // The other ranks wait for a command: tell them to leave.
    Command shutdown;
    shutdown.kind = Command::Shutdown;
    return channel.send(shutdown, {}, error) ? LoopEnd::Failed
                                             : LoopEnd::ChannelBroken;
  }

  // A stuck step: answer what waits, stop HTTP (which waits for those
  // answers to be written), then end the whole job. MPI_Abort is called
  // from this thread while the main thread is blocked inside MPI: the one
  // call outside MPI_THREAD_FUNNELED, made because nothing else can end the
  // ranks stuck in a collective.
  StepWatchdog watchdog(
      options.stepTimeoutS, [&](int64_t step, const StepWatchdog::Jobs &jobs) {
        std::string message = failMessage(step, options.stepTimeoutS);
        logError(message);
        state.metrics->countStepFailure();
        state.health.fail(message);
        state.queue.close();
        std::vector<std::shared_ptr<Job>> waiting = state.queue.drain();
        waiting.insert(waiting.end(), jobs.begin(), jobs.end());
        for (const auto &job : waiting) {
          JobResult result;
          result.status = 503;
          result.error = message;
          job->finish(std::move(result));
        }
        http.stop();
        MPI_Abort(MPI_COMM_WORLD, 3);
      });
  SignalWatcher signals([&](int signal) {
    state.requestShutdown(signal == SIGINT ? "SIGINT" : "SIGTERM");
  });

  http.start();
  if (!options.portFile.empty() &&
      !writePortFile(options.portFile, http.port()))
    logError("cannot write --port-file " + options.portFile);
  logInfo("serving " + options.artifact + " on http://" + options.host + ":" +
          std::to_string(http.port()) + " with " +
          std::to_string(model.worldSize()) + " rank(s): " +
          (spec.cache ? "a KV cache of " + std::to_string(spec.batch) +
                            " slots of " + std::to_string(spec.seqLen) +
                            " positions"
                      : "batch " + std::to_string(spec.batch) +
                            ", sequence length " + std::to_string(spec.seqLen)) +
          ", vocabulary " +
          std::to_string(spec.vocab) + " (" + spec.vocabSource + ")" +
          (spec.logits.empty() ? "" : ", logits '" + spec.logits + "'"));

  LoopEnd end =
      spec.cache
          ? leadCacheSteps(model, spec, options, channel, state, watchdog)
          : leadSteps(model, spec, options, channel, state, watchdog);
  http.stop();
  logInfo(end == LoopEnd::Shutdown ? "shut down" : "stopped after a failure");
  return end;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::optional<int> status = parseOptions(argc, argv, options))
    return *status;

  blockShutdownSignals();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, worldSize = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  setLogRank(rank, options.quiet);
  // Only rank 0 shuts down gracefully on a signal (it tells the others).
  // The others keep the default action: when mpirun ends the job (after a
  // rank exits non-zero, or on Ctrl-C) it sends them SIGTERM, and a rank
  // that ignored it would only be killed later, after a timeout.
  if (rank != 0)
    unblockShutdownSignals();
  if (provided < MPI_THREAD_FUNNELED) {
    logError("MPI does not provide MPI_THREAD_FUNNELED");
    MPI_Finalize();
    return 1;
  }

  int code = 1;
  {
    Model model;
    std::string error;
    if (model.open(options, error) != DTENSOR_OK) {
      // The runtime agreed: every rank failed; the cause is rank 0's to say
      // (the others have it as "rank R failed: ...").
      if (rank == 0)
        logError(error);
    } else {
      ModelSpec spec;
      bool described = model.describe(options, spec, error);
      if (anyFailed(!described)) {
        if (rank == 0)
          logError(error.empty() ? "another rank could not read the artifact"
                                 : error);
      } else {
        // With a KV cache a command carries a prompt or 3 values per slot.
        size_t capacity =
            spec.cache ? static_cast<size_t>(
                             std::max(spec.seqLen, 3 * spec.batch))
                       : static_cast<size_t>(spec.batch * spec.seqLen);
        CommandChannel channel(capacity);
        LoopEnd end = rank == 0 ? serve(model, spec, options, channel)
                      : spec.cache
                          ? followCacheSteps(model, options, channel)
                          : followSteps(model, spec, options, channel);
        // The others may wait in a broadcast that will never come: closing
        // the runtime (collective) would hang.
        if (end == LoopEnd::ChannelBroken)
          MPI_Abort(MPI_COMM_WORLD, 1);
        code = end == LoopEnd::Shutdown ? 0 : 1;
      }
    }
    if (model.close() != DTENSOR_OK && code == 0) {
      logError(std::string("closing the runtime: ") + dtensor_last_error());
      code = 1;
    }
  }
  MPI_Finalize();
  return code;
}
