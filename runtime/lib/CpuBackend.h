//===- CpuBackend.h - Steps on the host: MPI and BLAS -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backend of programs of target "cpu" and of every reference program:
// tensors are the program's host buffers, step buffers come from a
// BufferCache, matrix products go to BLAS and collectives pack strided views
// into one message for the group's MPI communicator. Everything completes
// when it is issued.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CPUBACKEND_H
#define DTENSOR_RUNTIME_CPUBACKEND_H

#include "Backend.h"
#include "BufferCache.h"

#include <array>
#include <vector>

namespace dtensor::rt {

class CpuBackend final : public Backend {
public:
  const char *target() const override { return "cpu"; }
  Status addGroup(Communicator *comm, bool spansWorld) override;

  Status allocateTensor(size_t bytes, void *&memory) override;
  void freeTensor(void *memory) override {}
  Status upload(void *memory, const void *host, size_t bytes) override;
  Status download(void *host, const void *memory, size_t bytes) override;
  Status beginStep() override { return Status::success(); }
  Status endStep() override { return Status::success(); }

  void *allocate(size_t bytes) override;
  Status release(void *buffer) override;

  Status matmul(const StridedView &a, const StridedView &b,
                const StridedView &c, DType dtype, DType resultDtype,
                int32_t beta) override;

  Status allReduce(int64_t group, const std::vector<StridedView> &in,
                   const std::vector<StridedView> &out, DType dtype,
                   layout::ReduceKind kind) override;
  Status allGather(int64_t group, const std::vector<StridedView> &in,
                   const MemberPieces &outPieces) override;
  Status reduceScatter(int64_t group, const MemberPieces &inPieces,
                       const std::vector<StridedView> &out, DType dtype,
                       layout::ReduceKind kind) override;
  Status allToAll(int64_t group, const std::vector<StridedView> &send,
                  const std::vector<StridedView> &recv) override;
  Status broadcast(int64_t group, const StridedView &in, const StridedView &out,
                   int root) override;

  Status launch(const LaunchRequest &request) override;

private:
  /// The MPI communicators of the program's groups (owned by the program).
  std::vector<Communicator *> groups;
  BufferCache buffers;
  /// The messages and sizes of the collectives, kept from call to call so
  /// that a step's steady state does not allocate.
  std::vector<char> sendMessage, receiveMessage;
  std::vector<size_t> memberSizes, receiveSizes;
  /// Packed copies of matmul operands BLAS cannot take as they are.
  std::array<std::vector<char>, 3> matmulScratch;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_CPUBACKEND_H
