//===- StepMemory.cpp - dtensor_rt_alloc and dtensor_rt_free --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Inside a step the running program's backend hands out the buffers (host
// memory on the CPU, device memory on a GPU) and keeps the freed ones for
// the next steps; outside a step they are plain aligned host allocations.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "BufferCache.h"
#include "Export.h"
#include "Program.h"

#include "dtensor/rt_abi.h"

using namespace dtensor::rt;

namespace {

/// Records the first error of the running step, as AbiCall does; the queued
/// buffers stay queued for the call they belong to.
void recordError(dtensor_program &program, const char *op,
                 const Status &status) {
  if (program.stepError.ok())
    program.stepError =
        Status(status.code(), std::string("dtensor_rt_") + op + " (" +
                                  program.artifact + "): " + status.message());
}

} // namespace

extern "C" DTENSOR_EXPORT void *dtensor_rt_alloc(uint64_t bytes) {
  dtensor_program *program = currentProgram();
  if (!program)
    return BufferCache::allocate(nullptr, bytes);
  void *buffer = program->backend->allocate(bytes);
  if (!buffer)
    recordError(*program, "alloc",
                runtimeError("out of memory allocating " +
                             std::to_string(bytes) + " bytes"));
  return buffer;
}

extern "C" DTENSOR_EXPORT void dtensor_rt_free(void *buffer) {
  dtensor_program *program = currentProgram();
  if (!program) {
    BufferCache::free(buffer);
    return;
  }
  if (!buffer)
    return;
  if (Status s = program->backend->release(buffer))
    recordError(*program, "free", s);
}
