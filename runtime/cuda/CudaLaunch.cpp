//===- CudaLaunch.cpp - Kernel launches of the CUDA backend ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program's device code comes as images embedded in its library; each
// image is loaded once per program (cudaLibraryLoadData, keyed by the
// image's address, which is the same on every call) and each kernel looked
// up once (keyed by image and name). Launches go through the runtime API
// with the cudaKernel_t as the function, so nothing here links the driver
// library directly.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

namespace dtensor::rt::cuda {

/// Dynamic shared memory a kernel may use without opting in.
static constexpr int32_t kDefaultSharedLimit = 48 << 10;

Status CudaBackend::launch(const LaunchRequest &request) {
  auto library = libraries.find(request.image);
  if (library == libraries.end()) {
    cudaLibrary_t loaded = nullptr;
    if (cudaError_t code = cudaLibraryLoadData(&loaded, request.image, nullptr,
                                               nullptr, 0, nullptr, nullptr, 0);
        code != cudaSuccess)
      return cudaFailure("loading the device code of kernel \"" +
                             std::string(request.kernel) + "\"",
                         code);
    library = libraries.emplace(request.image, loaded).first;
  }
  std::pair<const void *, std::string> key(request.image, request.kernel);
  auto kernel = kernels.find(key);
  if (kernel == kernels.end()) {
    cudaKernel_t found = nullptr;
    if (cudaError_t code =
            cudaLibraryGetKernel(&found, library->second, request.kernel);
        code != cudaSuccess)
      return cudaFailure("kernel \"" + key.second + "\"", code);
    if (request.sharedBytes > kDefaultSharedLimit)
      if (cudaError_t code = cudaKernelSetAttributeForDevice(
              found, cudaFuncAttributeMaxDynamicSharedMemorySize,
              request.sharedBytes, device);
          code != cudaSuccess)
        return cudaFailure("kernel \"" + key.second +
                               "\": " + std::to_string(request.sharedBytes) +
                               " bytes of shared memory",
                           code);
    kernel = kernels.emplace(key, found).first;
  }
  dim3 grid(static_cast<unsigned>(request.grid[0]),
            static_cast<unsigned>(request.grid[1]),
            static_cast<unsigned>(request.grid[2]));
  dim3 block(static_cast<unsigned>(request.block[0]),
             static_cast<unsigned>(request.block[1]),
             static_cast<unsigned>(request.block[2]));
  if (cudaError_t code = cudaLaunchKernel(
          reinterpret_cast<const void *>(kernel->second), grid, block,
          request.params, static_cast<size_t>(request.sharedBytes), stream);
      code != cudaSuccess)
    return cudaFailure("launching kernel \"" + key.second + "\"", code);
  return Status::success();
}

} // namespace dtensor::rt::cuda
