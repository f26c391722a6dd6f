//===- AbiCall.h - One call of a program into the runtime -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The frame of every dtensor_rt_* function: finds the running program,
// takes the queued buffers, skips the call when the step already failed,
// turns exceptions into statuses and records the first error on the
// program, where dtensor_program_run finds it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ABICALL_H
#define DTENSOR_RUNTIME_ABICALL_H

#include "FunctionRef.h"
#include "Program.h"

#include <functional>

namespace dtensor::rt {

class AbiCall {
public:
  /// Runs `body` for ABI function `op` on the running program; `dtype` is
  /// the call's element type, or -1 when it has none. A collective passes
  /// its `group`: while the program traces, the call is recorded (`op`
  /// must then be a string literal).
  static void run(const char *op, int32_t dtype,
                  FunctionRef<Status(AbiCall &)> body,
                  int64_t group = -1);

  /// Views of the queued buffers: `count` inputs then `count` outputs.
  Status takeInputsOutputs(const char *op, int64_t count,
                           std::vector<StridedView> &inputs,
                           std::vector<StridedView> &outputs);
  /// Views of exactly `count` queued buffers.
  Status takeViews(const char *op, int64_t count,
                   std::vector<StridedView> &views);
  /// The view of queued buffer `index` (after takeViews checked it) with
  /// elements of another size: an operand of another dtype than the call's.
  StridedView viewAs(size_t index, size_t elemSize) const;

  dtensor_program &program;
  DType dtype = DType::F32;
  size_t elemSize = 1;
  /// Bytes of the inputs takeInputsOutputs handed out (for the trace).
  int64_t inputBytes = 0;
  /// Bytes this rank sends under the compile-time report's model
  /// (layout::ringBytesSent), set by the collective (for the trace).
  int64_t bytesSent = 0;
  /// A collective's site (dtensor_rt_collective_site), or -1.
  int64_t site = -1;
  /// An asynchronous collective's handle, once queued, or 0.
  int64_t handle = 0;

private:
  explicit AbiCall(dtensor_program &program) : program(program) {}
  std::vector<std::pair<int64_t, void *>> buffers;
};

/// The reduction of a dtensor_rt_reduction value.
Status reductionOf(int32_t reduction, layout::ReduceKind &kind);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_ABICALL_H
