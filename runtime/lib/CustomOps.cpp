//===- CustomOps.cpp - The custom ops a program calls ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CustomOps.h"

#include "AbiCall.h"
#include "Export.h"

#include "dtensor/rt_abi.h"

namespace dtensor::rt {

Status loadCustomOps(const Manifest &manifest, const std::string &artifact,
                     const std::string &target, CustomOps &ops) {
  if (manifest.customOps.empty())
    return Status::success();
  if (target != "cpu")
    return Status(DTENSOR_ERR_ARTIFACT,
                  artifact +
                      ": custom ops run on target \"cpu\" only, the "
                      "program is built for \"" +
                      target + "\"");
  for (const std::string &path : manifest.customOpLibraries) {
    CustomOpLibrary library;
    if (std::string error = library.open(path); !error.empty())
      return Status(DTENSOR_ERR_ARTIFACT, artifact + ": " + error);
    ops.libraries.push_back(std::move(library));
  }
  for (const CustomOpInfo &info : manifest.customOps) {
    std::string error;
    void *address = ops.libraries[info.library].find(info.symbol, error);
    if (!address)
      return Status(DTENSOR_ERR_ARTIFACT,
                    artifact + ": custom op '" + info.name + "': " + error);
    ops.kernels.push_back(
        {info, reinterpret_cast<dtensor_custom_kernel>(address)});
  }
  return Status::success();
}

namespace {

Status callKernel(AbiCall &call, int64_t op, int64_t numInputs) {
  const std::vector<CustomKernel> &kernels = call.program.customOps.kernels;
  if (op < 0 || op >= static_cast<int64_t>(kernels.size()))
    return runtimeError("custom op " + std::to_string(op) +
                        " is not in the manifest's custom_ops (" +
                        std::to_string(kernels.size()) + " ops)");
  const CustomKernel &kernel = kernels[op];
  const CustomOpInfo &info = kernel.info;
  if (numInputs != static_cast<int64_t>(info.inputs.size()))
    return runtimeError("custom op '" + info.name + "' takes " +
                        std::to_string(info.inputs.size()) +
                        " inputs, the program passes " +
                        std::to_string(numInputs));
  std::vector<StridedView> views;
  if (Status s = call.takeViews("custom_call", numInputs + 1, views))
    return s;
  std::vector<DType> dtypes = info.inputs;
  dtypes.push_back(info.output);
  std::vector<dtensor_custom_tensor> tensors;
  for (size_t i = 0; i < views.size(); ++i) {
    views[i] = call.viewAs(i, dtypeSize(dtypes[i]));
    const StridedView &view = views[i];
    tensors.push_back({view.data, view.sizes.data(), view.strides.data(),
                       static_cast<int32_t>(view.rank()),
                       static_cast<int32_t>(dtypes[i])});
  }
  char message[1024] = "";
  dtensor_custom_call request{DTENSOR_CUSTOM_OP_ABI_VERSION,
                              static_cast<int32_t>(numInputs),
                              tensors.data(),
                              1,
                              tensors.data() + numInputs,
                              message,
                              sizeof(message)};
  int32_t status = kernel.function(&request);
  if (status == 0)
    return Status::success();
  message[sizeof(message) - 1] = '\0';
  return runtimeError("custom op '" + info.name + "' (symbol '" + info.symbol +
                      "') failed with status " + std::to_string(status) +
                      (message[0] ? std::string(": ") + message : ""));
}

} // namespace

} // namespace dtensor::rt

extern "C" DTENSOR_EXPORT void dtensor_rt_custom_call(int64_t op,
                                                      int64_t num_inputs) {
  dtensor::rt::AbiCall::run("custom_call", -1, [&](dtensor::rt::AbiCall &call) {
    return dtensor::rt::callKernel(call, op, num_inputs);
  });
}
