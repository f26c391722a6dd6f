//===- MemoryFile.h - A fuzz input as a file with a path --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The readers of safetensors and .npy open a path. A MemoryFile is a file in
// memory (memfd_create) whose contents are replaced by each input and which
// any reader opens at path(): nothing touches the disk, and a reader sees a
// file whose size is exactly the input's.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FUZZ_MEMORYFILE_H
#define DTENSOR_FUZZ_MEMORYFILE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtensor::fuzz {

class MemoryFile {
public:
  /// Creates the file; aborts when the system cannot (no fuzzing without).
  MemoryFile();
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;
  ~MemoryFile();

  /// Replaces the contents with `size` bytes of `data`.
  void assign(const uint8_t *data, size_t size);

  /// A path that opens this file ("/proc/self/fd/N").
  const std::string &path() const { return filePath; }

private:
  int fd = -1;
  std::string filePath;
};

} // namespace dtensor::fuzz

#endif // DTENSOR_FUZZ_MEMORYFILE_H
