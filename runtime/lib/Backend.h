//===- Backend.h - Where a program's steps run ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The core runtime (manifest, tensors, argument checks, the ABI frame) is the
// same for every target; what runs a step's work is a Backend: step buffers,
// matrix products, the collectives, the program's tensor memory and the
// start and end of a step. CpuBackend (this library) runs on the host with
// MPI and BLAS; the CUDA backend lives in libdtensor_runtime_cuda.so, which
// the core opens only for programs of target "cuda" (CudaPlugin.h).
//
// The plugin boundary is C++: this abstract class, Communicator, and value
// types (Status, StridedView) holding std::string and std::vector. Both
// libraries are built from the same tree by the same compiler and standard
// library; the plugin's factory checks kBackendInterfaceVersion, raised with
// any change to this header or to the types it uses. Virtual calls need no
// exported symbols, so the core keeps exporting only dtensor_*.
//
// The core checks every call's arguments (shapes, dims, group membership)
// and splits uneven collectives into per-member pieces (torch.chunk) before
// a backend sees them; a backend only moves and computes.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BACKEND_H
#define DTENSOR_RUNTIME_BACKEND_H

#include "Communicator.h"
#include "Status.h"
#include "StridedView.h"

#include <cstdint>
#include <vector>

namespace dtensor::rt {

/// Raised with every change to Backend, BackendOptions, LaunchRequest or the
/// types they use.
inline constexpr int32_t kBackendInterfaceVersion = 1;

/// Views of several tensors, for each member of a group: pieces[j][i] is
/// member j's piece of tensor i.
using MemberPieces = std::vector<std::vector<StridedView>>;

/// What a device backend needs to know when it is created.
struct BackendOptions {
  /// This rank in the context, and among the context's ranks on its node.
  int worldRank = 0, worldSize = 1, localRank = 0;
  /// The host's stream (a cudaStream_t), or null to create one.
  void *stream = nullptr;
  /// The host's communicator over the whole context (an ncclComm_t, ranks in
  /// context order), or null.
  void *worldComm = nullptr;
};

/// One dtensor_rt_gpu_launch.
struct LaunchRequest {
  const void *image = nullptr;
  int64_t imageBytes = 0;
  const char *kernel = nullptr;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int32_t sharedBytes = 0;
  void **params = nullptr;
  int64_t paramCount = 0;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// The artifact target it runs: "cpu" or "cuda".
  virtual const char *target() const = 0;

  /// COLLECTIVE over `comm` (null on ranks outside the group's mesh, which
  /// take no part): makes the manifest's next group (ids in call order)
  /// usable. `spansWorld` when the members are the context's ranks in
  /// context order.
  virtual Status addGroup(Communicator *comm, bool spansWorld) = 0;

  /// Memory of the program's tensors. Null when the backend computes on the
  /// host buffers themselves (the CPU); otherwise memory of `bytes` bytes
  /// that upload / download copy to and from.
  virtual Status allocateTensor(size_t bytes, void *&memory) = 0;
  virtual void freeTensor(void *memory) = 0;
  virtual Status upload(void *memory, const void *host, size_t bytes) = 0;
  /// Completes the step's work first.
  virtual Status download(void *host, const void *memory, size_t bytes) = 0;

  /// Around one step: work may stay queued until endStep, which completes it
  /// and returns the first error it met.
  virtual Status beginStep() = 0;
  virtual Status endStep() = 0;

  /// dtensor_rt_alloc / dtensor_rt_free inside a step: buffers a program
  /// frees are kept for later requests of the same size. allocate returns
  /// null when out of memory.
  virtual void *allocate(size_t bytes) = 0;
  virtual Status release(void *buffer) = 0;

  /// C = A x B + beta C on checked views: rank 2, or rank 3 with the batch
  /// dim first. A and B hold `dtype`, C `resultDtype` (the same, or f32
  /// for f16/bf16 operands).
  virtual Status matmul(const StridedView &a, const StridedView &b,
                        const StridedView &c, DType dtype, DType resultDtype,
                        int32_t beta) = 0;

  /// The collectives, on group `group` (an addGroup id), with checked
  /// shapes. Inputs and outputs are one view per tensor of the call.
  virtual Status allReduce(int64_t group, const std::vector<StridedView> &in,
                           const std::vector<StridedView> &out, DType dtype,
                           layout::ReduceKind kind) = 0;
  /// `outPieces[j]`: where member j's input of each tensor goes.
  virtual Status allGather(int64_t group, const std::vector<StridedView> &in,
                           const MemberPieces &outPieces) = 0;
  /// `inPieces[j]`: the parts of each input reduced into member j's output.
  virtual Status reduceScatter(int64_t group, const MemberPieces &inPieces,
                               const std::vector<StridedView> &out, DType dtype,
                               layout::ReduceKind kind) = 0;
  /// `send[j]` goes to member j, `recv[j]` comes from member j.
  virtual Status allToAll(int64_t group, const std::vector<StridedView> &send,
                          const std::vector<StridedView> &recv) = 0;
  virtual Status broadcast(int64_t group, const StridedView &in,
                           const StridedView &out, int root) = 0;

  /// dtensor_rt_gpu_launch.
  virtual Status launch(const LaunchRequest &request) = 0;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_BACKEND_H
