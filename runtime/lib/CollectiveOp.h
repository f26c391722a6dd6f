//===- CollectiveOp.h - One checked collective, ready to run ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What a dtensor_rt_* collective hands to the backend once its arguments are
// checked and its uneven pieces split: the kind, the group, the views. Held
// by value so that an asynchronous call can keep it until it runs on the
// communication thread (CollectiveQueue); its vectors keep their storage
// from call to call, so that a step's steady state does not allocate.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_COLLECTIVEOP_H
#define DTENSOR_RUNTIME_COLLECTIVEOP_H

#include "Backend.h"

#include "dtensor/Layout/CollectiveBytes.h"

namespace dtensor::rt {

struct CollectiveOp {
  /// AllReduce (in, out), AllGather (in, pieces: member j's place of each
  /// output), ReduceScatter (pieces: member j's part of each input, out),
  /// AllToAll and Shift (pieces: send then receive pieces per member, one
  /// pair per tensor for Shift), Broadcast (in[0], out[0], root).
  layout::CollectiveKind kind = layout::CollectiveKind::AllReduce;
  int64_t group = 0;
  DType dtype = DType::F32;
  layout::ReduceKind reduction = layout::ReduceKind::Sum;
  int root = 0;
  std::vector<StridedView> in, out;
  MemberPieces pieces;

  /// Runs it on `backend`: the data moves, or (a GPU) is queued on its
  /// stream.
  Status runOn(Backend &backend) const;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_COLLECTIVEOP_H
