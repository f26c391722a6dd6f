//===- GpuLaunch.cpp - Kernel launches of GPU programs --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor_rt_gpu_launch hands the launch to the running program's backend:
// the CUDA backend launches it on the program's stream, the CPU backend
// refuses it.
//
//===----------------------------------------------------------------------===//

#include "AbiCall.h"
#include "Backend.h"
#include "Export.h"

#include "dtensor/rt_abi.h"

using namespace dtensor::rt;

extern "C" DTENSOR_EXPORT void
dtensor_rt_gpu_launch(const void *image, int64_t imageBytes, const char *kernel,
                      int64_t gridX, int64_t gridY, int64_t gridZ,
                      int64_t blockX, int64_t blockY, int64_t blockZ,
                      int32_t sharedBytes, void **params, int64_t paramCount) {
  AbiCall::run("gpu_launch", -1, [&](AbiCall &call) {
    if (!image || imageBytes <= 0 || !kernel)
      return runtimeError("gpu_launch: no image or kernel name");
    if (paramCount < 0 || (paramCount > 0 && !params))
      return runtimeError("gpu_launch: " + std::to_string(paramCount) +
                          " parameters without an array");
    LaunchRequest request;
    request.image = image;
    request.imageBytes = imageBytes;
    request.kernel = kernel;
    int64_t grid[3] = {gridX, gridY, gridZ},
            block[3] = {blockX, blockY, blockZ};
    for (int i = 0; i < 3; ++i) {
      if (grid[i] < 0 || block[i] < 1)
        return runtimeError(std::string("gpu_launch: kernel \"") + kernel +
                            "\" with grid " + std::to_string(grid[i]) +
                            " and block " + std::to_string(block[i]) +
                            " in dim " + std::to_string(i));
      request.grid[i] = grid[i];
      request.block[i] = block[i];
    }
    // A grid over an empty tensor has nothing to run.
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
      return Status::success();
    if (sharedBytes < 0)
      return runtimeError("gpu_launch: negative shared memory size");
    request.sharedBytes = sharedBytes;
    request.params = params;
    request.paramCount = paramCount;
    return call.program.backend->launch(request);
  });
}
