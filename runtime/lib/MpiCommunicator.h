//===- MpiCommunicator.h - Communicator on MPI ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Owns a duplicated (or split) MPI communicator with MPI_ERRORS_RETURN, so
// MPI failures come back as statuses instead of aborting the process.
// Message sizes are limited to MPI's int counts per call (2^31-1 bytes per
// member); larger messages are an error, not a truncation.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_MPICOMMUNICATOR_H
#define DTENSOR_RUNTIME_MPICOMMUNICATOR_H

#include "Communicator.h"

#include <mpi.h>

#include <vector>

namespace dtensor::rt {

class MpiCommunicator final : public Communicator {
public:
  /// Duplicates `parent` into a new communicator that returns errors.
  static Status create(MPI_Comm parent, std::unique_ptr<MpiCommunicator> &out);
  ~MpiCommunicator() override;

  MPI_Comm handle() const { return comm; }

  int rank() const override { return myRank; }
  int size() const override { return groupSize; }
  Status allReduce(const void *send, void *recv, size_t count, DType dtype,
                   layout::ReduceKind kind) override;
  Status allGatherV(const void *send, size_t sendBytes, void *recv,
                    const std::vector<size_t> &recvBytes) override;
  Status gatherV(const void *send, size_t sendBytes, void *recv,
                 const std::vector<size_t> &recvBytes, int root) override;
  Status reduceScatterV(const void *send, void *recv,
                        const std::vector<size_t> &counts, DType dtype,
                        layout::ReduceKind kind) override;
  Status allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                   void *recv, const std::vector<size_t> &recvBytes) override;
  Status broadcast(void *data, size_t bytes, int root) override;
  Status barrier() override;
  Status agree(const Status &local) override;
  Status split(int color, int key,
               std::unique_ptr<Communicator> &result) override;

private:
  explicit MpiCommunicator(MPI_Comm comm);

  MPI_Comm comm;
  int myRank = 0;
  int groupSize = 1;
  /// The counts and displacements of the last V-collective, kept so that a
  /// step's collectives do not allocate (a communicator serves one thread).
  std::vector<int> counts, displs, recvCounts, recvDispls;
};

/// "MPI_Allreduce failed: <MPI_Error_string>" for a non-success code.
Status mpiError(const char *call, int code);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_MPICOMMUNICATOR_H
