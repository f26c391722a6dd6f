//===- Collectives.cpp - The collectives compiled programs call -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dtensor_rt_* collectives of dtensor/rt_abi.h. Each takes the queued
// buffers, checks them against the dtensor dialect op of the same name,
// splits uneven dims into each member's piece (torch.chunk, nested over the
// group's mesh dims) and hands the views to the program's backend.
//
// An asynchronous call of a CPU program is checked and split here, then
// queued on the program's communication thread (CollectiveQueue), and its
// handle completes it in dtensor_rt_wait. On a GPU it is queued on the
// program's stream, which orders it before every later use, and under MPI
// below MPI_THREAD_SERIALIZED it completes in its call: the handle is then
// 0, which dtensor_rt_wait accepts. A synchronous call first lets the
// collectives in flight finish (ranks run their collectives in one order).
//
//===----------------------------------------------------------------------===//

#include "AbiCall.h"
#include "Backend.h"
#include "Context.h"
#include "Export.h"

#include "dtensor/Layout/CollectiveBytes.h"
#include "dtensor/rt_abi.h"

#include <algorithm>
#include <string_view>

namespace dtensor::rt {

namespace {

/// A group of the running program, checked.
Status groupOf(dtensor_program &program, int64_t id, Group *&group) {
  if (program.reference || id < 0 ||
      id >= static_cast<int64_t>(program.groups.size()))
    return runtimeError("group " + std::to_string(id) +
                        " is not a group of the program (it has " +
                        std::to_string(program.groups.size()) + ")");
  group = &program.groups[id];
  if (!group->comm)
    return runtimeError("this rank is outside the mesh of group " +
                        std::to_string(id));
  return Status::success();
}

/// Member `member`'s piece of a dim of `size` split over the group.
layout::Range pieceOf(const dtensor_program &program, const Group &group,
                      int64_t size, int member) {
  return layout::shardRange(size, program.meshes[group.mesh].mesh,
                            group.meshDims, group.members[member]);
}

Status checkDim(const char *op, const StridedView &view, int64_t dim) {
  if (dim < 0 || dim >= view.rank())
    return runtimeError(std::string(op) + ": dim " + std::to_string(dim) +
                        " out of range for a buffer of shape " +
                        view.shapeString());
  return Status::success();
}

/// Sizes equal except along `dim` (-1: all).
bool sameExcept(const StridedView &a, const StridedView &b, int64_t dim) {
  if (a.rank() != b.rank())
    return false;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (i != dim && a.sizes[i] != b.sizes[i])
      return false;
  return true;
}

Status shapeError(const char *op, const StridedView &in, const StridedView &out,
                  const std::string &why) {
  return runtimeError(std::string(op) + ": input " + in.shapeString() +
                      " and output " + out.shapeString() + " " + why);
}

/// While tracing, records on `call` the bytes this rank sends for the pairs
/// (in[i], out[i]) under the compile-time report's model: the pieces of the
/// split or gathered dims (`dim`, and all_to_all's `concatDim`, -1: none)
/// count at their largest size, which a rank's own may be smaller than.
void recordBytesSent(AbiCall &call, layout::CollectiveKind kind,
                     const std::vector<StridedView> &in,
                     const std::vector<StridedView> &out, int64_t dim,
                     int64_t concatDim, int members,
                     int64_t wholeSize = layout::kDynamic) {
  if (!call.program.tracing)
    return;
  using layout::CollectiveKind;
  int64_t total = 0;
  for (size_t i = 0; i < in.size() && i < out.size(); ++i) {
    std::vector<int64_t> input = in[i].sizes.vector(),
                         result = out[i].sizes.vector();
    if (kind == CollectiveKind::AllGather || kind == CollectiveKind::Shift)
      input[dim] = layout::kDynamic;
    if (kind == CollectiveKind::ReduceScatter ||
        kind == CollectiveKind::AllToAll)
      result[dim] = layout::kDynamic;
    if (kind == CollectiveKind::AllToAll && concatDim != dim)
      input[concatDim] = layout::kDynamic;
    total += layout::ringBytesSent(kind, input, result, dim, concatDim,
                                   members,
                                   static_cast<int64_t>(call.elemSize),
                                   wholeSize)
                 .value_or(0);
  }
  call.bytesSent = total;
}

/// The program's communication thread, started on first use; null when
/// asynchronous collectives complete in their call (see the file comment).
CollectiveQueue *queueOf(dtensor_program &program) {
  if (!program.collectiveQueue && program.context->threadedCollectives &&
      std::string_view(program.backend->target()) == "cpu")
    program.collectiveQueue =
        std::make_unique<CollectiveQueue>(*program.backend);
  return program.collectiveQueue.get();
}

/// Runs the program's collective (`call.program.collective`, its views and
/// parameters set) as `kind` on `groupId`: queued when `async` and the
/// program has a communication thread (call.handle is then its handle),
/// else now, after the collectives in flight.
Status runCollective(AbiCall &call, const char *name,
                     layout::CollectiveKind kind, int64_t groupId,
                     int32_t async) {
  dtensor_program &program = call.program;
  CollectiveOp &op = program.collective;
  op.kind = kind;
  op.group = groupId;
  op.dtype = call.dtype;
  if (CollectiveQueue *queue = async ? queueOf(program) : nullptr) {
    // AbiCall::run records the call's trace event next, at this index.
    int64_t traceIndex =
        program.tracing ? static_cast<int64_t>(program.trace.size()) : -1;
    call.handle = queue->issue(op, name, groupId, call.site, traceIndex);
    return Status::success();
  }
  if (program.collectiveQueue)
    if (Status s = program.collectiveQueue->settle())
      return s;
  return op.runOn(*program.backend);
}

Status allReduce(AbiCall &call, int64_t groupId, int32_t reduction,
                 int64_t count, int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("all_reduce", count, in, out))
    return s;
  for (int64_t i = 0; i < count; ++i)
    if (!sameExcept(in[i], out[i], -1))
      return shapeError("all_reduce", in[i], out[i], "differ");
  layout::ReduceKind kind;
  if (Status s = reductionOf(reduction, kind))
    return s;
  recordBytesSent(call, layout::CollectiveKind::AllReduce, in, out, -1, -1,
                  group->comm->size());
  op.reduction = kind;
  return runCollective(call, "all_reduce", layout::CollectiveKind::AllReduce,
                       groupId, async);
}

Status allGather(AbiCall &call, int64_t groupId, int64_t dim, int64_t count,
                 int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("all_gather", count, in, out))
    return s;
  int members = group->comm->size(), me = group->comm->rank();
  for (int64_t i = 0; i < count; ++i) {
    if (Status s = checkDim("all_gather", out[i], dim))
      return s;
    if (!sameExcept(in[i], out[i], dim) ||
        in[i].sizes[dim] !=
            pieceOf(call.program, *group, out[i].sizes[dim], me).size())
      return shapeError("all_gather", in[i], out[i],
                        "do not match along gather dim " + std::to_string(dim) +
                            " over a group of " + std::to_string(members));
  }
  recordBytesSent(call, layout::CollectiveKind::AllGather, in, out, dim, -1,
                  members);
  // Member j's input lands in its piece of each output's gather dim.
  MemberPieces &pieces = op.pieces;
  pieces.resize(members);
  for (std::vector<StridedView> &member : pieces)
    member.clear();
  for (int j = 0; j < members; ++j)
    for (const StridedView &view : out) {
      layout::Range piece = pieceOf(call.program, *group, view.sizes[dim], j);
      pieces[j].push_back(view.slice(dim, piece.begin, piece.size()));
    }
  return runCollective(call, "all_gather", layout::CollectiveKind::AllGather,
                       groupId, async);
}

Status reduceScatter(AbiCall &call, int64_t groupId, int32_t reduction,
                     int64_t dim, int64_t count, int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("reduce_scatter", count, in, out))
    return s;
  int members = group->comm->size(), me = group->comm->rank();
  for (int64_t i = 0; i < count; ++i) {
    if (Status s = checkDim("reduce_scatter", in[i], dim))
      return s;
    if (!sameExcept(in[i], out[i], dim) ||
        out[i].sizes[dim] !=
            pieceOf(call.program, *group, in[i].sizes[dim], me).size())
      return shapeError("reduce_scatter", in[i], out[i],
                        "do not match along scatter dim " +
                            std::to_string(dim) + " over a group of " +
                            std::to_string(members));
  }
  layout::ReduceKind kind;
  if (Status s = reductionOf(reduction, kind))
    return s;
  recordBytesSent(call, layout::CollectiveKind::ReduceScatter, in, out, dim,
                  -1, members);
  // Member j's piece of every input is reduced into member j's output.
  MemberPieces &pieces = op.pieces;
  pieces.resize(members);
  for (std::vector<StridedView> &member : pieces)
    member.clear();
  for (int j = 0; j < members; ++j)
    for (const StridedView &view : in) {
      layout::Range piece = pieceOf(call.program, *group, view.sizes[dim], j);
      pieces[j].push_back(view.slice(dim, piece.begin, piece.size()));
    }
  op.reduction = kind;
  return runCollective(call, "reduce_scatter",
                       layout::CollectiveKind::ReduceScatter, groupId, async);
}

Status allToAll(AbiCall &call, int64_t groupId, int64_t splitDim,
                int64_t concatDim, int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("all_to_all", 1, in, out))
    return s;
  const StridedView &input = in[0], &output = out[0];
  if (Status s = checkDim("all_to_all", input, splitDim))
    return s;
  if (Status s = checkDim("all_to_all", input, concatDim))
    return s;
  int members = group->comm->size(), me = group->comm->rank();
  const dtensor_program &program = call.program;
  bool matches = input.rank() == output.rank();
  for (int64_t d = 0; matches && d < input.rank(); ++d) {
    if (d == splitDim && d != concatDim)
      matches = output.sizes[d] ==
                pieceOf(program, *group, input.sizes[d], me).size();
    else if (d == concatDim && d != splitDim)
      matches = input.sizes[d] ==
                pieceOf(program, *group, output.sizes[d], me).size();
    else if (d != splitDim)
      matches = input.sizes[d] == output.sizes[d];
  }
  if (!matches)
    return shapeError("all_to_all", input, output,
                      "do not match for split dim " + std::to_string(splitDim) +
                          " and concat dim " + std::to_string(concatDim) +
                          " over a group of " + std::to_string(members));
  recordBytesSent(call, layout::CollectiveKind::AllToAll, in, out, splitDim,
                  concatDim, members);
  // Piece j of the input's split dim goes to member j; member j's piece of
  // the output's concat dim comes from member j.
  op.pieces.resize(2);
  std::vector<StridedView> &sendPieces = op.pieces[0],
                           &recvPieces = op.pieces[1];
  sendPieces.clear();
  recvPieces.clear();
  for (int j = 0; j < members; ++j) {
    layout::Range out = pieceOf(program, *group, input.sizes[splitDim], j);
    layout::Range back = pieceOf(program, *group, output.sizes[concatDim], j);
    sendPieces.push_back(input.slice(splitDim, out.begin, out.size()));
    recvPieces.push_back(output.slice(concatDim, back.begin, back.size()));
  }
  return runCollective(call, "all_to_all", layout::CollectiveKind::AllToAll,
                       groupId, async);
}

Status broadcast(AbiCall &call, int64_t groupId, int64_t root, int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("broadcast", 1, in, out))
    return s;
  if (!sameExcept(in[0], out[0], -1))
    return shapeError("broadcast", in[0], out[0], "differ");
  if (root < 0 || root >= group->comm->size())
    return runtimeError("broadcast: root " + std::to_string(root) +
                        " is not a member of a group of " +
                        std::to_string(group->comm->size()));
  recordBytesSent(call, layout::CollectiveKind::Broadcast, in, out, -1, -1,
                  group->comm->size());
  op.root = static_cast<int>(root);
  return runCollective(call, "broadcast", layout::CollectiveKind::Broadcast,
                       groupId, async);
}

Status shift(AbiCall &call, int64_t groupId, int64_t dim, int64_t dimSize,
             int64_t step, int64_t count, int32_t async) {
  Group *group;
  if (Status s = groupOf(call.program, groupId, group))
    return s;
  CollectiveOp &op = call.program.collective;
  std::vector<StridedView> &in = op.in, &out = op.out;
  if (Status s = call.takeInputsOutputs("shift", count, in, out))
    return s;
  int members = group->comm->size(), me = group->comm->rank();
  if (dimSize < 0 || step < 0)
    return runtimeError("shift: dim size " + std::to_string(dimSize) +
                        " and step " + std::to_string(step) +
                        " must not be negative");
  // This rank holds piece (me - step) of the dim and receives piece
  // (me - step - 1) from the member before it.
  auto memberAt = [&](int64_t offset) {
    int64_t m = (me - offset) % members;
    return static_cast<int>(m < 0 ? m + members : m);
  };
  int64_t held = pieceOf(call.program, *group, dimSize, memberAt(step)).size(),
          received =
              pieceOf(call.program, *group, dimSize, memberAt(step + 1)).size();
  for (int64_t i = 0; i < count; ++i) {
    if (Status s = checkDim("shift", in[i], dim))
      return s;
    if (!sameExcept(in[i], out[i], dim) || in[i].sizes[dim] != held ||
        out[i].sizes[dim] != received)
      return shapeError("shift", in[i], out[i],
                        "are not pieces " + std::to_string(memberAt(step)) +
                            " and " + std::to_string(memberAt(step + 1)) +
                            " (" + std::to_string(held) + " and " +
                            std::to_string(received) + " along dim " +
                            std::to_string(dim) + ") of " +
                            std::to_string(dimSize) + " over a group of " +
                            std::to_string(members));
  }
  recordBytesSent(call, layout::CollectiveKind::Shift, in, out, dim, -1,
                  members, dimSize);
  // An all-to-all in which only the next member gets data and only the one
  // before sends any: both backends implement it, and it orders the
  // messages as every other collective of the group.
  int next = (me + 1) % members, previous = (me + members - 1) % members;
  // The program's piece lists, reused from step to step (no allocation in
  // the steady state).
  // Per tensor, its send pieces then its receive pieces.
  MemberPieces &pieces = op.pieces;
  pieces.resize(2 * count);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<StridedView> &sendPieces = pieces[2 * i],
                             &recvPieces = pieces[2 * i + 1];
    sendPieces.resize(members);
    recvPieces.resize(members);
    for (int j = 0; j < members; ++j) {
      sendPieces[j] = in[i].slice(dim, 0, j == next ? in[i].sizes[dim] : 0);
      recvPieces[j] =
          out[i].slice(dim, 0, j == previous ? out[i].sizes[dim] : 0);
    }
  }
  return runCollective(call, "shift", layout::CollectiveKind::Shift, groupId,
                       async);
}

/// Runs collective `body` as ABI function `op`; the handle it got (0: it
/// completed in the call).
template <typename Body>
int64_t issueCollective(const char *op, int32_t dtype, int64_t group,
                        Body body) {
  int64_t handle = 0;
  AbiCall::run(
      op, dtype,
      [&](AbiCall &call) {
        Status status = body(call);
        handle = call.handle;
        return status;
      },
      group);
  return handle;
}

/// Gives a traced asynchronous collective's event the interval it ran in.
void recordCompletion(dtensor_program &program,
                      const CollectiveQueue::Completion &done) {
  if (done.traceIndex < 0 ||
      done.traceIndex >= static_cast<int64_t>(program.trace.size()))
    return;
  dtensor_trace_event &event = program.trace[done.traceIndex];
  event.start_us = program.traceTime(done.begin);
  event.end_us = program.traceTime(done.end);
  event.async = 1;
}

} // namespace

Status drainCollectives(dtensor_program &program) {
  if (!program.collectiveQueue)
    return Status::success();
  return program.collectiveQueue->drain(
      [&](const CollectiveQueue::Completion &done) {
        recordCompletion(program, done);
      });
}

} // namespace dtensor::rt

using namespace dtensor::rt;

extern "C" {

DTENSOR_EXPORT int64_t dtensor_rt_mesh_coord(int64_t mesh, int64_t meshDim) {
  int64_t coord = 0;
  AbiCall::run("mesh_coord", -1, [&](AbiCall &call) {
    dtensor_program &program = call.program;
    if (mesh < 0 || mesh >= static_cast<int64_t>(program.meshes.size()))
      return runtimeError("mesh_coord: mesh " + std::to_string(mesh) +
                          " is not a mesh of the program");
    const MeshPlace &place = program.meshes[mesh];
    if (meshDim < 0 || meshDim >= place.mesh.rank())
      return runtimeError("mesh_coord: mesh " + std::to_string(mesh) +
                          " has no dim " + std::to_string(meshDim));
    if (!place.coord)
      return runtimeError("mesh_coord: this rank is outside mesh " +
                          std::to_string(mesh));
    coord = (*place.coord)[meshDim];
    return Status::success();
  });
  return coord;
}

DTENSOR_EXPORT int64_t dtensor_rt_group_sum(int64_t group, int64_t value) {
  int64_t sum = 0;
  AbiCall::run("group_sum", DTENSOR_RT_I64, [&](AbiCall &call) {
    Group *found;
    if (Status s = groupOf(call.program, group, found))
      return s;
    if (call.program.collectiveQueue)
      if (Status s = call.program.collectiveQueue->settle())
        return s;
    return found->comm->allReduce(&value, &sum, 1, DType::I64,
                                  dtensor::layout::ReduceKind::Sum);
  });
  return sum;
}

DTENSOR_EXPORT void dtensor_rt_push_buffer(int64_t rank, void *descriptor) {
  if (dtensor_program *program = currentProgram())
    program->queued.emplace_back(rank, descriptor);
}

DTENSOR_EXPORT int64_t dtensor_rt_all_reduce(int64_t group, int32_t reduction,
                                             int32_t dtype, int64_t count,
                                             int32_t async) {
  return issueCollective("all_reduce", dtype, group, [&](AbiCall &call) {
    return allReduce(call, group, reduction, count, async);
  });
}

DTENSOR_EXPORT int64_t dtensor_rt_all_gather(int64_t group, int64_t gatherDim,
                                             int32_t dtype, int64_t count,
                                             int32_t async) {
  return issueCollective("all_gather", dtype, group, [&](AbiCall &call) {
    return allGather(call, group, gatherDim, count, async);
  });
}

DTENSOR_EXPORT int64_t dtensor_rt_reduce_scatter(int64_t group,
                                                 int32_t reduction,
                                                 int64_t scatterDim,
                                                 int32_t dtype, int64_t count,
                                                 int32_t async) {
  return issueCollective("reduce_scatter", dtype, group, [&](AbiCall &call) {
    return reduceScatter(call, group, reduction, scatterDim, count, async);
  });
}

DTENSOR_EXPORT int64_t dtensor_rt_all_to_all(int64_t group, int64_t splitDim,
                                             int64_t concatDim, int32_t dtype,
                                             int32_t async) {
  return issueCollective("all_to_all", dtype, group, [&](AbiCall &call) {
    return allToAll(call, group, splitDim, concatDim, async);
  });
}

DTENSOR_EXPORT int64_t dtensor_rt_broadcast(int64_t group, int64_t root,
                                            int32_t dtype, int32_t async) {
  return issueCollective("broadcast", dtype, group, [&](AbiCall &call) {
    return broadcast(call, group, root, async);
  });
}

DTENSOR_EXPORT int64_t dtensor_rt_shift(int64_t group, int64_t dim,
                                        int64_t dimSize, int64_t step,
                                        int32_t dtype, int64_t count,
                                        int32_t async) {
  return issueCollective("shift", dtype, group, [&](AbiCall &call) {
    return shift(call, group, dim, dimSize, step, count, async);
  });
}

DTENSOR_EXPORT void dtensor_rt_collective_site(int64_t site) {
  if (dtensor_program *program = currentProgram())
    program->nextSite = site;
}

DTENSOR_EXPORT void dtensor_rt_wait(int64_t handle) {
  // Compiled programs push the collective's buffers before its wait (they
  // stay in use until here); the wait takes them and ignores them.
  if (handle == 0) {
    if (dtensor_program *program = currentProgram())
      program->queued.clear();
    return;
  }
  AbiCall::run("wait", -1, [&](AbiCall &call) {
    dtensor_program &program = call.program;
    if (!program.collectiveQueue)
      return runtimeError("wait: unknown handle " + std::to_string(handle));
    double blocked = program.tracing ? program.traceNow() : 0.0;
    CollectiveQueue::Completion done;
    Status status = program.collectiveQueue->wait(handle, done);
    if (program.tracing && done.traceIndex >= 0) {
      recordCompletion(program, done);
      program.trace.push_back({"wait", program.traceSteps, done.group, 0,
                               blocked, program.traceNow(), done.site, 0, 0});
    }
    return status;
  });
}

} // extern "C"
