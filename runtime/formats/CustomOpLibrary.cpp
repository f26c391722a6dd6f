//===- CustomOpLibrary.cpp - A user's library of custom-op kernels --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/CustomOpLibrary.h"

#include "dtensor/custom_op.h"

#include <dlfcn.h>
#include <utility>

namespace dtensor::rt {

CustomOpLibrary::CustomOpLibrary(CustomOpLibrary &&other) noexcept
    : handle(std::exchange(other.handle, nullptr)),
      libraryPath(std::move(other.libraryPath)) {}

CustomOpLibrary &CustomOpLibrary::operator=(CustomOpLibrary &&other) noexcept {
  if (this != &other) {
    if (handle)
      dlclose(handle);
    handle = std::exchange(other.handle, nullptr);
    libraryPath = std::move(other.libraryPath);
  }
  return *this;
}

CustomOpLibrary::~CustomOpLibrary() {
  if (handle)
    dlclose(handle);
}

std::string CustomOpLibrary::open(const std::string &path) {
  libraryPath = path;
  void *opened = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!opened) {
    const char *reason = dlerror();
    return "cannot open custom-op library " + path + ": " +
           (reason ? reason : "unknown error");
  }
  auto version = reinterpret_cast<dtensor_custom_op_abi_version_fn>(
      dlsym(opened, "dtensor_custom_op_abi_version"));
  if (!version) {
    dlclose(opened);
    return path +
           " is not a dtensor custom-op library: it does not export "
           "dtensor_custom_op_abi_version (DTENSOR_CUSTOM_OP_LIBRARY() of "
           "dtensor/custom_op.h defines it)";
  }
  uint32_t built = version();
  if (built != DTENSOR_CUSTOM_OP_ABI_VERSION) {
    dlclose(opened);
    return path + " was built for custom-op ABI version " +
           std::to_string(built) + "; this dtensor uses version " +
           std::to_string(DTENSOR_CUSTOM_OP_ABI_VERSION);
  }
  if (handle)
    dlclose(handle);
  handle = opened;
  return "";
}

void *CustomOpLibrary::find(const std::string &symbol,
                            std::string &error) const {
  void *address = handle ? dlsym(handle, symbol.c_str()) : nullptr;
  if (!address)
    error = "custom-op library " + libraryPath + " does not export symbol '" +
            symbol + "'";
  return address;
}

} // namespace dtensor::rt
