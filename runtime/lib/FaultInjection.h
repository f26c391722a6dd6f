//===- FaultInjection.h - DTENSOR_TEST_FAULT: a rank killed ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A testing aid: DTENSOR_TEST_FAULT=rank=R,step=K,point=collective|compute
// makes rank R of the world SIGKILL itself at a chosen point of its K-th
// dtensor_program_run (counted from 0 over every program of the process):
// on entering the step's first collective, or its first matrix product or
// kernel launch. The tests of rank failures use it to die at a point they
// choose, deterministically, without a debugger or timing guesses. The
// variable is read once, when the first context is created; a malformed
// value makes dtensor_context_create fail. Unset, it costs one branch per
// runtime call of a step. docs/runtime.md, "Rank failures".
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FAULTINJECTION_H
#define DTENSOR_RUNTIME_FAULTINJECTION_H

#include "FaultSetting.h"

#include <cstdint>

struct dtensor_program;

namespace dtensor::rt {

/// Reads DTENSOR_TEST_FAULT (once per process) and returns the outcome.
Status loadFaultSetting();

/// Called by dtensor_program_run before each step: counts the process's
/// steps.
void countFaultStep();

/// Called by the runtime calls of a step: kills this process with SIGKILL
/// when the setting names this rank, the current step and `point`, and this
/// is the step's first call of that kind. `op` names the call in the line
/// written to stderr first.
void faultPoint(dtensor_program &program, FaultPoint point, const char *op);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FAULTINJECTION_H
