//===- CustomOpLibrary.h - A user's custom-op kernels -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Opening a custom-op library (dtensor/custom_op.h, docs/custom-ops.md):
// dtensor-compile opens it to check the symbols a program needs, the
// runtime to call them. Both refuse a library that is missing, that does
// not export dtensor_custom_op_abi_version, or whose version differs from
// DTENSOR_CUSTOM_OP_ABI_VERSION, with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_CUSTOMOPLIBRARY_H
#define DTENSOR_FORMATS_CUSTOMOPLIBRARY_H

#include <string>

namespace dtensor::rt {

class CustomOpLibrary {
public:
  CustomOpLibrary() = default;
  CustomOpLibrary(const CustomOpLibrary &) = delete;
  CustomOpLibrary &operator=(const CustomOpLibrary &) = delete;
  CustomOpLibrary(CustomOpLibrary &&other) noexcept;
  CustomOpLibrary &operator=(CustomOpLibrary &&other) noexcept;
  /// Closes the library.
  ~CustomOpLibrary();

  /// Opens the library at `path` (dlopen, RTLD_NOW | RTLD_LOCAL) and checks
  /// its ABI version. "" or the error, which names the path.
  std::string open(const std::string &path);

  /// The address of kernel `symbol`, or null after setting `error` to a
  /// message naming the symbol and the library.
  void *find(const std::string &symbol, std::string &error) const;

  const std::string &path() const { return libraryPath; }

private:
  void *handle = nullptr;
  std::string libraryPath;
};

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_CUSTOMOPLIBRARY_H
