//===- CpuCollectives.cpp - Collectives of the CPU backend on MPI ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each call packs every tensor (or piece) into one contiguous message, makes
// one call on the group's communicator and unpacks the result into the
// outputs, which may be strided views. Member j's pieces travel as one block,
// in tensor order.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

namespace dtensor::rt {

namespace {

size_t bytesOf(const StridedView &view) {
  return static_cast<size_t>(view.numElements()) * view.elemSize;
}

/// Packs `views` one after the other into `message` from `offset` on.
size_t packAll(const std::vector<StridedView> &views, char *message) {
  size_t offset = 0;
  for (const StridedView &view : views) {
    packView(view, message + offset);
    offset += bytesOf(view);
  }
  return offset;
}

size_t unpackAll(const char *message, const std::vector<StridedView> &views) {
  size_t offset = 0;
  for (const StridedView &view : views) {
    unpackView(message + offset, view);
    offset += bytesOf(view);
  }
  return offset;
}

size_t totalBytes(const std::vector<StridedView> &views) {
  size_t total = 0;
  for (const StridedView &view : views)
    total += bytesOf(view);
  return total;
}

} // namespace

Status CpuBackend::allReduce(int64_t group, const std::vector<StridedView> &in,
                             const std::vector<StridedView> &out, DType dtype,
                             layout::ReduceKind kind) {
  size_t total = totalBytes(in);
  std::vector<char> &message = sendMessage;
  message.resize(total);
  packAll(in, message.data());
  if (Status s =
          groups[group]->allReduce(message.data(), message.data(),
                                   total / dtypeSize(dtype), dtype, kind))
    return s;
  unpackAll(message.data(), out);
  return Status::success();
}

Status CpuBackend::allGather(int64_t group, const std::vector<StridedView> &in,
                             const MemberPieces &outPieces) {
  Communicator &comm = *groups[group];
  std::vector<size_t> &memberBytes = memberSizes;
  memberBytes.clear();
  size_t total = 0;
  for (const std::vector<StridedView> &pieces : outPieces) {
    memberBytes.push_back(totalBytes(pieces));
    total += memberBytes.back();
  }
  std::vector<char> &send = sendMessage;
  send.resize(memberBytes[comm.rank()]);
  packAll(in, send.data());
  std::vector<char> &received = receiveMessage;
  received.resize(total);
  if (Status s = comm.allGatherV(send.data(), send.size(), received.data(),
                                 memberBytes))
    return s;
  size_t offset = 0;
  for (const std::vector<StridedView> &pieces : outPieces)
    offset += unpackAll(received.data() + offset, pieces);
  return Status::success();
}

Status CpuBackend::reduceScatter(int64_t group, const MemberPieces &inPieces,
                                 const std::vector<StridedView> &out,
                                 DType dtype, layout::ReduceKind kind) {
  Communicator &comm = *groups[group];
  size_t elemSize = dtypeSize(dtype), total = 0;
  for (const std::vector<StridedView> &pieces : inPieces)
    total += totalBytes(pieces);
  // Block j of the message: member j's piece of every tensor, in order.
  std::vector<char> &send = sendMessage;
  send.resize(total);
  std::vector<size_t> &memberCounts = memberSizes;
  memberCounts.clear();
  size_t offset = 0;
  for (const std::vector<StridedView> &pieces : inPieces) {
    size_t bytes = packAll(pieces, send.data() + offset);
    memberCounts.push_back(bytes / elemSize);
    offset += bytes;
  }
  std::vector<char> &mine = receiveMessage;
  mine.resize(memberCounts[comm.rank()] * elemSize);
  if (Status s = comm.reduceScatterV(send.data(), mine.data(), memberCounts,
                                     dtype, kind))
    return s;
  unpackAll(mine.data(), out);
  return Status::success();
}

Status CpuBackend::allToAll(int64_t group, const std::vector<StridedView> &send,
                            const std::vector<StridedView> &recv) {
  std::vector<size_t> &sendBytes = memberSizes, &recvBytes = receiveSizes;
  sendBytes.clear();
  recvBytes.clear();
  for (const StridedView &view : send)
    sendBytes.push_back(bytesOf(view));
  for (const StridedView &view : recv)
    recvBytes.push_back(bytesOf(view));
  std::vector<char> &message = sendMessage, &received = receiveMessage;
  message.resize(totalBytes(send));
  received.resize(totalBytes(recv));
  packAll(send, message.data());
  if (Status s = groups[group]->allToAllV(message.data(), sendBytes,
                                          received.data(), recvBytes))
    return s;
  unpackAll(received.data(), recv);
  return Status::success();
}

Status CpuBackend::broadcast(int64_t group, const StridedView &in,
                             const StridedView &out, int root) {
  Communicator &comm = *groups[group];
  std::vector<char> &message = sendMessage;
  message.resize(bytesOf(in));
  if (comm.rank() == root)
    packView(in, message.data());
  if (Status s = comm.broadcast(message.data(), message.size(), root))
    return s;
  unpackView(message.data(), out);
  return Status::success();
}

} // namespace dtensor::rt
