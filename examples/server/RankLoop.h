//===- RankLoop.h - The step loops of rank 0 and the others -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rank 0 takes jobs from the queue into the batch, broadcasts each step and
// answers from its results; the other ranks run the steps they are told.
// Both end the same way on every rank: after a shutdown (rank 0 had
// nothing left to do), or after a failed step (the runtime makes every rank
// see it). Only a broken command channel leaves ranks out of step.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_RANKLOOP_H
#define DTENSOR_EXAMPLES_SERVER_RANKLOOP_H

#include "CommandChannel.h"
#include "Model.h"
#include "Options.h"
#include "ServerState.h"
#include "StepWatchdog.h"

namespace dtensor::server {

enum class LoopEnd {
  Shutdown,     // every rank leaves the loop; exit 0
  Failed,       // every rank saw a failure (a step, rank 0 start-up); exit 1
  ChannelBroken // MPI failed outside the runtime: the ranks cannot agree on
                // anything more, only MPI_Abort ends them
};

/// Rank 0.
LoopEnd leadSteps(Model &model, const ModelSpec &spec, const Options &options,
                  CommandChannel &channel, ServerState &state,
                  StepWatchdog &watchdog);

/// Every other rank.
LoopEnd followSteps(Model &model, const ModelSpec &spec, const Options &options,
                    CommandChannel &channel);

/// Rank 0 with a KV-cache artifact: between decode steps, queued jobs take
/// free slots and are prefilled; each decode step advances every active job
/// by one token (SlotScheduler).
LoopEnd leadCacheSteps(Model &model, const ModelSpec &spec,
                       const Options &options, CommandChannel &channel,
                       ServerState &state, StepWatchdog &watchdog);

/// Every other rank with a KV-cache artifact.
LoopEnd followCacheSteps(Model &model, const Options &options,
                         CommandChannel &channel);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_RANKLOOP_H
