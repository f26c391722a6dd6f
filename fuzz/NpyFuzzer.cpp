//===- NpyFuzzer.cpp - Fuzzing the .npy reader ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is a whole .npy file. readNpy must refuse it with a message or
// accept it; an accepted array holds exactly the bytes its shape and dtype
// need (anything else is reported as a crash).
//
//===----------------------------------------------------------------------===//

#include "MemoryFile.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/Npy.h"

#include <cstdio>
#include <cstdlib>

using namespace dtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::MemoryFile file;
  file.assign(data, size);
  tooling::NpyArray array;
  if (!tooling::readNpy(file.path(), array).empty())
    return 0;
  uint64_t elements = 1;
  for (int64_t dim : array.shape)
    elements *= static_cast<uint64_t>(dim);
  if (array.data.size() != elements * tooling::dtypeSize(array.dtype) ||
      array.data.size() > size) {
    std::fprintf(stderr, "npy fuzzer: accepted %zu data bytes for %llu "
                         "elements from a %zu-byte file\n",
                 array.data.size(), static_cast<unsigned long long>(elements),
                 size);
    std::abort();
  }
  return 0;
}
