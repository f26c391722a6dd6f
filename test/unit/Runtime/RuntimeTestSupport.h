//===- RuntimeTestSupport.h - Artifacts and buffers for runtime tests -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_TEST_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H
#define DTENSOR_TEST_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H

#include "dtensor/Formats/Manifest.h"
#include "dtensor/rt_abi.h"
#include "dtensor/runtime.h"

#include <dlfcn.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace dtensor::rt::test {

/// Writes an artifact in a new folder under `parent`: the test program as
/// program.so (and reference.so) and the manifest (target "cpu" unless it
/// names one).
inline std::string writeArtifact(const std::string &parent,
                                 const std::string &name, Manifest manifest) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(parent) / name;
  fs::create_directories(dir);
  fs::copy_file(TEST_PROGRAM_PATH, dir / "program.so",
                fs::copy_options::overwrite_existing);
  fs::copy_file(TEST_PROGRAM_PATH, dir / "reference.so",
                fs::copy_options::overwrite_existing);
  if (manifest.target.empty())
    manifest.target = "cpu";
  manifest.compilerVersion = "0.1.0";
  manifest.library = "program.so";
  manifest.referenceLibrary = "reference.so";
  std::string error = writeManifest(manifest, dir.string());
  EXPECT_EQ(error, "");
  return dir.string();
}

inline TensorInfo tensor(const std::string &name, TensorRole role,
                         std::vector<int64_t> shape,
                         std::vector<std::string> placements, int64_t mesh = 0,
                         DType dtype = DType::F32) {
  TensorInfo info;
  info.name = name;
  info.role = role;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.mesh = mesh;
  info.placements = std::move(placements);
  return info;
}

/// The step body run by the "callback" entry of the test program.
inline std::function<void(void **)> &stepBody() {
  static std::function<void(void **)> body;
  return body;
}

/// Makes the "callback" entry of the artifact at `dir` (already loaded)
/// run `body`.
inline void setStepBody(const std::string &dir,
                        std::function<void(void **)> body) {
  stepBody() = std::move(body);
  void *handle = dlopen((dir + "/program.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto set = reinterpret_cast<void (*)(void (*)(void **))>(
      dlsym(handle, "test_program_set_callback"));
  ASSERT_NE(set, nullptr);
  set([](void **descriptors) { stepBody()(descriptors); });
  dlclose(handle);
}

/// A memref descriptor over caller memory with explicit strides.
class Memref {
public:
  Memref(void *data, std::vector<int64_t> sizes, std::vector<int64_t> strides)
      : words(3 + 2 * sizes.size()) {
    words[0] = words[1] = reinterpret_cast<int64_t>(data);
    words[2] = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      words[3 + i] = sizes[i];
      words[3 + sizes.size() + i] = strides[i];
    }
    rank = static_cast<int64_t>(sizes.size());
  }
  /// Row-major contiguous.
  Memref(void *data, const std::vector<int64_t> &sizes)
      : Memref(data, sizes, rowMajor(sizes)) {}
  void push() { dtensor_rt_push_buffer(rank, words.data()); }

  static std::vector<int64_t> rowMajor(const std::vector<int64_t> &sizes) {
    std::vector<int64_t> strides(sizes.size(), 1);
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * sizes[i + 1];
    return strides;
  }

private:
  std::vector<int64_t> words;
  int64_t rank = 0;
};

} // namespace dtensor::rt::test

#endif // DTENSOR_TEST_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H
