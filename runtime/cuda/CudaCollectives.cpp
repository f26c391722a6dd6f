//===- CudaCollectives.cpp - Collectives of the CUDA backend on NCCL ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every call is queued on the program's stream and completes in stream
// order. Strided views are packed into step buffers first (and unpacked
// after) unless they already form the contiguous message (PackedBlocks).
// Uneven pieces (torch.chunk) become one NCCL call per member inside a
// group call: an all-gather is a broadcast from each member of its piece, a
// reduce-scatter a reduce to each member of its piece, an all-to-all a send
// and a receive per member. Gathers and broadcasts move bytes; reductions
// use the dtype (f16 and bf16 are reduced by NCCL in their own type, where
// the CPU runtime accumulates in f32).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "PackedBlocks.h"

namespace dtensor::rt::cuda {

namespace {

#define DTENSOR_NCCL_TRY(call)                                                 \
  if (ncclResult_t code_ = (call); code_ != ncclSuccess)                       \
    return ncclFailure(#call, code_);

Status ncclTypeOf(DType dtype, ncclDataType_t &type) {
  switch (dtype) {
  case DType::F32:
    type = ncclFloat32;
    return Status::success();
  case DType::F64:
    type = ncclFloat64;
    return Status::success();
  case DType::F16:
    type = ncclFloat16;
    return Status::success();
  case DType::BF16:
    type = ncclBfloat16;
    return Status::success();
  case DType::I32:
    type = ncclInt32;
    return Status::success();
  case DType::I64:
    type = ncclInt64;
    return Status::success();
  case DType::I8:
    type = ncclInt8;
    return Status::success();
  case DType::Bool:
    type = ncclUint8;
    return Status::success();
  }
  return runtimeError("no NCCL type for this dtype");
}

/// The NCCL reduction; bool (0 or 1 bytes) reduces with or (sum, max) and
/// and (min), as on the CPU.
Status ncclOpOf(DType dtype, layout::ReduceKind kind, ncclRedOp_t &op) {
  if (dtype == DType::Bool) {
    if (kind == layout::ReduceKind::Avg)
      return invalidArgument("avg is not defined for bool tensors");
    op = kind == layout::ReduceKind::Min ? ncclMin : ncclMax;
    return Status::success();
  }
  switch (kind) {
  case layout::ReduceKind::Sum:
    op = ncclSum;
    break;
  case layout::ReduceKind::Avg:
    op = ncclAvg;
    break;
  case layout::ReduceKind::Max:
    op = ncclMax;
    break;
  case layout::ReduceKind::Min:
    op = ncclMin;
    break;
  }
  return Status::success();
}

/// A single contiguous view, usable as an NCCL buffer as it is.
bool single(const std::vector<StridedView> &views) {
  return views.size() == 1 && views.front().isContiguous();
}

} // namespace

Status CudaBackend::allReduce(int64_t group, const std::vector<StridedView> &in,
                              const std::vector<StridedView> &out, DType dtype,
                              layout::ReduceKind kind) {
  ncclComm_t comm;
  ncclDataType_t type;
  ncclRedOp_t op;
  if (Status s = commOf(group, comm))
    return s;
  if (Status s = ncclTypeOf(dtype, type))
    return s;
  if (Status s = ncclOpOf(dtype, kind, op))
    return s;
  size_t total = packedBlocks(in).total, count = total / dtypeSize(dtype);
  if (total == 0)
    return Status::success();
  if (single(in) && single(out)) {
    DTENSOR_NCCL_TRY(
        ncclAllReduce(in[0].data, out[0].data, count, type, op, comm, stream));
    return Status::success();
  }
  char *message;
  if (Status s = scratch(total, message))
    return s;
  Status status = pack(in, message);
  if (status.ok())
    if (ncclResult_t code =
            ncclAllReduce(message, message, count, type, op, comm, stream);
        code != ncclSuccess)
      status = ncclFailure("ncclAllReduce", code);
  if (status.ok())
    status = unpack(message, out);
  release(message);
  return status;
}

Status CudaBackend::allGather(int64_t group, const std::vector<StridedView> &in,
                              const MemberPieces &outPieces) {
  ncclComm_t comm;
  if (Status s = commOf(group, comm))
    return s;
  int me = 0;
  DTENSOR_NCCL_TRY(ncclCommUserRank(comm, &me));
  PackedBlocks blocks = packedBlocks(outPieces);
  if (blocks.total == 0)
    return Status::success();
  // The received message: the outputs themselves, or scratch.
  char *received = blocks.base, *sent = nullptr;
  std::vector<char *> buffers;
  Status status;
  if (!blocks.inPlace && (status = scratch(blocks.total, received)).ok())
    buffers.push_back(received);
  if (status.ok()) {
    if (single(in)) {
      sent = in[0].data;
    } else if ((status = scratch(blocks.bytes[me], sent)).ok()) {
      buffers.push_back(sent);
      status = pack(in, sent);
    }
  }
  if (status.ok()) {
    ncclResult_t code = ncclSuccess;
    if (blocks.uniform) {
      code = ncclAllGather(sent, received, blocks.bytes[me], ncclInt8, comm,
                           stream);
    } else {
      code = ncclGroupStart();
      for (size_t j = 0; j < blocks.bytes.size() && code == ncclSuccess; ++j)
        if (blocks.bytes[j] > 0)
          code =
              ncclBroadcast(sent, received + blocks.offsets[j], blocks.bytes[j],
                            ncclInt8, static_cast<int>(j), comm, stream);
      ncclResult_t ended = ncclGroupEnd();
      if (code == ncclSuccess)
        code = ended;
    }
    if (code != ncclSuccess)
      status = ncclFailure("all-gather", code);
  }
  for (size_t j = 0; status.ok() && !blocks.inPlace && j < outPieces.size();
       ++j)
    status = unpack(received + blocks.offsets[j], outPieces[j]);
  for (char *buffer : buffers)
    release(buffer);
  return status;
}

Status CudaBackend::reduceScatter(int64_t group, const MemberPieces &inPieces,
                                  const std::vector<StridedView> &out,
                                  DType dtype, layout::ReduceKind kind) {
  ncclComm_t comm;
  ncclDataType_t type;
  ncclRedOp_t op;
  if (Status s = commOf(group, comm))
    return s;
  if (Status s = ncclTypeOf(dtype, type))
    return s;
  if (Status s = ncclOpOf(dtype, kind, op))
    return s;
  int me = 0;
  DTENSOR_NCCL_TRY(ncclCommUserRank(comm, &me));
  size_t elemSize = dtypeSize(dtype);
  PackedBlocks blocks = packedBlocks(inPieces);
  if (blocks.total == 0)
    return Status::success();
  char *sent = blocks.base, *received = nullptr;
  std::vector<char *> buffers;
  Status status;
  if (!blocks.inPlace) {
    if ((status = scratch(blocks.total, sent)).ok()) {
      buffers.push_back(sent);
      for (size_t j = 0; status.ok() && j < inPieces.size(); ++j)
        status = pack(inPieces[j], sent + blocks.offsets[j]);
    }
  }
  if (status.ok()) {
    if (single(out))
      received = out[0].data;
    else if ((status = scratch(std::max<size_t>(blocks.bytes[me], 1), received))
                 .ok())
      buffers.push_back(received);
  }
  if (status.ok()) {
    ncclResult_t code = ncclSuccess;
    if (blocks.uniform) {
      code = ncclReduceScatter(sent, received, blocks.bytes[me] / elemSize,
                               type, op, comm, stream);
    } else {
      code = ncclGroupStart();
      for (size_t j = 0; j < blocks.bytes.size() && code == ncclSuccess; ++j)
        if (blocks.bytes[j] > 0)
          code = ncclReduce(sent + blocks.offsets[j], received,
                            blocks.bytes[j] / elemSize, type, op,
                            static_cast<int>(j), comm, stream);
      ncclResult_t ended = ncclGroupEnd();
      if (code == ncclSuccess)
        code = ended;
    }
    if (code != ncclSuccess)
      status = ncclFailure("reduce-scatter", code);
  }
  if (status.ok() && !single(out))
    status = unpack(received, out);
  for (char *buffer : buffers)
    release(buffer);
  return status;
}

Status CudaBackend::allToAll(int64_t group,
                             const std::vector<StridedView> &send,
                             const std::vector<StridedView> &recv) {
  ncclComm_t comm;
  if (Status s = commOf(group, comm))
    return s;
  PackedBlocks out = packedBlocks(send), back = packedBlocks(recv);
  char *sent = nullptr, *received = nullptr;
  Status status = scratch(std::max<size_t>(out.total, 1), sent);
  if (status.ok())
    status = scratch(std::max<size_t>(back.total, 1), received);
  if (status.ok())
    status = pack(send, sent);
  if (status.ok()) {
    ncclResult_t code = ncclGroupStart();
    for (size_t j = 0; j < send.size() && code == ncclSuccess; ++j) {
      int peer = static_cast<int>(j);
      if (out.bytes[j] > 0)
        code = ncclSend(sent + out.offsets[j], out.bytes[j], ncclInt8, peer,
                        comm, stream);
      if (code == ncclSuccess && back.bytes[j] > 0)
        code = ncclRecv(received + back.offsets[j], back.bytes[j], ncclInt8,
                        peer, comm, stream);
    }
    ncclResult_t ended = ncclGroupEnd();
    if (code == ncclSuccess)
      code = ended;
    if (code != ncclSuccess)
      status = ncclFailure("all-to-all", code);
  }
  if (status.ok())
    status = unpack(received, recv);
  if (sent)
    release(sent);
  if (received)
    release(received);
  return status;
}

Status CudaBackend::broadcast(int64_t group, const StridedView &in,
                              const StridedView &out, int root) {
  ncclComm_t comm;
  if (Status s = commOf(group, comm))
    return s;
  int me = 0;
  DTENSOR_NCCL_TRY(ncclCommUserRank(comm, &me));
  size_t bytes = bytesOf(in);
  if (bytes == 0)
    return Status::success();
  char *message = out.isContiguous() ? out.data : nullptr;
  char *sent = me == root && in.isContiguous() ? in.data : nullptr;
  std::vector<char *> buffers;
  Status status;
  if (!message && (status = scratch(bytes, message)).ok())
    buffers.push_back(message);
  // The root sends from its packed input, or from the message buffer.
  if (status.ok() && me == root && !sent) {
    sent = message;
    status = pack({in}, sent);
  }
  if (status.ok())
    if (ncclResult_t code = ncclBroadcast(sent ? sent : message, message, bytes,
                                          ncclInt8, root, comm, stream);
        code != ncclSuccess)
      status = ncclFailure("ncclBroadcast", code);
  if (status.ok() && !out.isContiguous())
    status = unpack(message, {out});
  for (char *buffer : buffers)
    release(buffer);
  return status;
}

} // namespace dtensor::rt::cuda
