//===- AtomicFile.cpp - Writing a file through a temporary ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace dtensor::rt {

std::string writeFileAtomically(
    const std::string &path,
    const std::function<bool(const WriteBytesFn &)> &writeContents) {
  const std::string temporary =
      path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return "cannot create " + temporary + ": " + std::strerror(errno);
  int savedErrno = 0;
  WriteBytesFn writeBytes = [&](const void *data, size_t size) {
    if (size == 0 || std::fwrite(data, 1, size, file) == size)
      return true;
    savedErrno = errno;
    return false;
  };
  bool written = writeContents(writeBytes);
  if (std::fclose(file) != 0 && written) {
    written = false;
    savedErrno = errno;
  }
  if (!written) {
    std::remove(temporary.c_str());
    return "cannot write " + temporary + ": " +
           (savedErrno ? std::strerror(savedErrno) : "write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    std::remove(temporary.c_str());
    return "cannot rename " + temporary + " to " + path + ": " +
           std::strerror(savedErrno);
  }
  return "";
}

} // namespace dtensor::rt
