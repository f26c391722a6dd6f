//===- CudaPlugin.cpp - Opening the CUDA backend --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CudaPlugin.h"

#include "dtensor/runtime.h"

#include <dlfcn.h>
#include <mutex>

namespace dtensor::rt {

namespace {

/// The directory of this library, with a trailing '/'.
Status runtimeDirectory(std::string &dir) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&dtensor_version), &info) ||
      !info.dli_fname)
    return runtimeError("cannot locate the dtensor runtime library");
  dir = info.dli_fname;
  dir.erase(dir.find_last_of('/') + 1);
  return Status::success();
}

/// Opens the plugin once; later calls return the first outcome.
Status openPlugin(CudaBackendFactory &factory) {
  static std::mutex mutex;
  static CudaBackendFactory opened = nullptr;
  static Status failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (opened || failure) {
    factory = opened;
    return failure;
  }
  std::string dir;
  if (Status s = runtimeDirectory(dir))
    return failure = s;
  std::string path = dir + kCudaPluginName;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return failure = runtimeError(
               std::string("this runtime was built without CUDA, or its CUDA "
                           "backend cannot be loaded: ") +
               dlerror());
  opened =
      reinterpret_cast<CudaBackendFactory>(dlsym(handle, kCudaPluginFactory));
  if (!opened)
    return failure =
               runtimeError(path + " does not export " + kCudaPluginFactory);
  factory = opened;
  return Status::success();
}

} // namespace

Status createCudaBackend(const BackendOptions &options,
                         std::unique_ptr<Backend> &backend) {
  CudaBackendFactory factory = nullptr;
  if (Status s = openPlugin(factory))
    return s;
  Status error;
  Backend *created = factory(kBackendInterfaceVersion, &options, &error);
  if (!created)
    return error ? error : runtimeError("the CUDA backend failed to start");
  backend.reset(created);
  return Status::success();
}

} // namespace dtensor::rt
