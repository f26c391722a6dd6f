//===- CudaBackend.h - Steps on a GPU: CUDA, cuBLASLt, NCCL -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backend of programs of target "cuda", in libdtensor_runtime_cuda.so
// (see runtime/lib/CudaPlugin.h for how the core opens it).
//
// - Device: rank r uses device localRank % (visible devices), localRank
//   being its index among the context's ranks on its node.
// - Stream: all of a program's work (uploads, kernels, matrix products,
//   collectives, step buffers) is queued on one stream, the host's or one
//   created here, so stream order is the only synchronisation inside a
//   step; endStep synchronises it once.
// - Memory: tensors get device memory at load; step buffers come from
//   cudaMallocAsync on the stream and are kept, by size, when freed, so
//   later steps reuse them (reuse is safe: the next user is later on the
//   same stream).
// - Collectives: NCCL, one communicator per manifest group (bootstrapped
//   over the group's MPI communicator, or the host's for a group spanning
//   the world), on the program's stream.
// - Matrix products: cuBLASLt with a workspace per program; f32 computes in
//   f32 (TF32 only with DTENSOR_CUDA_TF32=1), f16 / bf16 accumulate in f32.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUDA_CUDABACKEND_H
#define DTENSOR_RUNTIME_CUDA_CUDABACKEND_H

#include "Backend.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <string>
#include <unordered_map>

namespace dtensor::rt::cuda {

/// "<what>: <CUDA error name>: <description>" for a failed call.
Status cudaFailure(const std::string &what, cudaError_t code);
Status ncclFailure(const std::string &what, ncclResult_t code);
Status cublasFailure(const std::string &what, cublasStatus_t code);

class CudaBackend final : public Backend {
public:
  /// Picks the device and creates the stream, cuBLASLt handle and
  /// workspace.
  static Status create(const BackendOptions &options,
                       std::unique_ptr<CudaBackend> &backend);
  ~CudaBackend() override;

  const char *target() const override { return "cuda"; }
  Status addGroup(Communicator *comm, bool spansWorld) override;

  Status allocateTensor(size_t bytes, void *&memory) override;
  void freeTensor(void *memory) override;
  Status upload(void *memory, const void *host, size_t bytes) override;
  Status download(void *host, const void *memory, size_t bytes) override;
  Status beginStep() override;
  Status endStep() override;

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
  CudaBackend() = default;

  /// Packs views one after the other into `packed`, or unpacks it into
  /// them, on the stream.
  Status pack(const std::vector<StridedView> &views, char *packed);
  Status unpack(const char *packed, const std::vector<StridedView> &views);
  /// A step buffer of `bytes`, or an error.
  Status scratch(size_t bytes, char *&buffer);
  /// The communicator of group `group`.
  Status commOf(int64_t group, ncclComm_t &comm);

  int device = 0;
  cudaStream_t stream = nullptr;
  bool ownsStream = false;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  bool tf32 = false;
  void *hostWorldComm = nullptr;

  struct GroupComm {
    ncclComm_t comm = nullptr;
    bool owned = false;
  };
  std::vector<GroupComm> comms;

  /// Step buffers handed out (with their sizes) and kept for reuse.
  std::unordered_map<void *, size_t> live;
  std::unordered_map<size_t, std::vector<void *>> kept;

  /// Loaded device code, by image, and its kernels, by image and name.
  std::unordered_map<const void *, cudaLibrary_t> libraries;
  std::map<std::pair<const void *, std::string>, cudaKernel_t> kernels;
};

} // namespace dtensor::rt::cuda

#endif // DTENSOR_RUNTIME_CUDA_CUDABACKEND_H
