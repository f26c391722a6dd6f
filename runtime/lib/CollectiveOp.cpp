//===- CollectiveOp.cpp - One checked collective, ready to run ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CollectiveOp.h"

namespace dtensor::rt {

Status CollectiveOp::runOn(Backend &backend) const {
  using layout::CollectiveKind;
  switch (kind) {
  case CollectiveKind::AllReduce:
    return backend.allReduce(group, in, out, dtype, reduction);
  case CollectiveKind::AllGather:
    return backend.allGather(group, in, pieces);
  case CollectiveKind::ReduceScatter:
    return backend.reduceScatter(group, pieces, out, dtype, reduction);
  case CollectiveKind::AllToAll:
    return backend.allToAll(group, pieces[0], pieces[1]);
  case CollectiveKind::Shift:
    // One exchange per tensor, in tensor order.
    for (size_t i = 0; i + 1 < pieces.size(); i += 2)
      if (Status s = backend.allToAll(group, pieces[i], pieces[i + 1]))
        return s;
    return Status::success();
  case CollectiveKind::Broadcast:
    return backend.broadcast(group, in[0], out[0], root);
  }
  return runtimeError("unknown collective kind");
}

} // namespace dtensor::rt
