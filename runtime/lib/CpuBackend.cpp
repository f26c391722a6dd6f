//===- CpuBackend.cpp - Steps on the host: memory and groups --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The collectives are in CpuCollectives.cpp, the matrix product in
// CpuMatmul.cpp.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

#include <cstring>

namespace dtensor::rt {

Status CpuBackend::addGroup(Communicator *comm, bool) {
  groups.push_back(comm);
  return Status::success();
}

Status CpuBackend::allocateTensor(size_t, void *&memory) {
  // Steps run on the program's host buffers.
  memory = nullptr;
  return Status::success();
}

Status CpuBackend::upload(void *memory, const void *host, size_t bytes) {
  if (bytes > 0)
    std::memcpy(memory, host, bytes);
  return Status::success();
}

Status CpuBackend::download(void *host, const void *memory, size_t bytes) {
  if (bytes > 0)
    std::memcpy(host, memory, bytes);
  return Status::success();
}

void *CpuBackend::allocate(size_t bytes) {
  return BufferCache::allocate(&buffers, bytes);
}

Status CpuBackend::release(void *buffer) {
  BufferCache::free(buffer);
  return Status::success();
}

Status CpuBackend::launch(const LaunchRequest &request) {
  return runtimeError(std::string("cannot launch GPU kernel \"") +
                      (request.kernel ? request.kernel : "") +
                      "\": the program runs on the CPU");
}

} // namespace dtensor::rt
