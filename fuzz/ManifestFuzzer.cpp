//===- ManifestFuzzer.cpp - Fuzzing the artifact manifest loader ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input is the text of manifest.json. readManifest reads it from a
// directory: a temporary one of this process (removed at exit), where the
// input is written before each run. The loader decodes the JSON, validates
// the manifest and then checks the content hash, so the decoder and the
// semantic checks see every input; the hash (over the JSON and the
// libraries it names) stops mutated inputs after that. An accepted manifest
// must give an entry table (entryTable) that indexes only its tensors.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Formats/Manifest.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace dtensor;

namespace {
/// The directory of this process's manifest.json, removed at exit.
class ManifestDir {
public:
  ManifestDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "dtensor-fuzz-manifest.XXXXXX")
            .string();
    if (!::mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    dir = pattern;
  }
  ~ManifestDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  const std::string &path() const { return dir; }

  void write(const uint8_t *data, size_t size) {
    std::ofstream out(dir + "/manifest.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
    if (!out) {
      std::fprintf(stderr, "manifest fuzzer: cannot write %s/manifest.json\n",
                   dir.c_str());
      std::abort();
    }
  }

private:
  std::string dir;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ManifestDir dir;
  dir.write(data, size);
  rt::Manifest manifest;
  if (!rt::readManifest(dir.path(), manifest).empty())
    return 0;
  for (const rt::EntryInfo &entry : rt::entryTable(manifest))
    for (const std::vector<int64_t> *indices :
         {&entry.arguments, &entry.results})
      for (int64_t index : *indices)
        if (index < 0 || index >= static_cast<int64_t>(manifest.tensors.size())) {
          std::fprintf(stderr,
                       "manifest fuzzer: entry %s names tensor %lld of %zu\n",
                       entry.name.c_str(), static_cast<long long>(index),
                       manifest.tensors.size());
          std::abort();
        }
  return 0;
}
