//===- CustomOps.h - The custom ops a program calls -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program's custom ops (manifest "custom_ops"): at load, the custom-op
// libraries are opened and each op's kernel found; dtensor_rt_custom_call
// hands a kernel the queued buffers as dtensor/custom_op.h describes.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUSTOMOPS_H
#define DTENSOR_RUNTIME_CUSTOMOPS_H

#include "Status.h"

#include "dtensor/Formats/CustomOpLibrary.h"
#include "dtensor/Formats/Manifest.h"
#include "dtensor/custom_op.h"

#include <string>
#include <vector>

namespace dtensor::rt {

/// A custom op with its kernel.
struct CustomKernel {
  CustomOpInfo info;
  dtensor_custom_kernel function = nullptr;
};

/// A program's opened libraries and kernels, by op id.
struct CustomOps {
  std::vector<CustomOpLibrary> libraries;
  std::vector<CustomKernel> kernels;
};

/// Opens the libraries of `manifest` and finds every custom op's kernel,
/// for code of `target` (custom ops run on "cpu" only). Errors name the
/// artifact `artifact`, the library and the symbol.
Status loadCustomOps(const Manifest &manifest, const std::string &artifact,
                     const std::string &target, CustomOps &ops);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_CUSTOMOPS_H
