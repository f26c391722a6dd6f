//===- MemoryFile.cpp - A fuzz input as a file with a path ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "MemoryFile.h"

#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

namespace dtensor::fuzz {

namespace {
[[noreturn]] void fail(const char *what) {
  std::perror(what);
  std::abort();
}
} // namespace

MemoryFile::MemoryFile() {
  fd = ::memfd_create("dtensor-fuzz-input", MFD_CLOEXEC);
  if (fd < 0)
    fail("memfd_create");
  filePath = "/proc/self/fd/" + std::to_string(fd);
}

MemoryFile::~MemoryFile() { ::close(fd); }

void MemoryFile::assign(const uint8_t *data, size_t size) {
  if (::ftruncate(fd, 0) != 0)
    fail("ftruncate");
  size_t done = 0;
  while (done < size) {
    ssize_t wrote = ::pwrite(fd, data + done, size - done, done);
    if (wrote <= 0)
      fail("pwrite");
    done += static_cast<size_t>(wrote);
  }
}

} // namespace dtensor::fuzz
