//===- RankLoop.h - The step loops of rank 0 and the others -----*- C++ -*-===//
//
// Rank 0 takes jobs from the queue into the batch, broadcasts each step and
// answers from its results; the other ranks run the steps they are told.
// A step that fails (the runtime makes every rank see it) ends both loops
// with exit code 1; a shutdown, after the last queued job, with 0.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_SERVER_RANKLOOP_H
#define DTENSOR_SERVER_RANKLOOP_H

#include "CommandChannel.h"
#include "Model.h"
#include "Options.h"
#include "ServerState.h"
#include "StepWatchdog.h"

namespace dtensor::server {

/// Rank 0. Returns the process's exit code.
int leadSteps(Model &model, const ModelSpec &spec, const Options &options,
              CommandChannel &channel, ServerState &state,
              StepWatchdog &watchdog);

/// Every other rank. Returns the process's exit code.
int followSteps(Model &model, const ModelSpec &spec, const Options &options,
                CommandChannel &channel);

} // namespace dtensor::server

#endif // DTENSOR_SERVER_RANKLOOP_H
