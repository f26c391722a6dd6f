//===- SafetensorsFuzzer.cpp - Fuzzing the safetensors reader -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is a whole safetensors file. SafetensorsFile::open must refuse
// it with a message or accept it; an accepted file's header promised that
// every tensor's bytes are in the file, so reading any box of a tensor must
// then succeed (a failure is reported as a crash). Boxes read: the whole
// tensor and its second half along each dim, for tensors up to 64 KiB.
//
//===----------------------------------------------------------------------===//

#include "MemoryFile.h"

#include "dtensor/Formats/Safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace dtensor;

namespace {
constexpr uint64_t kMaxBytesRead = 64 * 1024;

[[noreturn]] void broken(const std::string &what) {
  std::fprintf(stderr, "safetensors fuzzer: %s\n", what.c_str());
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::MemoryFile file;
  file.assign(data, size);
  rt::SafetensorsFile reader;
  if (!reader.open(file.path()).empty())
    return 0;
  std::vector<uint8_t> buffer;
  for (const rt::SafetensorsEntry &entry : reader.entries()) {
    if (entry.end - entry.begin > kMaxBytesRead)
      continue;
    buffer.resize(entry.end - entry.begin + 1);
    std::vector<int64_t> origin(entry.shape.size(), 0);
    if (std::string error =
            reader.readBox(entry, origin, entry.shape, buffer.data());
        !error.empty())
      broken("reading the whole of an accepted tensor failed: " + error);
    std::vector<int64_t> offset, shape;
    for (int64_t dim : entry.shape) {
      offset.push_back(dim / 2);
      shape.push_back(dim - dim / 2);
    }
    if (std::string error = reader.readBox(entry, offset, shape, buffer.data());
        !error.empty())
      broken("reading a box of an accepted tensor failed: " + error);
    // A box outside the tensor is refused, never read.
    if (!entry.shape.empty()) {
      offset[0] = entry.shape[0];
      shape[0] = 1;
      if (reader.readBox(entry, offset, shape, buffer.data()).empty())
        broken("a box past the end of dim 0 was read");
    }
  }
  return 0;
}
