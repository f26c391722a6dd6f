//===- MpiCommunicator.cpp - Communicator on MPI --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "MpiCommunicator.h"

#include <climits>
#include <cstring>

namespace dtensor::rt {

using layout::ReduceKind;

Status mpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  return commError(std::string(call) + " failed: " +
                   (length ? std::string(text, length)
                           : "MPI error code " + std::to_string(code)));
}

#define DTENSOR_MPI_CALL(call, ...)                                            \
  do {                                                                         \
    int mpiCode = call(__VA_ARGS__);                                           \
    if (mpiCode != MPI_SUCCESS)                                                \
      return mpiError(#call, mpiCode);                                         \
  } while (false)

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm(comm) {
  MPI_Comm_rank(comm, &myRank);
  MPI_Comm_size(comm, &groupSize);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

Status MpiCommunicator::create(MPI_Comm parent,
                               std::unique_ptr<MpiCommunicator> &out) {
  MPI_Comm dup = MPI_COMM_NULL;
  DTENSOR_MPI_CALL(MPI_Comm_dup, parent, &dup);
  int code = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    MPI_Comm_free(&dup);
    return mpiError("MPI_Comm_set_errhandler", code);
  }
  out.reset(new MpiCommunicator(dup));
  return Status::success();
}

Status MpiCommunicator::split(int color, int key,
                              std::unique_ptr<Communicator> &result) {
  MPI_Comm part = MPI_COMM_NULL;
  DTENSOR_MPI_CALL(MPI_Comm_split, comm, color < 0 ? MPI_UNDEFINED : color, key,
                   &part);
  result.reset();
  if (part == MPI_COMM_NULL)
    return Status::success();
  int code = MPI_Comm_set_errhandler(part, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    MPI_Comm_free(&part);
    return mpiError("MPI_Comm_set_errhandler", code);
  }
  result.reset(new MpiCommunicator(part));
  return Status::success();
}

namespace {

/// The MPI type of the elements MPI reduces for `dtype` (f32 for the 16-bit
/// floats, which are widened first).
MPI_Datatype reductionType(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  case DType::I8:
    return MPI_INT8_T;
  case DType::Bool:
    return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op reductionOp(DType dtype, ReduceKind kind) {
  if (dtype == DType::Bool)
    return kind == ReduceKind::Min ? MPI_LAND : MPI_LOR;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Avg:
    return MPI_SUM;
  case ReduceKind::Max:
    return MPI_MAX;
  case ReduceKind::Min:
    return MPI_MIN;
  }
  return MPI_OP_NULL;
}

bool isHalf(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16; }

std::vector<float> widen(const void *data, size_t count, DType dtype) {
  std::vector<float> wide(count);
  const uint16_t *bits = static_cast<const uint16_t *>(data);
  for (size_t i = 0; i < count; ++i)
    wide[i] = dtype == DType::F16 ? halfToFloat(bits[i]) : bf16ToFloat(bits[i]);
  return wide;
}

void narrow(const std::vector<float> &wide, void *data, DType dtype) {
  uint16_t *bits = static_cast<uint16_t *>(data);
  for (size_t i = 0; i < wide.size(); ++i)
    bits[i] = dtype == DType::F16 ? floatToHalf(wide[i]) : floatToBf16(wide[i]);
}

template <typename T> void divideAll(void *data, size_t count, int divisor) {
  T *values = static_cast<T *>(data);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<T>(values[i] / static_cast<T>(divisor));
}

/// Divides the summed elements (in their MPI reduction type) by `divisor`.
void divideSums(void *data, size_t count, DType dtype, int divisor) {
  switch (dtype) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return divideAll<float>(data, count, divisor);
  case DType::F64:
    return divideAll<double>(data, count, divisor);
  case DType::I32:
    return divideAll<int32_t>(data, count, divisor);
  case DType::I64:
    return divideAll<int64_t>(data, count, divisor);
  case DType::I8:
    return divideAll<int8_t>(data, count, divisor);
  case DType::Bool:
    return;
  }
}

Status checkReduction(DType dtype, ReduceKind kind) {
  if (dtype == DType::Bool && kind == ReduceKind::Avg)
    return invalidArgument("avg is not defined for bool tensors");
  return Status::success();
}

Status intCount(size_t count, const char *what, int &out) {
  if (count > static_cast<size_t>(INT_MAX))
    return invalidArgument(std::string(what) + " of " + std::to_string(count) +
                           " exceeds MPI's limit of 2^31-1 per call");
  out = static_cast<int>(count);
  return Status::success();
}

/// int counts and displacements for a V collective of byte sizes.
Status byteLayout(const std::vector<size_t> &bytes, std::vector<int> &counts,
                  std::vector<int> &displs) {
  counts.resize(bytes.size());
  displs.resize(bytes.size());
  size_t offset = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (Status s = intCount(bytes[i], "a message", counts[i]))
      return s;
    if (Status s = intCount(offset, "a message offset", displs[i]))
      return s;
    offset += bytes[i];
  }
  return Status::success();
}

} // namespace

Status MpiCommunicator::allReduce(const void *send, void *recv, size_t count,
                                  DType dtype, ReduceKind kind) {
  if (Status s = checkReduction(dtype, kind))
    return s;
  MPI_Datatype type = reductionType(dtype);
  MPI_Op op = reductionOp(dtype, kind);
  std::vector<float> wide;
  const void *in = send;
  void *out = recv;
  if (isHalf(dtype)) {
    wide = widen(send, count, dtype);
    in = MPI_IN_PLACE;
    out = wide.data();
  } else if (send == recv) {
    in = MPI_IN_PLACE;
  }
  // MPI counts are ints: reduce in pieces of at most 2^30 elements.
  int typeSize = 0;
  MPI_Type_size(type, &typeSize);
  const size_t piece = size_t(1) << 30;
  for (size_t done = 0; done < count; done += piece) {
    int n = static_cast<int>(std::min(piece, count - done));
    const void *pieceIn = in == MPI_IN_PLACE
                              ? MPI_IN_PLACE
                              : static_cast<const char *>(in) + done * typeSize;
    DTENSOR_MPI_CALL(MPI_Allreduce, pieceIn,
                     static_cast<char *>(out) + done * typeSize, n, type, op,
                     comm);
  }
  if (kind == ReduceKind::Avg)
    divideSums(out, count, dtype, groupSize);
  if (isHalf(dtype))
    narrow(wide, recv, dtype);
  return Status::success();
}

Status MpiCommunicator::allGatherV(const void *send, size_t sendBytes,
                                   void *recv,
                                   const std::vector<size_t> &recvBytes) {
  if (Status s = byteLayout(recvBytes, counts, displs))
    return s;
  if (sendBytes != recvBytes[myRank])
    return runtimeError("all-gather: this rank sends " +
                        std::to_string(sendBytes) + " bytes, expected " +
                        std::to_string(recvBytes[myRank]));
  DTENSOR_MPI_CALL(MPI_Allgatherv, send, counts[myRank], MPI_BYTE, recv,
                   counts.data(), displs.data(), MPI_BYTE, comm);
  return Status::success();
}

Status MpiCommunicator::gatherV(const void *send, size_t sendBytes, void *recv,
                                const std::vector<size_t> &recvBytes,
                                int root) {
  if (Status s = byteLayout(recvBytes, counts, displs))
    return s;
  if (sendBytes != recvBytes[myRank])
    return runtimeError("gather: this rank sends " + std::to_string(sendBytes) +
                        " bytes, expected " +
                        std::to_string(recvBytes[myRank]));
  DTENSOR_MPI_CALL(MPI_Gatherv, send, counts[myRank], MPI_BYTE, recv,
                   counts.data(), displs.data(), MPI_BYTE, root, comm);
  return Status::success();
}

Status MpiCommunicator::reduceScatterV(const void *send, void *recv,
                                       const std::vector<size_t> &counts,
                                       DType dtype, ReduceKind kind) {
  if (Status s = checkReduction(dtype, kind))
    return s;
  std::vector<int> &intCounts = recvCounts;
  intCounts.resize(counts.size());
  size_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (Status s = intCount(counts[i], "a reduce-scatter block", intCounts[i]))
      return s;
    total += counts[i];
  }
  int unused;
  if (Status s = intCount(total, "a reduce-scatter message", unused))
    return s;
  MPI_Datatype type = reductionType(dtype);
  MPI_Op op = reductionOp(dtype, kind);
  size_t mine = counts[myRank];
  std::vector<float> wideSend, wideRecv;
  const void *in = send;
  void *out = recv;
  if (isHalf(dtype)) {
    wideSend = widen(send, total, dtype);
    wideRecv.resize(mine);
    in = wideSend.data();
    out = wideRecv.data();
  }
  DTENSOR_MPI_CALL(MPI_Reduce_scatter, in, out, intCounts.data(), type, op,
                   comm);
  if (kind == ReduceKind::Avg)
    divideSums(out, mine, dtype, groupSize);
  if (isHalf(dtype))
    narrow(wideRecv, recv, dtype);
  return Status::success();
}

Status MpiCommunicator::allToAllV(const void *send,
                                  const std::vector<size_t> &sendBytes,
                                  void *recv,
                                  const std::vector<size_t> &recvBytes) {
  std::vector<int> &sendCounts = counts, &sendDispls = displs;
  if (Status s = byteLayout(sendBytes, sendCounts, sendDispls))
    return s;
  if (Status s = byteLayout(recvBytes, recvCounts, recvDispls))
    return s;
  DTENSOR_MPI_CALL(MPI_Alltoallv, send, sendCounts.data(), sendDispls.data(),
                   MPI_BYTE, recv, recvCounts.data(), recvDispls.data(),
                   MPI_BYTE, comm);
  return Status::success();
}

Status MpiCommunicator::broadcast(void *data, size_t bytes, int root) {
  int count;
  if (Status s = intCount(bytes, "a broadcast", count))
    return s;
  DTENSOR_MPI_CALL(MPI_Bcast, data, count, MPI_BYTE, root, comm);
  return Status::success();
}

Status MpiCommunicator::barrier() {
  DTENSOR_MPI_CALL(MPI_Barrier, comm);
  return Status::success();
}

Status MpiCommunicator::agree(const Status &local) {
  int mine = local.ok() ? INT_MAX : myRank;
  int first = INT_MAX;
  DTENSOR_MPI_CALL(MPI_Allreduce, &mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX)
    return Status::success();
  // The lowest failing rank tells the others its code and message.
  int64_t header[2] = {static_cast<int64_t>(local.code()),
                       static_cast<int64_t>(local.message().size())};
  DTENSOR_MPI_CALL(MPI_Bcast, header, 2, MPI_INT64_T, first, comm);
  std::string message = local.message();
  message.resize(static_cast<size_t>(header[1]));
  if (header[1] > 0)
    DTENSOR_MPI_CALL(MPI_Bcast, message.data(), static_cast<int>(header[1]),
                     MPI_CHAR, first, comm);
  if (!local.ok())
    return local;
  return Status(DTENSOR_ERR_PEER,
                "rank " + std::to_string(first) + " failed: " + message);
}

} // namespace dtensor::rt
