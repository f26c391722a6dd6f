//===- RuntimeTest.cpp - The runtime on one rank --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's checks and messages, artifact loading (hash, world size,
// reference), a run end to end, and dtensor_rt_matmul on every kind of
// strided operand, all on a world of one rank.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "dtensor/Formats/Init.h"
#include "dtensor/Formats/Random.h"
#include "dtensor/Formats/Safetensors.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

using namespace dtensor::rt;
using namespace dtensor::rt::test;

namespace {

dtensor_context *context = nullptr;
std::string workDir;

/// One context for the whole binary: MPI can be initialised only once per
/// process, and the runtime finalises it with its last context.
class ContextEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    ASSERT_EQ(dtensor_context_create(nullptr, &context), DTENSOR_OK)
        << dtensor_last_error();
    char pattern[] = "/tmp/dtensor-runtime-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    workDir = pattern;
  }
  void TearDown() override {
    EXPECT_EQ(dtensor_context_destroy(context), DTENSOR_OK);
    std::filesystem::remove_all(workDir);
  }
};

const auto *environment =
    ::testing::AddGlobalTestEnvironment(new ContextEnvironment);

Manifest oneRankManifest(const std::string &entry) {
  Manifest manifest;
  manifest.worldSize = 1;
  manifest.meshes.push_back({"mesh", {1}, {}, {0}});
  manifest.groups.push_back({0, {0}});
  manifest.entry = entry;
  manifest.tensors = {tensor("x", TensorRole::Input, {3, 4}, {"R"}),
                      tensor("w", TensorRole::Weight, {3, 4}, {"R"}),
                      tensor("y", TensorRole::Output, {3, 4}, {"R"})};
  return manifest;
}

dtensor_program *load(const std::string &dir, int32_t reference = 0) {
  dtensor_load_options options{sizeof(dtensor_load_options), reference};
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), &options, &program),
            DTENSOR_OK)
      << dtensor_last_error();
  return program;
}

std::vector<float> iota(size_t n, float start) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = start + static_cast<float>(i);
  return values;
}

} // namespace

TEST(RuntimeApi, VersionsAndDtypeSizes) {
  EXPECT_STREQ(dtensor_version(), "0.1.0");
  EXPECT_EQ(dtensor_abi_version(), DTENSOR_RUNTIME_ABI_VERSION);
  EXPECT_EQ(dtensor_dtype_size(DTENSOR_BF16), 2u);
  EXPECT_EQ(dtensor_dtype_size(DTENSOR_I64), 8u);
  EXPECT_EQ(dtensor_dtype_size(DTENSOR_BOOL), 1u);
  EXPECT_EQ(dtensor_dtype_size(42), 0u);
}

TEST(RuntimeApi, CpuKernelsAreNamed) {
  // OpenBLAS is a dependency of the build (libopenblas0-pthread), loaded
  // as the runtime's private copy, except in a sanitizer build (its
  // interceptors cannot serve a second link-map namespace).
  std::string kernels = dtensor_cpu_kernels();
  EXPECT_EQ(kernels.rfind("OpenBLAS core ", 0), 0u) << kernels;
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_NE(kernels.find("shared copy (a sanitizer build)"), std::string::npos)
      << kernels;
#else
  EXPECT_NE(kernels.find("; private copy)"), std::string::npos) << kernels;
#endif
  // The same string on every call.
  EXPECT_EQ(dtensor_cpu_kernels(), dtensor_cpu_kernels());
}

TEST(RuntimeApi, NullArgumentsAreErrors) {
  EXPECT_EQ(dtensor_context_create(nullptr, nullptr),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dtensor_last_error()).find("context is NULL"),
            std::string::npos);
  int32_t rank = -1, size = -1;
  EXPECT_EQ(dtensor_context_rank(nullptr, &rank), DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_context_rank(context, &rank), DTENSOR_OK);
  EXPECT_EQ(dtensor_context_world_size(context, &size), DTENSOR_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, nullptr, nullptr, &program),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_run(nullptr), DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_destroy(nullptr), DTENSOR_OK);
  EXPECT_EQ(dtensor_context_destroy(nullptr), DTENSOR_OK);
}

TEST(RuntimeApi, MissingArtifactIsAnIoError) {
  dtensor_program *program = nullptr;
  std::string dir = workDir + "/does-not-exist";
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_IO);
  EXPECT_NE(std::string(dtensor_last_error()).find(dir), std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(program, nullptr);
}

TEST(RuntimeApi, TamperedLibraryFailsTheHash) {
  std::string dir = writeArtifact(workDir, "tampered", oneRankManifest("add"));
  std::ofstream(dir + "/program.so", std::ios::app) << "x";
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_ARTIFACT);
  EXPECT_NE(std::string(dtensor_last_error()).find("hash"), std::string::npos)
      << dtensor_last_error();
}

TEST(RuntimeApi, OtherWorldSizeIsRejected) {
  Manifest manifest = oneRankManifest("add");
  manifest.worldSize = 2;
  manifest.meshes[0].shape = {2};
  manifest.meshes[0].deviceIds = {0, 1};
  std::string dir = writeArtifact(workDir, "two-ranks", manifest);
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_ARTIFACT);
  EXPECT_NE(std::string(dtensor_last_error()).find("built for 2 ranks"),
            std::string::npos)
      << dtensor_last_error();
  // The reference program of the same artifact runs on one rank.
  dtensor_program *reference = load(dir, /*reference=*/1);
  ASSERT_NE(reference, nullptr);
  dtensor_tensor_info info;
  ASSERT_EQ(dtensor_program_tensor_info(reference, 0, &info), DTENSOR_OK);
  EXPECT_EQ(info.local_shape[0], 3);
  EXPECT_STREQ(info.placements, "[R]");
  EXPECT_EQ(dtensor_program_destroy(reference), DTENSOR_OK);
}

TEST(RuntimeApi, MissingEntryIsAnArtifactError) {
  std::string dir = writeArtifact(workDir, "no-entry", oneRankManifest("nope"));
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_ARTIFACT);
  EXPECT_NE(std::string(dtensor_last_error()).find("dtensor_entry_nope"),
            std::string::npos);
}

TEST(RuntimeApi, SetChecksEveryArgument) {
  dtensor_program *program =
      load(writeArtifact(workDir, "checks", oneRankManifest("add")));
  ASSERT_NE(program, nullptr);
  std::vector<float> data(12, 1.0f);
  int64_t shape[] = {3, 4}, wrong[] = {4, 3};
  auto set = [&](const char *name, dtensor_dtype dtype, const int64_t *dims,
                 size_t bytes, const void *ptr) {
    return dtensor_program_set(program, name, DTENSOR_GLOBAL, dtype, 2, dims,
                               ptr, bytes);
  };
  auto lastError = [] { return std::string(dtensor_last_error()); };
  EXPECT_EQ(set("x", DTENSOR_F32, shape, 48, data.data()), DTENSOR_OK);
  EXPECT_EQ(set("nope", DTENSOR_F32, shape, 48, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("no tensor named \"nope\""), std::string::npos);
  EXPECT_EQ(set(nullptr, DTENSOR_F32, shape, 48, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(set("x", DTENSOR_F64, shape, 48, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("dtype f64 given, the tensor is f32"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(set("x", DTENSOR_F32, wrong, 48, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("shape [4, 3] given, expected [3, 4]"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(set("x", DTENSOR_F32, shape, 40, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("40 bytes given, expected 48"), std::string::npos);
  EXPECT_EQ(set("x", DTENSOR_F32, shape, 48, nullptr),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(set("y", DTENSOR_F32, shape, 48, data.data()),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("is an output"), std::string::npos);
  EXPECT_EQ(
      dtensor_program_get(program, "x", DTENSOR_GLOBAL, 0, data.data(), 47),
      DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(
      dtensor_program_get(program, "x", DTENSOR_GLOBAL, 1, data.data(), 48),
      DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("root 1"), std::string::npos);
  EXPECT_EQ(
      dtensor_program_fill(program, "x", static_cast<dtensor_factory>(9), 0, 0),
      DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_load_weights(program, "/nonexistent.safetensors"),
            DTENSOR_ERR_IO);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeProgram, AddRunsEndToEnd) {
  dtensor_program *program =
      load(writeArtifact(workDir, "add", oneRankManifest("add")));
  ASSERT_NE(program, nullptr);
  int32_t count = 0, index = -1;
  ASSERT_EQ(dtensor_program_num_tensors(program, &count), DTENSOR_OK);
  EXPECT_EQ(count, 3);
  ASSERT_EQ(dtensor_program_find_tensor(program, "y", &index), DTENSOR_OK);
  EXPECT_EQ(index, 2);
  std::vector<float> x = iota(12, 0), y(12);
  int64_t shape[] = {3, 4};
  ASSERT_EQ(dtensor_program_set(program, "x", DTENSOR_LOCAL, DTENSOR_F32, 2,
                                shape, x.data(), 48),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_fill(program, "w", DTENSOR_FULL, 0.5, 0),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(dtensor_program_get(program, "y", DTENSOR_GLOBAL, -1, y.data(), 48),
            DTENSOR_OK);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(y[i], x[i] + 0.5f);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeApi, CollectiveSitesComeFromTheManifest) {
  Manifest manifest = oneRankManifest("add");
  manifest.collectiveSites = {{"all_reduce", "sum", "fc2", "m.json:7:9", 64},
                              {"all_gather", "", "", "", -1}};
  dtensor_program *program =
      load(writeArtifact(workDir, "sites", std::move(manifest)));
  ASSERT_NE(program, nullptr);
  int32_t count = -1;
  ASSERT_EQ(dtensor_program_num_sites(program, &count), DTENSOR_OK);
  EXPECT_EQ(count, 2);
  dtensor_site_info info;
  ASSERT_EQ(dtensor_program_site_info(program, 0, &info), DTENSOR_OK);
  EXPECT_STREQ(info.kind, "all_reduce");
  EXPECT_STREQ(info.reduction, "sum");
  EXPECT_STREQ(info.module, "fc2");
  EXPECT_STREQ(info.position, "m.json:7:9");
  EXPECT_EQ(info.bytes_sent, 64);
  ASSERT_EQ(dtensor_program_site_info(program, 1, &info), DTENSOR_OK);
  EXPECT_STREQ(info.kind, "all_gather");
  EXPECT_STREQ(info.reduction, "");
  EXPECT_STREQ(info.module, "");
  EXPECT_EQ(info.bytes_sent, -1);
  EXPECT_EQ(dtensor_program_site_info(program, 2, &info),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dtensor_last_error()).find("site 2 out of range [0, 2)"),
            std::string::npos);
  EXPECT_EQ(dtensor_program_site_info(program, -1, &info),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_num_sites(program, nullptr),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_site_info(nullptr, 0, &info),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

/// Entries "add" (x, w -> y) and "accumulate" (x, s: s += x), whose inputs
/// share the name x, sharing nothing else but the state s.
Manifest twoEntryManifest() {
  Manifest manifest = oneRankManifest("add");
  manifest.tensors[0].entry = "add";
  manifest.tensors[2].entry = "add";
  TensorInfo x = tensor("x", TensorRole::Input, {3, 4}, {"R"});
  x.entry = "accumulate";
  manifest.tensors.push_back(x);
  manifest.tensors.push_back(tensor("s", TensorRole::State, {3, 4}, {"R"}));
  manifest.entries = {{"add", {0, 1}, {2}}, {"accumulate", {3, 4}, {}}};
  return manifest;
}

TEST(RuntimeProgram, EntriesShareStateThatPersists) {
  dtensor_program *program =
      load(writeArtifact(workDir, "entries", twoEntryManifest()));
  ASSERT_NE(program, nullptr);
  int32_t count = 0;
  ASSERT_EQ(dtensor_program_num_entries(program, &count), DTENSOR_OK);
  EXPECT_EQ(count, 2);
  const char *name = nullptr;
  ASSERT_EQ(dtensor_program_entry_name(program, 1, &name), DTENSOR_OK);
  EXPECT_STREQ(name, "accumulate");
  ASSERT_EQ(dtensor_program_selected_entry(program, &name), DTENSOR_OK);
  EXPECT_STREQ(name, "add");
  EXPECT_EQ(dtensor_program_entry_name(program, 2, &name),
            DTENSOR_ERR_INVALID_ARGUMENT);

  // x names the selected entry's input.
  int32_t index = -1;
  ASSERT_EQ(dtensor_program_find_tensor(program, "x", &index), DTENSOR_OK);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(dtensor_program_find_tensor(program, "y", &index), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_select_entry(program, "accumulate"), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_find_tensor(program, "x", &index), DTENSOR_OK);
  EXPECT_EQ(index, 3);
  EXPECT_EQ(dtensor_program_find_tensor(program, "y", &index),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dtensor_last_error()).find("in entry \"accumulate\""),
            std::string::npos);
  dtensor_tensor_info info;
  ASSERT_EQ(dtensor_program_tensor_info(program, 4, &info), DTENSOR_OK);
  EXPECT_EQ(info.role, DTENSOR_STATE);
  EXPECT_STREQ(info.entry, "");
  ASSERT_EQ(dtensor_program_tensor_info(program, 3, &info), DTENSOR_OK);
  EXPECT_STREQ(info.entry, "accumulate");

  // The state starts at zero and each step adds x to it.
  std::vector<float> x = iota(12, 1), s(12);
  int64_t shape[] = {3, 4};
  ASSERT_EQ(dtensor_program_set(program, "x", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                shape, x.data(), 48),
            DTENSOR_OK);
  // A fill of every tensor leaves the state alone.
  ASSERT_EQ(dtensor_program_fill(program, nullptr, DTENSOR_ONES, 0, 0),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_set(program, "x", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                shape, x.data(), 48),
            DTENSOR_OK);
  for (int step = 0; step < 3; ++step)
    ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(dtensor_program_get(program, "s", DTENSOR_GLOBAL, -1, s.data(), 48),
            DTENSOR_OK);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(s[i], 3 * x[i]);

  // Resets: one slot (row of dim 0), then everything; bad calls change
  // nothing.
  EXPECT_EQ(dtensor_program_reset_state(program, "s", 3),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dtensor_last_error()).find("slot 3 out of range"),
            std::string::npos);
  EXPECT_EQ(dtensor_program_reset_state(program, "x", 0),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_select_entry(program, "decode"),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dtensor_last_error())
                .find("no entry \"decode\" (it has add, accumulate)"),
            std::string::npos);
  ASSERT_EQ(dtensor_program_reset_state(program, "s", 1), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_get(program, "s", DTENSOR_GLOBAL, -1, s.data(), 48),
            DTENSOR_OK);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(s[i], i / 4 == 1 ? 0.0f : 3 * x[i]) << i;
  ASSERT_EQ(dtensor_program_reset_state(program, nullptr, -1), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_get(program, "s", DTENSOR_GLOBAL, -1, s.data(), 48),
            DTENSOR_OK);
  for (float value : s)
    EXPECT_EQ(value, 0.0f);

  // The other entry still runs with its own x.
  ASSERT_EQ(dtensor_program_select_entry(program, "add"), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

/// Entry "write_rows": values [2, 2, 3] written into the state cache
/// [4, 8, 3] at slots (i64) and positions (i32), 2 rows per call; the
/// runtime checks them before each step (the manifest's row_writes).
Manifest rowWriteManifest() {
  Manifest manifest = oneRankManifest("write_rows");
  TensorInfo values = tensor("values", TensorRole::Input, {2, 2, 3}, {"R"});
  TensorInfo slots =
      tensor("slots", TensorRole::Input, {2}, {"R"}, 0, DType::I64);
  TensorInfo positions =
      tensor("positions", TensorRole::Input, {2}, {"R"}, 0, DType::I32);
  for (TensorInfo *input : {&values, &slots, &positions})
    input->entry = "write_rows";
  manifest.tensors = {values, slots, positions,
                      tensor("cache", TensorRole::State, {4, 8, 3}, {"R"})};
  manifest.entries = {{"write_rows", {0, 1, 2, 3}, {}, {}}};
  manifest.entries[0].rowWrites = {{"cache", "slots", "positions", 2, 4, 8}};
  return manifest;
}

TEST(RuntimeProgram, RowWritesOutsideTheCacheAreRefused) {
  dtensor_program *program =
      load(writeArtifact(workDir, "row-writes", rowWriteManifest()));
  ASSERT_NE(program, nullptr);
  std::vector<float> values = iota(12, 1);
  int64_t valuesShape[] = {2, 2, 3}, indexShape[] = {2};
  ASSERT_EQ(dtensor_program_set(program, "values", DTENSOR_GLOBAL,
                                DTENSOR_F32, 3, valuesShape, values.data(),
                                values.size() * sizeof(float)),
            DTENSOR_OK);
  // Runs one step with these indices; the status and the message.
  auto run = [&](std::vector<int64_t> slots, std::vector<int32_t> positions) {
    EXPECT_EQ(dtensor_program_set(program, "slots", DTENSOR_GLOBAL,
                                  DTENSOR_I64, 1, indexShape, slots.data(),
                                  16),
              DTENSOR_OK);
    EXPECT_EQ(dtensor_program_set(program, "positions", DTENSOR_GLOBAL,
                                  DTENSOR_I32, 1, indexShape,
                                  positions.data(), 8),
              DTENSOR_OK);
    dtensor_status status = dtensor_program_run(program);
    return std::pair(status, status == DTENSOR_OK
                                 ? std::string()
                                 : std::string(dtensor_last_error()));
  };
  auto cache = [&] {
    std::vector<float> data(4 * 8 * 3);
    EXPECT_EQ(dtensor_program_get(program, "cache", DTENSOR_GLOBAL, -1,
                                  data.data(), data.size() * sizeof(float)),
              DTENSOR_OK);
    return data;
  };
  // Row 0 into slot 3 at positions 6 and 7 (the last two); row 1 padding,
  // its position unchecked.
  ASSERT_EQ(run({3, -1}, {6, 100}).first, DTENSOR_OK) << dtensor_last_error();
  std::vector<float> expected(4 * 8 * 3, 0.0f);
  for (int t = 0; t < 2; ++t)
    for (int d = 0; d < 3; ++d)
      expected[(3 * 8 + 6 + t) * 3 + d] = values[t * 3 + d];
  ASSERT_EQ(cache(), expected);

  // Each bad call has a good row 0 that the step would write into slot 0:
  // the cache stays as it was.
  struct Case {
    std::vector<int64_t> slots;
    std::vector<int32_t> positions;
    std::string message;
  };
  const Case cases[] = {
      {{0, 4},
       {0, 0},
       ": entry \"write_rows\": slot out of range: row 1 of input \"slots\" "
       "is slot 4, the state \"cache\" has 4 slots (a negative slot marks a "
       "padding row); the step was not run"},
      {{0, 1},
       {0, 7},
       ": entry \"write_rows\": position past the cache: row 1 of input "
       "\"positions\" is position 7, which with 2 rows writes positions "
       "[7, 9) of slot 1; the state \"cache\" has 8 positions; the step was "
       "not run"},
      {{0, 2},
       {0, -1},
       ": entry \"write_rows\": position before the cache: row 1 of input "
       "\"positions\" is position -1, which with 2 rows writes positions "
       "[-1, 1) of slot 2; the state \"cache\" has 8 positions; the step was "
       "not run"},
  };
  for (const Case &c : cases) {
    auto [status, message] = run(c.slots, c.positions);
    EXPECT_EQ(status, DTENSOR_ERR_INVALID_ARGUMENT);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "expected: " << c.message << "\n     got: " << message;
    EXPECT_EQ(cache(), expected) << c.message;
  }

  // A good call afterwards runs: slot 0, positions 0 and 1 (row 0), and
  // slot 1 at positions 5 and 6 (row 1).
  ASSERT_EQ(run({0, 1}, {0, 5}).first, DTENSOR_OK) << dtensor_last_error();
  for (int t = 0; t < 2; ++t)
    for (int d = 0; d < 3; ++d) {
      expected[(0 * 8 + 0 + t) * 3 + d] = values[t * 3 + d];
      expected[(1 * 8 + 5 + t) * 3 + d] = values[6 + t * 3 + d];
    }
  EXPECT_EQ(cache(), expected);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeProgram, WeightsLoadFromSafetensors) {
  dtensor_program *program =
      load(writeArtifact(workDir, "weights", oneRankManifest("add")));
  ASSERT_NE(program, nullptr);
  std::vector<float> w = iota(12, 100);
  std::string path = workDir + "/w.safetensors";
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {3, 4}, w.data()}}), "");
  ASSERT_EQ(dtensor_program_load_weights(program, path.c_str()), DTENSOR_OK)
      << dtensor_last_error();
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK);
  std::vector<float> y(12);
  ASSERT_EQ(dtensor_program_get(program, "y", DTENSOR_LOCAL, 0, y.data(), 48),
            DTENSOR_OK);
  EXPECT_EQ(y, w);
  std::string bad = workDir + "/bad.safetensors";
  ASSERT_EQ(writeSafetensors(bad, {{"w", DType::F32, {4, 3}, w.data()}}), "");
  EXPECT_EQ(dtensor_program_load_weights(program, bad.c_str()),
            DTENSOR_ERR_WEIGHTS);
  EXPECT_NE(std::string(dtensor_last_error()).find("f32[4, 3]"),
            std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

// A weights file truncated or rewritten after a load is read by the next
// load as what it is now: a complete new version is taken; a truncated or
// mismatching one is refused before any weight is written, so the program
// keeps running on the weights it had.
TEST(RuntimeProgram, NextLoadSeesTheFileAsItIsNow) {
  dtensor_program *program =
      load(writeArtifact(workDir, "reload", oneRankManifest("add")));
  ASSERT_NE(program, nullptr);
  std::vector<float> w = iota(12, 100), y(12);
  std::string path = workDir + "/reload.safetensors";
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {3, 4}, w.data()}}), "");
  ASSERT_EQ(dtensor_program_load_weights(program, path.c_str()), DTENSOR_OK)
      << dtensor_last_error();
  auto output = [&] {
    EXPECT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
    EXPECT_EQ(
        dtensor_program_get(program, "y", DTENSOR_LOCAL, 0, y.data(), 48),
        DTENSOR_OK);
    return y;
  };
  EXPECT_EQ(output(), w);

  // Truncated in the middle of the data: the header's offsets run past the
  // end; nothing is read.
  uintmax_t size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 5);
  EXPECT_EQ(dtensor_program_load_weights(program, path.c_str()),
            DTENSOR_ERR_WEIGHTS);
  std::string message = dtensor_last_error();
  EXPECT_NE(message.find(path + ": tensor \"w\""), std::string::npos)
      << message;
  EXPECT_NE(message.find("past the end"), std::string::npos) << message;
  EXPECT_EQ(output(), w);

  // Truncated to nothing, as a copy in progress leaves it.
  std::filesystem::resize_file(path, 0);
  EXPECT_EQ(dtensor_program_load_weights(program, path.c_str()),
            DTENSOR_ERR_WEIGHTS);
  EXPECT_NE(std::string(dtensor_last_error()).find("too short"),
            std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(output(), w);

  // Rewritten with another shape: refused by the checks before the reads.
  std::vector<float> other = iota(12, -50);
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {4, 3}, other.data()}}),
            "");
  EXPECT_EQ(dtensor_program_load_weights(program, path.c_str()),
            DTENSOR_ERR_WEIGHTS);
  EXPECT_EQ(output(), w);

  // Rewritten whole with new values: the next load takes them.
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {3, 4}, other.data()}}),
            "");
  ASSERT_EQ(dtensor_program_load_weights(program, path.c_str()), DTENSOR_OK)
      << dtensor_last_error();
  EXPECT_EQ(output(), other);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeProgram, WeightsTakeTheirInitializers) {
  Manifest manifest = oneRankManifest("add");
  Initializer init{InitKind::Normal, {1.0, 0.5}};
  manifest.tensors[1].init = init;
  dtensor_program *program =
      load(writeArtifact(workDir, "init", std::move(manifest)));
  ASSERT_NE(program, nullptr);
  int32_t hasInit = -1;
  ASSERT_EQ(dtensor_program_has_init(program, 0, &hasInit), DTENSOR_OK);
  EXPECT_EQ(hasInit, 0);
  ASSERT_EQ(dtensor_program_has_init(program, 1, &hasInit), DTENSOR_OK);
  EXPECT_EQ(hasInit, 1);
  EXPECT_EQ(dtensor_program_has_init(program, 3, &hasInit),
            DTENSOR_ERR_INVALID_ARGUMENT);

  int32_t uninitialized = -1;
  ASSERT_EQ(dtensor_program_init_weights(program, 7, &uninitialized),
            DTENSOR_OK)
      << dtensor_last_error();
  EXPECT_EQ(uninitialized, 0);
  std::vector<float> expected(12), w(12);
  ASSERT_EQ(fillInitializer(init, initializerSeed(7, "w"), DType::F32, {3, 4},
                            {0, 0}, {3, 4}, expected.data()),
            "");
  ASSERT_EQ(dtensor_program_get(program, "w", DTENSOR_GLOBAL, 0, w.data(), 48),
            DTENSOR_OK);
  EXPECT_EQ(w, expected);

  // A weights file may leave out a weight that has an initializer.
  std::vector<float> other = iota(12, 0);
  std::string path = workDir + "/other.safetensors";
  ASSERT_EQ(writeSafetensors(path, {{"v", DType::F32, {3, 4}, other.data()}}),
            "");
  ASSERT_EQ(dtensor_program_load_weights(program, path.c_str()), DTENSOR_OK)
      << dtensor_last_error();
  ASSERT_EQ(dtensor_program_get(program, "w", DTENSOR_GLOBAL, 0, w.data(), 48),
            DTENSOR_OK);
  EXPECT_EQ(w, expected);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeProgram, InitWeightsCountsWeightsWithoutOne) {
  dtensor_program *program =
      load(writeArtifact(workDir, "no-init", oneRankManifest("add")));
  ASSERT_NE(program, nullptr);
  int32_t uninitialized = -1;
  ASSERT_EQ(dtensor_program_init_weights(program, 0, &uninitialized),
            DTENSOR_OK);
  EXPECT_EQ(uninitialized, 1);
  EXPECT_EQ(dtensor_program_init_weights(nullptr, 0, nullptr),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeProgram, AllReduceOnOneRankIsTheIdentity) {
  Manifest manifest = oneRankManifest("allreduce");
  manifest.tensors.erase(manifest.tensors.begin() + 1);
  dtensor_program *program =
      load(writeArtifact(workDir, "allreduce", manifest));
  ASSERT_NE(program, nullptr);
  ASSERT_EQ(dtensor_program_fill(program, "x", DTENSOR_RANDN, 0, 7),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  std::vector<float> x(12), y(12);
  ASSERT_EQ(dtensor_program_get(program, "x", DTENSOR_GLOBAL, 0, x.data(), 48),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_get(program, "y", DTENSOR_GLOBAL, 0, y.data(), 48),
            DTENSOR_OK);
  EXPECT_EQ(x, y);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeAbi, CallOutsideARunIsAnError) {
  dtensor_rt_matmul(DTENSOR_RT_F32, 0);
  EXPECT_NE(
      std::string(dtensor_last_error()).find("outside dtensor_program_run"),
      std::string::npos);
}

TEST(RuntimeAbi, StepErrorsFailTheRun) {
  Manifest manifest = oneRankManifest("callback");
  std::string dir = writeArtifact(workDir, "errors", manifest);
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  setStepBody(dir, [](void **) {
    dtensor_rt_all_reduce(5, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 0);
    dtensor_rt_matmul(DTENSOR_RT_I32, 0); // skipped: the step already failed
  });
  EXPECT_EQ(dtensor_program_run(program), DTENSOR_ERR_RUNTIME);
  EXPECT_NE(std::string(dtensor_last_error()).find("group 5"),
            std::string::npos)
      << dtensor_last_error();
  setStepBody(dir, [](void **) { dtensor_rt_matmul(DTENSOR_RT_I32, 0); });
  EXPECT_EQ(dtensor_program_run(program), DTENSOR_ERR_RUNTIME);
  EXPECT_NE(std::string(dtensor_last_error()).find("matmul: dtype i32"),
            std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeAbi, MixedPrecisionProductsAreForTheCudaBackend) {
  Manifest manifest = oneRankManifest("callback");
  std::string dir = writeArtifact(workDir, "mixed", manifest);
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  // Well-formed calls the CPU backend does not compute: half-precision
  // operands, and operands and result of different dtypes.
  static float a[2 * 3], b[3 * 2];
  static double c[2 * 2];
  static int32_t operands, result;
  auto step = [](void **) {
    // The runtime reads the descriptors during the call: they must live
    // until it returns.
    Memref memrefA(a, {2, 3}), memrefB(b, {3, 2}), memrefC(c, {2, 2});
    memrefA.push();
    memrefB.push();
    memrefC.push();
    dtensor_rt_matmul_mixed(operands, result, 0);
  };
  struct Case {
    int32_t operands, result;
    std::string message;
  };
  for (const Case &test :
       {Case{DTENSOR_RT_BF16, DTENSOR_RT_F32,
             "matmul: dtype bf16 is not f32 or f64"},
        Case{DTENSOR_RT_F32, DTENSOR_RT_F64,
             "matmul: f32 operands with a f64 result: the CPU backend "
             "computes products of one dtype"},
        Case{DTENSOR_RT_F32, 42, "unknown result dtype 42"}}) {
    operands = test.operands;
    result = test.result;
    setStepBody(dir, step);
    EXPECT_EQ(dtensor_program_run(program), DTENSOR_ERR_RUNTIME);
    EXPECT_NE(std::string(dtensor_last_error())
                  .find("dtensor_rt_matmul_mixed (" + dir + "): " +
                        test.message),
              std::string::npos)
        << dtensor_last_error();
  }
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeAbi, AttentionBackwardThroughTheAbi) {
  // dtensor_rt_attention with the log-sum-exp, then its gradients by
  // dtensor_rt_attention_backward (grouped-query, causal, f64), against a
  // naive gradient; then the flags and shapes the backward refuses.
  Manifest manifest = oneRankManifest("callback");
  std::string dir = writeArtifact(workDir, "attention-backward", manifest);
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  constexpr int64_t H = 2, L = 3, S = 4, E = 2, Ev = 3;
  static double q[H * L * E], k[S * E], v[S * Ev], out[H * L * Ev],
      dOut[H * L * Ev], lse[H * L], dQ[H * L * E], dK[S * E], dV[S * Ev];
  for (int64_t x = 0; x < H * L * E; ++x)
    q[x] = std::sin(0.7 * x + 0.1);
  for (int64_t x = 0; x < S * E; ++x)
    k[x] = std::cos(1.3 * x);
  for (int64_t x = 0; x < S * Ev; ++x)
    v[x] = std::sin(2.1 * x + 0.5);
  for (int64_t x = 0; x < H * L * Ev; ++x)
    dOut[x] = std::cos(0.4 * x + 0.2);
  static int32_t flags;
  static int64_t dKeyRows;
  const double scale = 0.6;
  auto step = [](void **) {
    Memref query(q, {1, H, L, E}), key(k, {1, 1, S, E}),
        value(v, {1, 1, S, Ev}), result(out, {1, H, L, Ev}),
        gradient(dOut, {1, H, L, Ev}), logSumExp(lse, {1, H, L}),
        dQuery(dQ, {1, H, L, E}), dKey(dK, {1, 1, dKeyRows, E}),
        dValue(dV, {1, 1, S, Ev});
    for (Memref *m : {&query, &key, &value, &result, &logSumExp})
      m->push();
    dtensor_rt_attention(
        DTENSOR_RT_F64,
        DTENSOR_RT_ATTENTION_CAUSAL | DTENSOR_RT_ATTENTION_LOG_SUM_EXP, 0.6);
    for (Memref *m : {&query, &key, &value, &result, &gradient, &logSumExp,
                      &dQuery, &dKey, &dValue})
      m->push();
    dtensor_rt_attention_backward(DTENSOR_RT_F64, flags, 0.6);
  };
  flags = DTENSOR_RT_ATTENTION_CAUSAL;
  dKeyRows = S;
  setStepBody(dir, step);
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  double wantQ[H * L * E] = {}, wantK[S * E] = {}, wantV[S * Ev] = {};
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < L; ++i) {
      const double *qi = q + (h * L + i) * E, *dOi = dOut + (h * L + i) * Ev;
      double p[S] = {}, sum = 0, d = 0;
      for (int64_t j = 0; j <= i; ++j) {
        p[j] = std::exp(scale * (qi[0] * k[j * E] + qi[1] * k[j * E + 1]));
        sum += p[j];
      }
      for (int64_t e = 0; e < Ev; ++e) {
        double o = 0;
        for (int64_t j = 0; j <= i; ++j)
          o += p[j] / sum * v[j * Ev + e];
        d += o * dOi[e];
      }
      for (int64_t j = 0; j <= i; ++j) {
        p[j] /= sum;
        double dp = 0;
        for (int64_t e = 0; e < Ev; ++e) {
          dp += dOi[e] * v[j * Ev + e];
          wantV[j * Ev + e] += p[j] * dOi[e];
        }
        double dS = p[j] * (dp - d) * scale;
        for (int64_t e = 0; e < E; ++e) {
          wantQ[(h * L + i) * E + e] += dS * k[j * E + e];
          wantK[j * E + e] += dS * qi[e];
        }
      }
    }
  for (int64_t x = 0; x < H * L * E; ++x)
    EXPECT_NEAR(dQ[x], wantQ[x], 1e-12) << "d_query " << x;
  for (int64_t x = 0; x < S * E; ++x)
    EXPECT_NEAR(dK[x], wantK[x], 1e-12) << "d_key " << x;
  for (int64_t x = 0; x < S * Ev; ++x)
    EXPECT_NEAR(dV[x], wantV[x], 1e-12) << "d_value " << x;

  struct Case {
    int32_t flags;
    int64_t dKeyRows;
    std::string message;
  };
  for (const Case &test :
       {Case{DTENSOR_RT_ATTENTION_CAUSAL | DTENSOR_RT_ATTENTION_ROWS, S,
             "attention backward: flags 5 outside CAUSAL, MASK and "
             "POSITIONS"},
        Case{DTENSOR_RT_ATTENTION_ACCUMULATE, S, "flags 32 outside"},
        Case{DTENSOR_RT_ATTENTION_LOG_SUM_EXP, S, "flags 16 outside"},
        Case{0, S + 1,
             "attention backward: d_key has shape [1, 1, 5, 2], expected "
             "[1, 1, 4, 2]"}}) {
    flags = test.flags;
    dKeyRows = test.dKeyRows;
    setStepBody(dir, step);
    EXPECT_EQ(dtensor_program_run(program), DTENSOR_ERR_RUNTIME);
    EXPECT_NE(std::string(dtensor_last_error()).find(test.message),
              std::string::npos)
        << dtensor_last_error();
  }
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

namespace {
/// The buffers a step body allocated, in order.
std::vector<void *> stepBuffers;

bool isAligned64(void *buffer) {
  return reinterpret_cast<uintptr_t>(buffer) % 64 == 0;
}
} // namespace

TEST(RuntimeAbi, StepBuffersAreKeptForLaterAllocations) {
  std::string dir =
      writeArtifact(workDir, "buffers", oneRankManifest("callback"));
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  setStepBody(dir, [](void **) {
    void *a = dtensor_rt_alloc(1000), *b = dtensor_rt_alloc(1000);
    void *c = dtensor_rt_alloc(24);
    std::memset(a, 1, 1000);
    std::memset(b, 2, 1000);
    std::memset(c, 3, 24);
    dtensor_rt_free(a);
    dtensor_rt_free(b);
    dtensor_rt_free(c);
    // The same size again in the same step: a kept buffer.
    void *d = dtensor_rt_alloc(1000);
    std::memset(d, 4, 1000);
    dtensor_rt_free(d);
    stepBuffers.insert(stepBuffers.end(), {a, b, c, d});
  });
  stepBuffers.clear();
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(stepBuffers.size(), 8u);
  for (void *buffer : stepBuffers)
    EXPECT_TRUE(isAligned64(buffer)) << buffer;
  void *a = stepBuffers[0], *b = stepBuffers[1], *c = stepBuffers[2];
  EXPECT_NE(a, b);
  EXPECT_TRUE(stepBuffers[3] == a || stepBuffers[3] == b);
  // The second step gets the first step's buffers back, size for size.
  EXPECT_TRUE((stepBuffers[4] == a && stepBuffers[5] == b) ||
              (stepBuffers[4] == b && stepBuffers[5] == a));
  EXPECT_EQ(stepBuffers[6], c);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeAbi, AllocationsOutsideARunAreNotKept) {
  void *a = dtensor_rt_alloc(100);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(isAligned64(a));
  std::memset(a, 7, 100);
  dtensor_rt_free(a);
  dtensor_rt_free(nullptr);
  void *empty = dtensor_rt_alloc(0);
  EXPECT_NE(empty, nullptr);
  dtensor_rt_free(empty);
}

//===----------------------------------------------------------------------===//
// dtensor_rt_matmul against a naive product
//===----------------------------------------------------------------------===//

namespace {

/// How an operand of a test product is stored.
enum class Storage { RowMajor, ColMajor, Strided };

/// A matrix (or batch of matrices) stored in `data` as `storage` says.
template <typename T> struct Operand {
  int64_t batch, rows, cols;
  Storage storage;
  std::vector<T> data;
  std::vector<int64_t> sizes, strides;

  Operand(int64_t batch, int64_t rows, int64_t cols, Storage storage,
          bool batched)
      : batch(batch), rows(rows), cols(cols), storage(storage) {
    // Strided: every other column of a matrix twice as wide, padded rows.
    int64_t rowStride = storage == Storage::RowMajor   ? cols
                        : storage == Storage::ColMajor ? 1
                                                       : 2 * cols + 3;
    int64_t colStride = storage == Storage::RowMajor   ? 1
                        : storage == Storage::ColMajor ? rows
                                                       : 2;
    int64_t matrix =
        storage == Storage::Strided ? rows * (2 * cols + 3) : rows * cols;
    data.assign(batch * matrix + 1, T(-7));
    sizes = {rows, cols};
    strides = {rowStride, colStride};
    if (batched) {
      sizes.insert(sizes.begin(), batch);
      strides.insert(strides.begin(), matrix);
    }
  }
  T &at(int64_t b, int64_t i, int64_t j) {
    int64_t matrix = sizes.size() == 3 ? strides[0] : 0;
    return data[b * matrix + i * strides[strides.size() - 2] +
                j * strides.back()];
  }
  Memref memref() { return Memref(data.data(), sizes, strides); }
};

/// One artifact for every product (a loaded library is never rewritten).
const std::string &matmulArtifact() {
  static std::string dir =
      writeArtifact(workDir, "matmul", oneRankManifest("callback"));
  return dir;
}

dtensor_program *matmulProgram() {
  static dtensor_program *program = load(matmulArtifact());
  return program;
}

template <typename T>
void checkMatmul(int64_t batch, int64_t m, int64_t n, int64_t k, Storage sa,
                 Storage sb, Storage sc, int32_t beta, bool batched,
                 int32_t dtype) {
  std::mt19937 random(42);
  std::uniform_int_distribution<int> small(-3, 3);
  Operand<T> a(batch, m, k, sa, batched), b(batch, k, n, sb, batched),
      c(batch, m, n, sc, batched);
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        a.at(t, i, p) = T(small(random));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        b.at(t, p, j) = T(small(random));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c.at(t, i, j) = beta ? T(small(random)) : T(NAN);
  }
  Operand<T> expected = c;
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T sum = beta ? c.at(t, i, j) : T(0);
        for (int64_t p = 0; p < k; ++p)
          sum += a.at(t, i, p) * b.at(t, p, j);
        expected.at(t, i, j) = sum;
      }
  Memref am = a.memref(), bm = b.memref(), cm = c.memref();
  const std::string &dir = matmulArtifact();
  dtensor_program *program = matmulProgram();
  ASSERT_NE(program, nullptr);
  setStepBody(dir, [&](void **) {
    am.push();
    bm.push();
    cm.push();
    dtensor_rt_matmul(dtype, beta);
  });
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  EXPECT_EQ(c.data, expected.data);
}

const Storage storages[] = {Storage::RowMajor, Storage::ColMajor,
                            Storage::Strided};

/// Calls `check(sa, sb, sc, beta)` for every storage of A, B and C and both
/// betas, each traced.
template <typename Check> void forEveryStorageAndBeta(Check check) {
  for (Storage sa : storages)
    for (Storage sb : storages)
      for (Storage sc : storages)
        for (int32_t beta : {0, 1}) {
          SCOPED_TRACE(::testing::Message()
                       << int(sa) << int(sb) << int(sc) << " beta " << beta);
          check(sa, sb, sc, beta);
        }
}

} // namespace

TEST(RuntimeMatmul, EveryStorageF32AndF64) {
  forEveryStorageAndBeta([](Storage sa, Storage sb, Storage sc, int32_t beta) {
    checkMatmul<float>(1, 5, 7, 6, sa, sb, sc, beta, false, DTENSOR_RT_F32);
    checkMatmul<double>(1, 4, 3, 9, sa, sb, sc, beta, false, DTENSOR_RT_F64);
  });
}

TEST(RuntimeMatmul, LargeProductMatchesNaive) {
  checkMatmul<float>(1, 70, 90, 130, Storage::RowMajor, Storage::ColMajor,
                     Storage::RowMajor, 1, false, DTENSOR_RT_F32);
  checkMatmul<double>(1, 65, 33, 300, Storage::ColMajor, Storage::RowMajor,
                      Storage::ColMajor, 0, false, DTENSOR_RT_F64);
}

TEST(RuntimeMatmul, BatchedAndVectorShapes) {
  for (Storage s : storages) {
    checkMatmul<float>(3, 4, 5, 6, s, Storage::RowMajor, s, 1, true,
                       DTENSOR_RT_F32);
    checkMatmul<double>(2, 1, 5, 6, Storage::RowMajor, s, s, 0, true,
                        DTENSOR_RT_F64);
    checkMatmul<float>(1, 6, 1, 4, s, s, s, 0, false, DTENSOR_RT_F32);
  }
}

// One row or one column of C: matrix-vector products (BLAS gemv).
TEST(RuntimeMatmul, VectorProductsEveryStorage) {
  forEveryStorageAndBeta([](Storage sa, Storage sb, Storage sc, int32_t beta) {
    checkMatmul<float>(1, 1, 37, 29, sa, sb, sc, beta, false, DTENSOR_RT_F32);
    checkMatmul<float>(1, 23, 1, 31, sa, sb, sc, beta, false, DTENSOR_RT_F32);
    checkMatmul<double>(3, 1, 9, 17, sa, sb, sc, beta, true, DTENSOR_RT_F64);
    checkMatmul<double>(2, 13, 1, 5, sa, sb, sc, beta, true, DTENSOR_RT_F64);
    checkMatmul<float>(1, 1, 1, 40, sa, sb, sc, beta, false, DTENSOR_RT_F32);
  });
}

TEST(RuntimeMatmul, EmptyDims) {
  for (Storage s : storages) {
    checkMatmul<float>(1, 0, 5, 6, s, s, s, 0, false, DTENSOR_RT_F32);
    checkMatmul<float>(1, 4, 0, 6, s, s, s, 1, false, DTENSOR_RT_F32);
    checkMatmul<double>(1, 4, 5, 0, s, s, s, 0, false, DTENSOR_RT_F64);
    checkMatmul<double>(1, 4, 5, 0, s, s, s, 1, false, DTENSOR_RT_F64);
    checkMatmul<float>(0, 4, 5, 3, s, s, s, 0, true, DTENSOR_RT_F32);
  }
}

//===----------------------------------------------------------------------===//
// Programs of target "cuda" on a machine without a usable GPU
//===----------------------------------------------------------------------===//

TEST(RuntimeTargets, UnknownTargetIsAnArtifactError) {
  Manifest manifest = oneRankManifest("add");
  manifest.target = "tpu";
  std::string dir = writeArtifact(workDir, "tpu", manifest);
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_ARTIFACT);
  EXPECT_NE(std::string(dtensor_last_error())
                .find("built for target \"tpu\", this runtime runs \"cpu\" "
                      "and \"cuda\""),
            std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(program, nullptr);
}

TEST(RuntimeTargets, CudaProgramWithoutAGpuFailsClearly) {
  if (std::filesystem::exists("/dev/nvidiactl"))
    GTEST_SKIP() << "this machine has an NVIDIA driver; the GPU lit tests "
                    "(REQUIRES: gpu) run CUDA programs";
  Manifest manifest = oneRankManifest("add");
  manifest.target = "cuda";
  manifest.gpuArch = "sm_90";
  manifest.referenceTarget = "cpu";
  std::string dir = writeArtifact(workDir, "cuda", manifest);
  dtensor_program *program = nullptr;
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_RUNTIME);
  EXPECT_EQ(program, nullptr);
  std::string message = dtensor_last_error();
#ifdef DTENSOR_TEST_CUDA_BACKEND
  // The plugin loads (it needs no driver library); the CUDA runtime finds
  // no driver or no device and says so.
  EXPECT_NE(message.find("no usable CUDA device (cudaGetDeviceCount): cuda"),
            std::string::npos)
      << message;
#else
  EXPECT_NE(message.find("this runtime was built without CUDA"),
            std::string::npos)
      << message;
#endif
  EXPECT_NE(message.find(dir), std::string::npos) << message;
  // A second load fails the same way (the plugin is opened once).
  EXPECT_EQ(dtensor_program_load(context, dir.c_str(), nullptr, &program),
            DTENSOR_ERR_RUNTIME);
  EXPECT_EQ(dtensor_last_error(), message);

  // Its reference program is CPU code ("reference_target": "cpu") and runs.
  dtensor_program *reference = load(dir, /*reference=*/1);
  ASSERT_NE(reference, nullptr);
  int64_t shape[] = {3, 4};
  std::vector<float> x = iota(12, 1), w = iota(12, 100), y(12);
  ASSERT_EQ(dtensor_program_set(reference, "x", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                shape, x.data(), 48),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_set(reference, "w", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                shape, w.data(), 48),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(reference), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(
      dtensor_program_get(reference, "y", DTENSOR_GLOBAL, 0, y.data(), 48),
      DTENSOR_OK);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(y[i], x[i] + w[i]);
  EXPECT_EQ(dtensor_program_destroy(reference), DTENSOR_OK);
}

TEST(RuntimeTargets, KernelLaunchInACpuProgramIsAStepError) {
  std::string dir =
      writeArtifact(workDir, "launch", oneRankManifest("callback"));
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  setStepBody(dir, [](void **) {
    static const char image[] = "not device code";
    dtensor_rt_gpu_launch(image, sizeof image, "kernel", 1, 1, 1, 32, 1, 1, 0,
                          nullptr, 0);
  });
  EXPECT_EQ(dtensor_program_run(program), DTENSOR_ERR_RUNTIME);
  EXPECT_NE(std::string(dtensor_last_error())
                .find("dtensor_rt_gpu_launch (" + dir +
                      "): cannot launch GPU kernel \"kernel\": the program "
                      "runs on the CPU"),
            std::string::npos)
      << dtensor_last_error();
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
}

TEST(RuntimeAbi, StepSeedFollowsTheRandomState) {
  Manifest manifest = oneRankManifest("callback");
  std::string dir = writeArtifact(workDir, "seeds", manifest);
  dtensor_program *program = load(dir);
  ASSERT_NE(program, nullptr);
  std::vector<uint64_t> seen;
  setStepBody(dir, [&seen](void **) {
    // Twice per step: one step, one seed.
    seen.push_back(dtensor_rt_step_seed());
    seen.push_back(dtensor_rt_step_seed());
  });
  uint64_t seed = 1, step = 1;
  ASSERT_EQ(dtensor_program_random_state(program, &seed, &step), DTENSOR_OK);
  EXPECT_EQ(seed, 0u);
  EXPECT_EQ(step, 0u);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  using counter_rng::stepSeed;
  EXPECT_EQ(seen, (std::vector<uint64_t>{stepSeed(0, 0), stepSeed(0, 0),
                                         stepSeed(0, 1), stepSeed(0, 1),
                                         stepSeed(0, 2), stepSeed(0, 2)}));
  ASSERT_EQ(dtensor_program_random_state(program, &seed, &step), DTENSOR_OK);
  EXPECT_EQ(step, 3u);
  // A host replays step 1 of seed 7, then goes on from there.
  ASSERT_EQ(dtensor_program_set_random_state(program, 7, 1), DTENSOR_OK);
  seen.clear();
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK);
  EXPECT_EQ(seen, (std::vector<uint64_t>{stepSeed(7, 1), stepSeed(7, 1),
                                         stepSeed(7, 2), stepSeed(7, 2)}));
  ASSERT_EQ(dtensor_program_random_state(program, &seed, &step), DTENSOR_OK);
  EXPECT_EQ(seed, 7u);
  EXPECT_EQ(step, 3u);
  EXPECT_EQ(dtensor_program_set_random_state(nullptr, 0, 0),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_random_state(program, nullptr, &step),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
  // Outside a run there is no step.
  EXPECT_EQ(dtensor_rt_step_seed(), 0u);
  EXPECT_NE(std::string(dtensor_last_error())
                .find("dtensor_rt_step_seed called outside dtensor_program_run"),
            std::string::npos);
}

namespace {

/// What a dtensor_rt_parallel_for task saw: how often each index ran, and
/// whether every piece began on the step's grid.
struct ParallelForRecord {
  int64_t begin = 0, step = 1;
  std::vector<std::atomic<int>> hits;
  std::atomic<bool> aligned{true};
  std::atomic<int> offThread{0};
  std::thread::id caller = std::this_thread::get_id();
  explicit ParallelForRecord(int64_t size) : hits(size) {}
};

void recordPiece(void *args, int64_t begin, int64_t end) {
  auto &record = *static_cast<ParallelForRecord *>(args);
  if ((begin - record.begin) % record.step != 0)
    record.aligned = false;
  if (std::this_thread::get_id() != record.caller)
    ++record.offThread;
  for (int64_t i = begin; i < end; i += record.step)
    ++record.hits[i];
}

} // namespace

TEST(RuntimeAbi, ParallelForRunsEveryIterationOnce) {
  dtensor_context_options options{sizeof(dtensor_context_options), nullptr, 2};
  dtensor_context *context = nullptr;
  ASSERT_EQ(dtensor_context_create(&options, &context), DTENSOR_OK)
      << dtensor_last_error();
  struct Case {
    int64_t begin, end, step, work;
  };
  // Large (split over the threads), small (on the calling thread), a step
  // that does not divide the range, one iteration, and an empty range.
  for (Case c : {Case{0, 1000, 1, 1000}, Case{3, 1000, 7, 5000},
                 Case{0, 64, 1, 1}, Case{5, 6, 1, 1 << 20},
                 Case{10, 10, 1, 1 << 20}}) {
    ParallelForRecord record(c.end + 1);
    record.begin = c.begin;
    record.step = c.step;
    dtensor_rt_parallel_for(recordPiece, &record, c.begin, c.end, c.step,
                            c.work);
    for (int64_t i = 0; i <= c.end; ++i) {
      bool inRange = i >= c.begin && i < c.end && (i - c.begin) % c.step == 0;
      EXPECT_EQ(record.hits[i].load(), inRange ? 1 : 0)
          << "index " << i << " of [" << c.begin << ", " << c.end << ") step "
          << c.step;
    }
    EXPECT_TRUE(record.aligned);
    // Little work stays on the calling thread.
    if ((c.end - c.begin) * c.work < 32768) {
      EXPECT_EQ(record.offThread.load(), 0) << c.begin << ".." << c.end;
    }
  }
  dtensor_context_destroy(context);
}
