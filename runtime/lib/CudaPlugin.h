//===- CudaPlugin.h - Opening the CUDA backend ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend is a separate library, libdtensor_runtime_cuda.so, next
// to libdtensor_runtime.so (same directory, found with dladdr), so that the
// core runtime never needs a CUDA library and CPU programs never load one.
// It is opened at the first load of a program of target "cuda" and stays
// loaded until the process ends (CUDA and NCCL keep state that outlives
// their objects). Its one exported function creates a backend:
//
//   extern "C" Backend *dtensor_cuda_backend_create(
//       int32_t interfaceVersion, const BackendOptions *options,
//       Status *error);
//
// which returns null and sets `error` when it fails (another interface
// version, no usable GPU).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUDAPLUGIN_H
#define DTENSOR_RUNTIME_CUDAPLUGIN_H

#include "Backend.h"

#include <memory>

namespace dtensor::rt {

/// File name of the plugin.
inline constexpr const char *kCudaPluginName = "libdtensor_runtime_cuda.so";
/// The symbol the plugin exports.
inline constexpr const char *kCudaPluginFactory = "dtensor_cuda_backend_create";

using CudaBackendFactory = Backend *(*)(int32_t interfaceVersion,
                                        const BackendOptions *options,
                                        Status *error);

/// Opens the plugin (once per process) and creates a backend for one program.
Status createCudaBackend(const BackendOptions &options,
                         std::unique_ptr<Backend> &backend);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_CUDAPLUGIN_H
