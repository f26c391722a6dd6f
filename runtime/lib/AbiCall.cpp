//===- AbiCall.cpp - One call of a compiled program into the runtime ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AbiCall.h"

#include "FaultInjection.h"

#include <cstring>
#include <new>
#include <utility>

namespace dtensor::rt {

void AbiCall::run(const char *op, int32_t dtype,
                  FunctionRef<Status(AbiCall &)> body,
                  int64_t group) {
  dtensor_program *program = currentProgram();
  if (!program) {
    report(runtimeError(std::string("dtensor_rt_") + op +
                        " called outside dtensor_program_run"));
    return;
  }
  AbiCall call(*program);
  call.buffers.swap(program->queued);
  // The queue gets its storage back, empty, for the next call's buffers.
  struct ReturnQueue {
    AbiCall &call;
    ~ReturnQueue() {
      call.buffers.clear();
      call.program.queued.swap(call.buffers);
    }
  } returnQueue{call};
  if (!program->stepError.ok())
    return;
  if (group >= 0)
    faultPoint(*program, FaultPoint::Collective, op);
  else if (std::strncmp(op, "matmul", 6) == 0 ||
           std::strcmp(op, "gpu_launch") == 0)
    faultPoint(*program, FaultPoint::Compute, op);
  // A collective takes the site announced for it, traced or not.
  if (group >= 0)
    std::swap(call.site, program->nextSite);
  bool traced = program->tracing && group >= 0;
  double start = traced ? program->traceNow() : 0.0;
  Status status;
  try {
    if (dtype >= 0) {
      std::optional<DType> known = dtypeFromInt(dtype);
      if (!known) {
        status = runtimeError("unknown dtype " + std::to_string(dtype));
      } else {
        call.dtype = *known;
        call.elemSize = dtypeSize(*known);
      }
    } else if (dtype != -1) {
      status = runtimeError("unknown dtype " + std::to_string(dtype));
    }
    if (status.ok())
      status = body(call);
  } catch (const std::bad_alloc &) {
    status = runtimeError("out of memory");
  } catch (const std::exception &error) {
    status = runtimeError(error.what());
  } catch (...) {
    status = runtimeError("unexpected exception");
  }
  if (traced)
    program->trace.push_back({op, program->traceSteps, group, call.inputBytes,
                              start, program->traceNow(), call.site,
                              call.bytesSent});
  if (status.ok())
    return;
  program->stepError =
      Status(status.code(), std::string("dtensor_rt_") + op + " (" +
                                program->artifact + "): " + status.message());
  // The step failed: the rest of its calls are skipped, waits included, and
  // the program may free buffers a collective in flight still uses.
  drainCollectives(*program);
}

Status AbiCall::takeViews(const char *op, int64_t count,
                          std::vector<StridedView> &views) {
  if (static_cast<int64_t>(buffers.size()) != count)
    return runtimeError(std::string(op) + ": expected " +
                        std::to_string(count) + " queued buffers, got " +
                        std::to_string(buffers.size()));
  views.clear();
  for (auto [rank, descriptor] : buffers) {
    if (!descriptor || rank < 0)
      return runtimeError(std::string(op) + ": invalid buffer (rank " +
                          std::to_string(rank) + ")");
    views.push_back(viewOfDescriptor(rank, descriptor, elemSize));
    for (int64_t size : views.back().sizes)
      if (size < 0)
        return runtimeError(std::string(op) + ": buffer of shape " +
                            views.back().shapeString());
  }
  return Status::success();
}

Status AbiCall::takeInputsOutputs(const char *op, int64_t count,
                                  std::vector<StridedView> &inputs,
                                  std::vector<StridedView> &outputs) {
  if (count < 1)
    return runtimeError(std::string(op) + ": count " + std::to_string(count));
  std::vector<StridedView> &views = program.callViews;
  if (Status s = takeViews(op, 2 * count, views))
    return s;
  inputs.assign(views.begin(), views.begin() + count);
  outputs.assign(views.begin() + count, views.end());
  inputBytes = 0;
  for (const StridedView &input : inputs) {
    int64_t elements = 1;
    for (int64_t size : input.sizes)
      elements *= size;
    inputBytes += elements * static_cast<int64_t>(elemSize);
  }
  return Status::success();
}

StridedView AbiCall::viewAs(size_t index, size_t size) const {
  return viewOfDescriptor(buffers[index].first, buffers[index].second, size);
}

Status reductionOf(int32_t reduction, layout::ReduceKind &kind) {
  switch (reduction) {
  case 0:
    kind = layout::ReduceKind::Sum;
    return Status::success();
  case 1:
    kind = layout::ReduceKind::Avg;
    return Status::success();
  case 2:
    kind = layout::ReduceKind::Max;
    return Status::success();
  case 3:
    kind = layout::ReduceKind::Min;
    return Status::success();
  }
  return runtimeError("unknown reduction " + std::to_string(reduction));
}

} // namespace dtensor::rt
