//===- Communicator.h - A group of ranks that communicate -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The operations the runtime needs from a communication library, over one
// group of ranks. MpiCommunicator implements them on MPI; another library
// (NCCL for the GPU target) can implement the same interface.
//
// Buffers are contiguous. Element counts are per rank; "V" operations take
// one count (or byte count) per member, in rank order. Nothing throws: every
// operation returns a Status, DTENSOR_ERR_COMM when the library failed.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_COMMUNICATOR_H
#define DTENSOR_RUNTIME_COMMUNICATOR_H

#include "Status.h"

#include "dtensor/Formats/DType.h"
#include "dtensor/Layout/LayoutMath.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dtensor::rt {

class Communicator {
public:
  virtual ~Communicator() = default;

  /// This rank's index in the group.
  virtual int rank() const = 0;
  /// Number of ranks of the group.
  virtual int size() const = 0;

  /// Reduces `count` elements of every rank's `send` into every rank's
  /// `recv`; `send` == `recv` reduces in place. f16/bf16 accumulate in f32;
  /// avg divides the sum by the group size; bool reduces with or (sum, max)
  /// and and (min).
  virtual Status allReduce(const void *send, void *recv, size_t count,
                           DType dtype, layout::ReduceKind kind) = 0;

  /// Every rank receives the concatenation of the members' `send` bytes in
  /// rank order; member j sends recvBytes[j] bytes.
  virtual Status allGatherV(const void *send, size_t sendBytes, void *recv,
                            const std::vector<size_t> &recvBytes) = 0;

  /// As allGatherV, but only `root` receives (others may pass null `recv`).
  virtual Status gatherV(const void *send, size_t sendBytes, void *recv,
                         const std::vector<size_t> &recvBytes, int root) = 0;

  /// `send` holds sum(counts) elements, member j's block (counts[j] of
  /// them) after those of members before it; the blocks are reduced over the
  /// group and member j receives the reduced block j in `recv`.
  virtual Status reduceScatterV(const void *send, void *recv,
                                const std::vector<size_t> &counts, DType dtype,
                                layout::ReduceKind kind) = 0;

  /// Member j receives sendBytes[j] bytes from each rank's `send` (the
  /// blocks concatenated in member order); the bytes from member j arrive in
  /// `recv` in member order, recvBytes[j] of them.
  virtual Status allToAllV(const void *send,
                           const std::vector<size_t> &sendBytes, void *recv,
                           const std::vector<size_t> &recvBytes) = 0;

  /// Copies `bytes` bytes of `data` from member `root` to every member.
  virtual Status broadcast(void *data, size_t bytes, int root) = 0;

  virtual Status barrier() = 0;

  /// Every rank learns whether the step failed anywhere: returns `local`
  /// when it failed here; otherwise, when another rank failed, a
  /// DTENSOR_ERR_PEER status naming the lowest failing rank and its message;
  /// otherwise success. A failure of the agreement itself is a comm error.
  virtual Status agree(const Status &local) = 0;

  /// Splits the group: members passing the same `color` form a new group,
  /// ordered by `key`; a negative color takes no part (result null).
  virtual Status split(int color, int key,
                       std::unique_ptr<Communicator> &result) = 0;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_COMMUNICATOR_H
