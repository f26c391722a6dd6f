//===- CudaBackend.cpp - Device, stream, memory and the plugin's factory --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The collectives are in CudaCollectives.cpp, the matrix product in
// CudaMatmul.cpp, kernel launches in CudaLaunch.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "PackedBlocks.h"
#include "StridedCopy.h"

#include <cstdlib>
#include <cstring>

namespace dtensor::rt::cuda {

/// cuBLASLt's workspace per program (NVIDIA recommends 32 MiB on Hopper).
static constexpr size_t kWorkspaceBytes = 32u << 20;

Status cudaFailure(const std::string &what, cudaError_t code) {
  return runtimeError(what + ": " + cudaGetErrorName(code) + ": " +
                      cudaGetErrorString(code));
}

Status ncclFailure(const std::string &what, ncclResult_t code) {
  return commError(what + ": " + ncclGetErrorString(code));
}

Status cublasFailure(const std::string &what, cublasStatus_t code) {
  return runtimeError(what + ": cuBLASLt status " +
                      std::to_string(static_cast<int>(code)));
}

#define DTENSOR_CUDA_TRY(call)                                                 \
  if (cudaError_t code_ = (call); code_ != cudaSuccess)                        \
    return cudaFailure(#call, code_);

Status CudaBackend::create(const BackendOptions &options,
                           std::unique_ptr<CudaBackend> &backend) {
  int count = 0;
  if (cudaError_t code = cudaGetDeviceCount(&count); code != cudaSuccess)
    return cudaFailure("no usable CUDA device (cudaGetDeviceCount)", code);
  if (count < 1)
    return runtimeError("no usable CUDA device: none is visible");
  std::unique_ptr<CudaBackend> created(new CudaBackend());
  created->device = options.localRank % count;
  DTENSOR_CUDA_TRY(cudaSetDevice(created->device));
  if (options.stream) {
    created->stream = static_cast<cudaStream_t>(options.stream);
  } else {
    DTENSOR_CUDA_TRY(
        cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking));
    created->ownsStream = true;
  }
  created->hostWorldComm = options.worldComm;
  if (cublasStatus_t code = cublasLtCreate(&created->lt);
      code != CUBLAS_STATUS_SUCCESS)
    return cublasFailure("cublasLtCreate", code);
  DTENSOR_CUDA_TRY(cudaMalloc(&created->workspace, kWorkspaceBytes));
  created->workspaceBytes = kWorkspaceBytes;
  const char *tf32 = std::getenv("DTENSOR_CUDA_TF32");
  created->tf32 = tf32 && std::strcmp(tf32, "1") == 0;
  backend = std::move(created);
  return Status::success();
}

CudaBackend::~CudaBackend() {
  // Nothing may still use the memory or the communicators.
  if (stream)
    cudaStreamSynchronize(stream);
  for (GroupComm &group : comms)
    if (group.owned)
      ncclCommDestroy(group.comm);
  for (auto &[bytes, buffers] : kept)
    for (void *buffer : buffers)
      cudaFree(buffer);
  for (auto &[buffer, bytes] : live)
    cudaFree(buffer);
  for (auto &[image, library] : libraries)
    cudaLibraryUnload(library);
  if (workspace)
    cudaFree(workspace);
  if (lt)
    cublasLtDestroy(lt);
  if (ownsStream)
    cudaStreamDestroy(stream);
}

Status CudaBackend::addGroup(Communicator *comm, bool spansWorld) {
  GroupComm group;
  if (!comm) {
    comms.push_back(group);
    return Status::success();
  }
  if (spansWorld && hostWorldComm) {
    group.comm = static_cast<ncclComm_t>(hostWorldComm);
    comms.push_back(group);
    return Status::success();
  }
  DTENSOR_CUDA_TRY(cudaSetDevice(device));
  // The group's first member makes the id and sends it with its outcome,
  // so that a failure there fails every member instead of hanging them.
  struct {
    int32_t ok;
    ncclUniqueId id;
  } message{};
  Status local;
  if (comm->rank() == 0) {
    ncclResult_t code = ncclGetUniqueId(&message.id);
    message.ok = code == ncclSuccess;
    if (code != ncclSuccess)
      local = ncclFailure("ncclGetUniqueId", code);
  }
  if (Status s = comm->broadcast(&message, sizeof message, 0))
    return s;
  if (!local.ok())
    return local;
  if (!message.ok)
    return commError("the group's first member could not create its NCCL id");
  ncclResult_t code =
      ncclCommInitRank(&group.comm, comm->size(), message.id, comm->rank());
  if (code != ncclSuccess)
    return ncclFailure("ncclCommInitRank", code);
  group.owned = true;
  comms.push_back(group);
  return Status::success();
}

Status CudaBackend::commOf(int64_t group, ncclComm_t &comm) {
  if (group < 0 || group >= static_cast<int64_t>(comms.size()) ||
      !comms[group].comm)
    return runtimeError("group " + std::to_string(group) +
                        " has no NCCL communicator on this rank");
  comm = comms[group].comm;
  return Status::success();
}

Status CudaBackend::allocateTensor(size_t bytes, void *&memory) {
  DTENSOR_CUDA_TRY(cudaSetDevice(device));
  DTENSOR_CUDA_TRY(cudaMalloc(&memory, std::max<size_t>(bytes, 1)));
  DTENSOR_CUDA_TRY(cudaMemset(memory, 0, std::max<size_t>(bytes, 1)));
  return Status::success();
}

void CudaBackend::freeTensor(void *memory) { cudaFree(memory); }

Status CudaBackend::upload(void *memory, const void *host, size_t bytes) {
  if (bytes > 0)
    DTENSOR_CUDA_TRY(
        cudaMemcpyAsync(memory, host, bytes, cudaMemcpyHostToDevice, stream));
  return Status::success();
}

Status CudaBackend::download(void *host, const void *memory, size_t bytes) {
  DTENSOR_CUDA_TRY(cudaSetDevice(device));
  if (bytes > 0)
    DTENSOR_CUDA_TRY(
        cudaMemcpyAsync(host, memory, bytes, cudaMemcpyDeviceToHost, stream));
  DTENSOR_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::success();
}

Status CudaBackend::beginStep() {
  // The host thread running the step may have another current device.
  DTENSOR_CUDA_TRY(cudaSetDevice(device));
  return Status::success();
}

Status CudaBackend::endStep() {
  DTENSOR_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::success();
}

void *CudaBackend::allocate(size_t bytes) {
  void *buffer = nullptr;
  auto found = kept.find(bytes);
  if (found != kept.end() && !found->second.empty()) {
    buffer = found->second.back();
    found->second.pop_back();
  } else if (cudaMallocAsync(&buffer, std::max<size_t>(bytes, 1), stream) !=
             cudaSuccess) {
    return nullptr;
  }
  live[buffer] = bytes;
  return buffer;
}

Status CudaBackend::release(void *buffer) {
  auto found = live.find(buffer);
  if (found == live.end())
    return runtimeError("free of a buffer the step did not allocate");
  kept[found->second].push_back(buffer);
  live.erase(found);
  return Status::success();
}

Status CudaBackend::scratch(size_t bytes, char *&buffer) {
  buffer = static_cast<char *>(allocate(bytes));
  if (!buffer)
    return runtimeError("out of device memory allocating " +
                        std::to_string(bytes) + " bytes");
  return Status::success();
}

namespace {

/// Copies one view to or from contiguous `packed`.
Status copyView(const StridedView &view, char *packed, bool toPacked,
                cudaStream_t stream) {
  size_t bytes = bytesOf(view);
  if (bytes == 0)
    return Status::success();
  if (view.isContiguous()) {
    DTENSOR_CUDA_TRY(cudaMemcpyAsync(toPacked ? packed : view.data,
                                     toPacked ? view.data : packed, bytes,
                                     cudaMemcpyDeviceToDevice, stream));
    return Status::success();
  }
  if (view.rank() > kMaxCopyRank)
    return runtimeError("a strided view of rank " +
                        std::to_string(view.rank()) + " (at most " +
                        std::to_string(kMaxCopyRank) + " on a GPU)");
  CopyShape shape;
  shape.rank = static_cast<int>(view.rank());
  for (int d = 0; d < shape.rank; ++d) {
    shape.sizes[d] = view.sizes[d];
    shape.strides[d] = view.strides[d];
  }
  DTENSOR_CUDA_TRY(stridedCopy(view.data, packed, shape, view.numElements(),
                               static_cast<int>(view.elemSize), toPacked,
                               stream));
  return Status::success();
}

} // namespace

Status CudaBackend::pack(const std::vector<StridedView> &views, char *packed) {
  for (const StridedView &view : views) {
    if (Status s = copyView(view, packed, true, stream))
      return s;
    packed += bytesOf(view);
  }
  return Status::success();
}

Status CudaBackend::unpack(const char *packed,
                           const std::vector<StridedView> &views) {
  for (const StridedView &view : views) {
    if (Status s = copyView(view, const_cast<char *>(packed), false, stream))
      return s;
    packed += bytesOf(view);
  }
  return Status::success();
}

} // namespace dtensor::rt::cuda

using namespace dtensor::rt;

extern "C" __attribute__((visibility("default"))) Backend *
dtensor_cuda_backend_create(int32_t interfaceVersion,
                            const BackendOptions *options, Status *error) {
  if (interfaceVersion != kBackendInterfaceVersion) {
    *error = runtimeError(
        "the CUDA backend implements backend interface " +
        std::to_string(kBackendInterfaceVersion) + ", the runtime uses " +
        std::to_string(interfaceVersion) + " (mismatched builds)");
    return nullptr;
  }
  std::unique_ptr<cuda::CudaBackend> backend;
  try {
    *error = cuda::CudaBackend::create(*options, backend);
  } catch (const std::exception &e) {
    *error = runtimeError(e.what());
  }
  return error->ok() ? backend.release() : nullptr;
}
