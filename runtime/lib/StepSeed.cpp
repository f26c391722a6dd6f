//===- StepSeed.cpp - The seed of a step's random ops ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor_rt_step_seed, which compiled random ops call once per step, and
// the C API that sets and reads a program's random seed and step counter.
//
//===----------------------------------------------------------------------===//

#include "Export.h"
#include "Program.h"
#include "Status.h"

#include "dtensor/Formats/Random.h"
#include "dtensor/rt_abi.h"
#include "dtensor/runtime.h"

using namespace dtensor::rt;

extern "C" {

DTENSOR_EXPORT uint64_t dtensor_rt_step_seed(void) {
  // Not an AbiCall: it reads the program without taking the queued buffers
  // (which belong to the next collective or matmul call).
  dtensor_program *program = currentProgram();
  if (!program) {
    report(runtimeError(
        "dtensor_rt_step_seed called outside dtensor_program_run"));
    return 0;
  }
  return counter_rng::stepSeed(program->randomSeed, program->randomStep);
}

DTENSOR_EXPORT dtensor_status dtensor_program_set_random_state(
    dtensor_program *program, uint64_t seed, uint64_t step) {
  if (!program)
    return report(
        invalidArgument("dtensor_program_set_random_state: NULL argument"));
  program->randomSeed = seed;
  program->randomStep = step;
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status dtensor_program_random_state(
    const dtensor_program *program, uint64_t *seed, uint64_t *step) {
  if (!program || !seed || !step)
    return report(
        invalidArgument("dtensor_program_random_state: NULL argument"));
  *seed = program->randomSeed;
  *step = program->randomStep;
  return DTENSOR_OK;
}

} // extern "C"
