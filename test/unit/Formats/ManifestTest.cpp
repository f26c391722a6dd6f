//===- ManifestTest.cpp - Artifact manifest reading, writing, checks ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Manifest.h"

#include "Sha256.h"
#include "TestFiles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>

using namespace dtensor::rt;
using namespace dtensor::rt::test;
using json = nlohmann::json;

namespace {

/// The example manifest of the format description: a 2x2 mesh, one group,
/// two arguments and one result.
Manifest exampleManifest() {
  Manifest m;
  m.compilerVersion = "0.1.0";
  m.target = "cpu";
  m.targetCpu = "skylake-avx512";
  m.worldSize = 4;
  m.entry = "main";
  m.library = "program.so";
  m.referenceLibrary = "reference.so";
  m.meshes = {{"mesh", {2, 2}, {"dp", "tp"}, {0, 1, 2, 3}}};
  m.groups = {{0, {1}}};
  m.tensors = {
      {"x", TensorRole::Input, DType::F32, {8, 16}, 0, {"S(0)", "R"}},
      {"w1", TensorRole::Weight, DType::F32, {16, 32}, 0, {"R", "S(1)"}},
      {"y", TensorRole::Output, DType::F32, {8, 32}, 0, {"S(0)", "R"}},
  };
  return m;
}

class ManifestTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeBytes(dir.file("program.so"), std::string("\x7f"
                                                   "ELF program",
                                                   12));
    writeBytes(dir.file("reference.so"), "reference library bytes");
  }

  std::string manifestPath() const { return dir.file("manifest.json"); }

  /// Writes the example, then lets `edit` change its JSON and rehashes it,
  /// so that only the edit can make reading fail.
  std::string readEdited(const std::function<void(json &)> &edit) {
    EXPECT_EQ(writeManifest(exampleManifest(), dir.path()), "");
    json root = json::parse(readBytes(manifestPath()));
    edit(root);
    root["content_hash"] = hashOf(root);
    writeBytes(manifestPath(), root.dump(2));
    Manifest read;
    return readManifest(dir.path(), read);
  }

  /// The content hash as the format defines it, computed independently of
  /// the writer.
  std::string hashOf(json root) {
    root.erase("content_hash");
    std::string bytes = root.dump();
    bytes.push_back('\0');
    bytes += readBytes(dir.file("program.so"));
    if (root.contains("reference_library") &&
        root["reference_library"].is_string())
      bytes += readBytes(dir.file(root["reference_library"]));
    Sha256 sha;
    sha.update(bytes.data(), bytes.size());
    return "sha256:" + toHex(sha.finish());
  }

  TempDir dir;
};

TEST_F(ManifestTest, RoundTrip) {
  Manifest written = exampleManifest();
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_EQ(read.formatVersion, 1);
  EXPECT_EQ(read.compilerVersion, "0.1.0");
  EXPECT_EQ(read.target, "cpu");
  EXPECT_EQ(read.targetCpu, "skylake-avx512");
  EXPECT_EQ(read.worldSize, 4);
  EXPECT_EQ(read.entry, "main");
  EXPECT_EQ(read.library, "program.so");
  EXPECT_EQ(read.referenceLibrary, "reference.so");
  ASSERT_EQ(read.meshes.size(), 1u);
  EXPECT_EQ(read.meshes[0].name, "mesh");
  EXPECT_EQ(read.meshes[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(read.meshes[0].dimNames, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(read.meshes[0].deviceIds, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(read.groups.size(), 1u);
  EXPECT_EQ(read.groups[0].mesh, 0);
  EXPECT_EQ(read.groups[0].meshDims, (std::vector<int64_t>{1}));
  ASSERT_EQ(read.tensors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read.tensors[i].name, written.tensors[i].name);
    EXPECT_EQ(read.tensors[i].role, written.tensors[i].role);
    EXPECT_EQ(read.tensors[i].dtype, written.tensors[i].dtype);
    EXPECT_EQ(read.tensors[i].shape, written.tensors[i].shape);
    EXPECT_EQ(read.tensors[i].mesh, written.tensors[i].mesh);
    EXPECT_EQ(read.tensors[i].placements, written.tensors[i].placements);
  }
  EXPECT_FALSE(std::filesystem::exists(manifestPath() + ".tmp." +
                                       std::to_string(::getpid())));
}

TEST_F(ManifestTest, WrittenJsonFollowsTheFormat) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["format"], "dtensor-artifact");
  EXPECT_EQ(root["format_version"], 1);
  EXPECT_EQ(root["tensors"][1]["role"], "weight");
  EXPECT_EQ(root["tensors"][1]["placements"][1], "S(1)");
  EXPECT_EQ(root["meshes"][0]["device_ids"], json({0, 1, 2, 3}));
  EXPECT_EQ(root["content_hash"], hashOf(root));
}

TEST_F(ManifestTest, OptionalFieldsMayBeAbsent) {
  Manifest m = exampleManifest();
  m.referenceLibrary.clear();
  m.meshes[0].dimNames.clear();
  ASSERT_EQ(writeManifest(m, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_FALSE(root.contains("reference_library"));
  EXPECT_FALSE(root["meshes"][0].contains("dim_names"));
  // Without a reference library its bytes are not hashed: changing the file
  // is not an error.
  writeBytes(dir.file("reference.so"), "changed");
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_TRUE(read.referenceLibrary.empty());
  EXPECT_TRUE(read.meshes[0].dimNames.empty());
  // An explicitly empty dim_names list is accepted too.
  EXPECT_EQ(readEdited([](json &root) {
              root["meshes"][0]["dim_names"] = json::array();
            }),
            "");
}

TEST_F(ManifestTest, UnknownKeysAreIgnored) {
  EXPECT_EQ(readEdited([](json &root) {
              root["scheduler"] = {{"streams", 2}};
              root["tensors"][0]["comment"] = "future field";
              root["meshes"][0]["topology"] = "torus";
            }),
            "");
}

TEST_F(ManifestTest, TamperedManifestIsDetected) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  std::string text = readBytes(manifestPath());
  size_t at = text.find("\"skylake-avx512\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "\"znver4\"");
  writeBytes(manifestPath(), text);
  Manifest read;
  EXPECT_EQ(readManifest(dir.path(), read),
            manifestPath() + ": content hash mismatch (the artifact was "
                             "modified after it was written)");
}

TEST_F(ManifestTest, TamperedShapeIsDetected) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  root["tensors"][0]["shape"][0] = 10; // still valid, different program
  writeBytes(manifestPath(), root.dump());
  Manifest read;
  EXPECT_TRUE(
      contains(readManifest(dir.path(), read), "content hash mismatch"));
}

TEST_F(ManifestTest, TamperedLibrariesAreDetected) {
  for (const char *library : {"program.so", "reference.so"}) {
    SCOPED_TRACE(library);
    SetUp();
    ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
    std::string bytes = readBytes(dir.file(library));
    bytes[3] ^= 1;
    writeBytes(dir.file(library), bytes);
    Manifest read;
    EXPECT_TRUE(
        contains(readManifest(dir.path(), read), "content hash mismatch"));
  }
}

TEST_F(ManifestTest, MissingLibraryIsAnError) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  std::filesystem::remove(dir.file("reference.so"));
  Manifest read;
  std::string error = readManifest(dir.path(), read);
  EXPECT_TRUE(contains(error, manifestPath() + ": cannot open " +
                                  dir.file("reference.so")));
  EXPECT_TRUE(contains(error, "No such file"));

  std::filesystem::remove(dir.file("program.so"));
  EXPECT_TRUE(contains(writeManifest(exampleManifest(), dir.path()),
                       "cannot open " + dir.file("program.so")));
}

TEST_F(ManifestTest, MissingManifestIsAnError) {
  Manifest read;
  EXPECT_TRUE(contains(readManifest(dir.path(), read),
                       "cannot open " + manifestPath()));
}

TEST_F(ManifestTest, MalformedJsonIsAnError) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  std::string text = readBytes(manifestPath());
  Manifest read;
  for (size_t length :
       {size_t(0), size_t(1), text.size() / 2, text.size() - 3}) {
    writeBytes(manifestPath(), text.substr(0, length));
    EXPECT_EQ(readManifest(dir.path(), read),
              manifestPath() + ": not valid JSON (truncated or malformed)")
        << length;
  }
  writeBytes(manifestPath(), "[1, 2]");
  EXPECT_EQ(readManifest(dir.path(), read),
            manifestPath() +
                ": expected a JSON object at the top level, got [1,2]");
}

TEST_F(ManifestTest, DecodingErrorsNameTheJsonPath) {
  struct Case {
    std::function<void(json &)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](json &r) { r["tensors"][2]["shape"][1] = "x"; },
       "tensors[2].shape[1]: expected a non-negative integer, got \"x\""},
      {[](json &r) { r["tensors"][0]["shape"][0] = 1.5; },
       "tensors[0].shape[0]: expected a non-negative integer, got 1.5"},
      {[](json &r) { r["tensors"][1].erase("dtype"); },
       "tensors[1]: missing key \"dtype\""},
      {[](json &r) { r["tensors"][1]["dtype"] = "f8"; },
       "tensors[1].dtype: expected one of f32, f64, f16, bf16, i32, i64, i8, "
       "bool, got \"f8\""},
      {[](json &r) { r["tensors"][0]["role"] = "param"; },
       "tensors[0].role: expected \"input\", \"weight\", \"parameter\", "
       "\"output\" or \"state\", got \"param\""},
      {[](json &r) { r["tensors"][0]["placements"] = "S(0)"; },
       "tensors[0].placements: expected an array, got \"S(0)\""},
      {[](json &r) { r["tensors"][0]["placements"][1] = 0; },
       "tensors[0].placements[1]: expected a string, got 0"},
      {[](json &r) { r["tensors"] = json::object(); },
       "tensors: expected an array, got {}"},
      {[](json &r) { r["tensors"][0] = 3; },
       "tensors[0]: expected an object, got 3"},
      {[](json &r) {
         r["meshes"][0]["shape"] = {2, "2"};
       },
       "meshes[0].shape[1]: expected a positive integer, got \"2\""},
      {[](json &r) { r["meshes"][0].erase("device_ids"); },
       "meshes[0]: missing key \"device_ids\""},
      {[](json &r) {
         r["meshes"][0]["dim_names"] = {"dp", 1};
       },
       "meshes[0].dim_names[1]: expected a string, got 1"},
      {[](json &r) { r["groups"][0]["mesh"] = nullptr; },
       "groups[0].mesh: expected a non-negative mesh index, got null"},
      {[](json &r) { r["groups"][0]["mesh_dims"] = {true}; },
       "groups[0].mesh_dims[0]: expected a non-negative mesh dim, got true"},
      {[](json &r) { r["world_size"] = "4"; },
       "world_size: expected a positive integer, got \"4\""},
      {[](json &r) { r["world_size"] = 18446744073709551615ull; },
       "world_size: expected a positive integer, got 18446744073709551615"},
      {[](json &r) { r.erase("entry"); }, "missing key \"entry\""},
      {[](json &r) { r.erase("groups"); }, "missing key \"groups\""},
      {[](json &r) { r["reference_library"] = 7; },
       "reference_library: expected a string, got 7"},
      {[](json &r) { r["format"] = "onnx"; },
       "format: expected \"dtensor-artifact\", got \"onnx\""},
      {[](json &r) { r.erase("format"); }, "missing key \"format\""},
      {[](json &r) { r["format_version"] = 3; },
       "format_version: this runtime reads format versions 1 to 2, got 3"},
      {[](json &r) { r["format_version"] = 0; },
       "format_version: this runtime reads format versions 1 to 2, got 0"},
      // Trained parameters came with version 2.
      {[](json &r) { r["tensors"][1]["role"] = "parameter"; },
       "tensors[1].role: the role \"parameter\" needs format version 2, "
       "the manifest is version 1"},
      // Semantic errors found when reading carry the same paths.
      {[](json &r) { r["tensors"][2]["placements"][0] = "S(2)"; },
       "tensors[2].placements[0]: shard dim 2 is out of range for a tensor "
       "of rank 2"},
  };
  for (const Case &c : cases) {
    std::string error = readEdited(c.edit);
    EXPECT_EQ(error, manifestPath() + ": " + c.message);
  }
}

TEST_F(ManifestTest, ContentHashMustBeWellFormed) {
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  Manifest read;
  for (json hash : {json("md5:0"), json("sha256:" + std::string(63, 'a')),
                    json("sha256:" + std::string(64, 'A')), json(5)}) {
    root["content_hash"] = hash;
    writeBytes(manifestPath(), root.dump());
    EXPECT_TRUE(contains(readManifest(dir.path(), read),
                         manifestPath() + ": content_hash: expected "));
  }
  root.erase("content_hash");
  writeBytes(manifestPath(), root.dump());
  EXPECT_EQ(readManifest(dir.path(), read),
            manifestPath() + ": missing key \"content_hash\"");
}

TEST_F(ManifestTest, ValidationErrors) {
  struct Case {
    std::function<void(Manifest &)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](Manifest &m) { m.formatVersion = 3; },
       "format_version: this runtime reads format versions 1 to 2, got 3"},
      {[](Manifest &m) { m.worldSize = 0; },
       "world_size: expected a positive integer, got 0"},
      {[](Manifest &m) { m.target.clear(); },
       "target: expected a non-empty target name"},
      {[](Manifest &m) { m.entry.clear(); },
       "entry: expected a non-empty function name"},
      {[](Manifest &m) { m.library = "../program.so"; },
       "library: expected a plain file name in the artifact directory (no "
       "'/' or \"..\"), got \"../program.so\""},
      {[](Manifest &m) { m.library = "lib/program.so"; },
       "library: expected a plain file name"},
      {[](Manifest &m) { m.library.clear(); },
       "library: expected a plain file name"},
      {[](Manifest &m) { m.library = "manifest.json"; },
       "library: the library cannot be called manifest.json"},
      {[](Manifest &m) { m.referenceLibrary = ".."; },
       "reference_library: expected a plain file name"},
      {[](Manifest &m) { m.referenceLibrary = m.library; },
       "reference_library: expected a file other than the library"},
      {[](Manifest &m) { m.meshes[0].name.clear(); },
       "meshes[0].name: expected a non-empty name"},
      {[](Manifest &m) { m.meshes[0].shape = {}; },
       "meshes[0]: invalid mesh: mesh has no dimensions"},
      {[](Manifest &m) {
         m.meshes[0].shape = {2, 0};
       },
       "meshes[0]: invalid mesh: mesh dim 1 has non-positive size 0"},
      {[](Manifest &m) {
         m.meshes[0].shape = {2, -2};
       },
       "meshes[0]: invalid mesh: mesh dim 1 has non-positive size -2"},
      {[](Manifest &m) {
         m.meshes[0].shape = {4, 2};
         m.meshes[0].deviceIds = {0, 1, 2, 3, 4, 5, 6, 7};
       },
       "meshes[0].shape: the mesh has 8 devices, more than world_size (4)"},
      {[](Manifest &m) {
         m.meshes[0].shape = {int64_t(1) << 62, int64_t(1) << 62};
       },
       "meshes[0]: invalid mesh: mesh has more devices than int64_t can "
       "count"},
      {[](Manifest &m) { m.meshes[0].dimNames = {"dp"}; },
       "meshes[0].dim_names: expected one name per mesh dim (2), got 1"},
      {[](Manifest &m) {
         m.meshes[0].dimNames = {"dp", "dp"};
       },
       "meshes[0].dim_names[1]: duplicate mesh dim name \"dp\""},
      {[](Manifest &m) {
         m.meshes[0].dimNames = {"", "tp"};
       },
       "meshes[0].dim_names[0]: expected a non-empty name"},
      {[](Manifest &m) { m.meshes[0].deviceIds = {}; },
       "meshes[0].device_ids: expected the device id of every mesh position, "
       "got an empty list"},
      {[](Manifest &m) {
         m.meshes[0].deviceIds = {0, 1, 2};
       },
       "meshes[0]: invalid mesh: mesh has 4 devices but 3 device ids were "
       "given"},
      {[](Manifest &m) {
         m.meshes[0].deviceIds = {0, 1, 2, 4};
       },
       "meshes[0]: invalid mesh: device id 4 out of range [0, 4)"},
      {[](Manifest &m) {
         m.meshes[0].deviceIds = {0, 2, 2, 1};
       },
       "meshes[0]: invalid mesh: device id 2 appears more than once"},
      {[](Manifest &m) { m.meshes.push_back(m.meshes[0]); },
       "meshes[1].name: duplicate mesh name \"mesh\""},
      {[](Manifest &m) { m.groups[0].mesh = 1; },
       "groups[0].mesh: expected a mesh index in [0, 1), got 1"},
      {[](Manifest &m) { m.groups[0].meshDims = {2}; },
       "groups[0].mesh_dims[0]: expected a dim of mesh 0 in [0, 2), got 2"},
      {[](Manifest &m) {
         m.groups[0].meshDims = {1, 1};
       },
       "groups[0].mesh_dims[1]: mesh dim 1 listed twice"},
      {[](Manifest &m) { m.tensors[1].name.clear(); },
       "tensors[1].name: expected a non-empty name"},
      {[](Manifest &m) { m.tensors[2].name = "x"; },
       "tensors[2].name: duplicate tensor name \"x\""},
      {[](Manifest &m) {
         m.tensors[0].shape = {8, -1};
       },
       "tensors[0].shape[1]: expected a non-negative integer, got -1"},
      {[](Manifest &m) {
         m.tensors[0].shape = {int64_t(1) << 31, int64_t(1) << 31};
       },
       "tensors[0].shape: the tensor's size in bytes overflows 64 bits"},
      {[](Manifest &m) { m.tensors[0].mesh = 2; },
       "tensors[0].mesh: expected a mesh index in [0, 1), got 2"},
      {[](Manifest &m) { m.tensors[0].placements = {"S(0)"}; },
       "tensors[0].placements: expected one placement per dim of mesh 0 (2), "
       "got 1"},
      {[](Manifest &m) { m.tensors[0].placements[1] = "Q"; },
       "tensors[0].placements[1]: expected a placement (\"S(<dim>)\", \"R\", "
       "\"P(sum|avg|max|min)\"), got \"Q\""},
      {[](Manifest &m) { m.tensors[0].placements[1] = "P(prod)"; },
       "tensors[0].placements[1]: expected a placement"},
      {[](Manifest &m) { m.tensors[1].placements[1] = "S(-3)"; },
       "tensors[1].placements[1]: shard dim -3 is out of range for a tensor "
       "of rank 2"},
      {[](Manifest &m) { std::swap(m.tensors[1], m.tensors[2]); },
       "tensors[2].role: the weight \"w1\" comes after an output"},
  };
  for (const Case &c : cases) {
    Manifest m = exampleManifest();
    c.edit(m);
    std::string error = validateManifest(m);
    EXPECT_TRUE(contains(error, "manifest.json: " + c.message));
    // The writer refuses it and leaves no manifest behind.
    EXPECT_TRUE(contains(writeManifest(m, dir.path()), c.message));
    EXPECT_FALSE(std::filesystem::exists(manifestPath()));
  }
}

TEST_F(ManifestTest, ValidVariants) {
  Manifest m = exampleManifest();
  m.tensors[0].placements = {"P(avg)", "S(-1)"};
  m.tensors[1].placements = {"Shard(1)", "Replicate()"};
  m.tensors[2].shape = {};
  m.tensors[2].placements = {"R", "P(max)"};
  m.meshes.push_back({"row", {3}, {}, {2, 0, 1}});
  m.worldSize = 5; // more ranks than the largest mesh
  m.groups.push_back({1, {0}});
  m.groups.push_back({0, {1, 0}});
  EXPECT_EQ(validateManifest(m), "");
  EXPECT_EQ(writeManifest(m, dir.path()), "");
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_EQ(read.meshes[1].deviceIds, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(read.groups[2].meshDims, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(read.tensors[2].shape.empty());
}

TEST_F(ManifestTest, InvalidUtf8IsAnErrorNotACrash) {
  Manifest m = exampleManifest();
  m.tensors[0].name = "x\xff";
  EXPECT_TRUE(contains(writeManifest(m, dir.path()),
                       manifestPath() + ": cannot serialize the manifest"));
}

TEST_F(ManifestTest, InitializersRoundTrip) {
  Manifest written = exampleManifest();
  Initializer normal;
  normal.kind = InitKind::Normal;
  normal.params[0] = 0.25;
  normal.params[1] = 0.02;
  written.tensors[1].init = normal;
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["tensors"][1]["init"],
            json({{"kind", "normal"}, {"mean", 0.25}, {"std", 0.02}}));
  EXPECT_FALSE(root["tensors"][0].contains("init"));
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_TRUE(read.tensors[1].init.has_value());
  EXPECT_EQ(*read.tensors[1].init, normal);
  EXPECT_FALSE(read.tensors[0].init.has_value());
  EXPECT_FALSE(read.tensors[2].init.has_value());
}

TEST_F(ManifestTest, InitializerDecodingErrors) {
  struct Case {
    json init;
    std::string message;
  };
  const Case cases[] = {
      {json("normal"), "tensors[1].init: expected an object, got \"normal\""},
      {json({{"std", 1}}), "tensors[1].init: missing key \"kind\""},
      {json({{"kind", "xavier"}}),
       "tensors[1].init.kind: expected \"zeros\", \"ones\", \"constant\", "
       "\"normal\" or \"uniform\", got \"xavier\""},
      {json({{"kind", "constant"}}), "tensors[1].init: missing key \"value\""},
      {json({{"kind", "uniform"}, {"low", 0}, {"high", "1"}}),
       "tensors[1].init.high: expected a number, got \"1\""},
      {json({{"kind", "normal"}, {"mean", 0}, {"std", -1}}),
       "tensors[1].init: \"std\" must be >= 0"},
      {json({{"kind", "uniform"}, {"low", 2}, {"high", 1}}),
       "tensors[1].init: \"low\" (2.000000) must be <= \"high\" (1.000000)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.init.dump());
    std::string error =
        readEdited([&](json &r) { r["tensors"][1]["init"] = c.init; });
    EXPECT_TRUE(contains(error, manifestPath() + ": " + c.message)) << error;
  }
}

TEST_F(ManifestTest, InitializerValidationErrors) {
  Manifest m = exampleManifest();
  m.tensors[0].init = Initializer{};
  EXPECT_TRUE(contains(validateManifest(m),
                       "tensors[0].init: only weights have an initializer, "
                       "not the input \"x\""));
  m = exampleManifest();
  m.tensors[1].dtype = DType::I32;
  m.tensors[1].init = Initializer{InitKind::Normal, {0.0, 1.0}};
  EXPECT_TRUE(contains(validateManifest(m),
                       "tensors[1].init: a i32 tensor cannot take normal"));
  m.tensors[1].init = Initializer{InitKind::Constant, {0.5, 0.0}};
  EXPECT_TRUE(contains(validateManifest(m),
                       "tensors[1].init: a i32 tensor needs an integral "
                       "constant"));
  m.tensors[1].init = Initializer{InitKind::Constant, {3e9, 0.0}};
  EXPECT_TRUE(contains(validateManifest(m), "does not fit i32"));
  m.tensors[1].init = Initializer{InitKind::Constant, {-7.0, 0.0}};
  EXPECT_EQ(validateManifest(m), "");
  m.tensors[1].init = Initializer{InitKind::Zeros, {1.0, 0.0}};
  EXPECT_TRUE(contains(validateManifest(m), "the others must be 0"));
}

} // namespace

TEST_F(ManifestTest, CollectiveSitesRoundTrip) {
  Manifest written = exampleManifest();
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  // None: no key.
  EXPECT_FALSE(json::parse(readBytes(manifestPath())).contains(
      "collective_sites"));
  written.collectiveSites = {{"all_reduce", "sum", "fc2", "m.json:7:9", 4096},
                             {"all_gather", "", "", "", -1}};
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["collective_sites"][0],
            json({{"kind", "all_reduce"},
                  {"reduction", "sum"},
                  {"module", "fc2"},
                  {"position", "m.json:7:9"},
                  {"bytes_sent", 4096}}));
  // Empty fields and unknown bytes are left out.
  EXPECT_EQ(root["collective_sites"][1], json({{"kind", "all_gather"}}));
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_EQ(read.collectiveSites.size(), 2u);
  EXPECT_EQ(read.collectiveSites[0].kind, "all_reduce");
  EXPECT_EQ(read.collectiveSites[0].reduction, "sum");
  EXPECT_EQ(read.collectiveSites[0].module, "fc2");
  EXPECT_EQ(read.collectiveSites[0].position, "m.json:7:9");
  EXPECT_EQ(read.collectiveSites[0].bytesSent, 4096);
  EXPECT_EQ(read.collectiveSites[1].kind, "all_gather");
  EXPECT_EQ(read.collectiveSites[1].module, "");
  EXPECT_EQ(read.collectiveSites[1].bytesSent, -1);
}

TEST_F(ManifestTest, CollectiveSiteErrors) {
  auto withSites = [](json sites) {
    return [sites](json &r) { r["collective_sites"] = sites; };
  };
  EXPECT_NE(readEdited(withSites(json::object())).find(
                "collective_sites: expected an array, got {}"),
            std::string::npos);
  EXPECT_NE(readEdited(withSites({3})).find(
                "collective_sites[0]: expected an object, got 3"),
            std::string::npos);
  EXPECT_NE(readEdited(withSites({json::object()}))
                .find("collective_sites[0]: missing key \"kind\""),
            std::string::npos);
  EXPECT_NE(readEdited(withSites({{{"kind", "all_reduce"}, {"module", 1}}}))
                .find("collective_sites[0].module: expected a string, got 1"),
            std::string::npos);
  std::string negative = readEdited(
      withSites({{{"kind", "all_reduce"}}, {{"kind", "broadcast"},
                                            {"bytes_sent", -2}}}));
  EXPECT_NE(negative.find("collective_sites[1].bytes_sent: expected a "
                          "non-negative integer, got -2"),
            std::string::npos)
      << negative;
  std::string unknown = readEdited(withSites({{{"kind", "gather"}}}));
  EXPECT_NE(unknown.find("collective_sites[0].kind: expected \"all_reduce\", "
                         "\"all_gather\", \"reduce_scatter\", \"all_to_all\", "
                         "\"broadcast\" or \"shift\", got \"gather\""),
            std::string::npos)
      << unknown;
  // The writer validates too.
  Manifest bad = exampleManifest();
  bad.collectiveSites = {{"scatter", "", "", "", 0}};
  EXPECT_NE(writeManifest(bad, dir.path()).find("collective_sites[0].kind"),
            std::string::npos);
}

/// The example with a second entry "decode" (its own x and y) and a state
/// tensor both entries take.
Manifest twoEntryManifest() {
  Manifest m = exampleManifest();
  m.tensors[0].entry = "main";
  m.tensors[2].entry = "main";
  TensorInfo x = m.tensors[0], y = m.tensors[2];
  x.entry = y.entry = "decode";
  m.tensors.push_back(x);
  m.tensors.push_back(y);
  m.tensors.push_back(
      {"cache", TensorRole::State, DType::F32, {4, 16}, 0, {"R", "S(1)"}});
  m.entries = {{"main", {0, 1, 5}, {2}}, {"decode", {3, 1, 5}, {4}}};
  return m;
}

TEST_F(ManifestTest, EntriesRoundTrip) {
  Manifest written = twoEntryManifest();
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["entries"][1],
            json({{"name", "decode"}, {"arguments", {3, 1, 5}}, {"results", {4}}}));
  EXPECT_EQ(root["tensors"][5]["role"], "state");
  EXPECT_FALSE(root["tensors"][5].contains("entry"));
  EXPECT_EQ(root["tensors"][3]["entry"], "decode");
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[1].name, "decode");
  EXPECT_EQ(read.entries[1].arguments, (std::vector<int64_t>{3, 1, 5}));
  EXPECT_EQ(read.entries[1].results, (std::vector<int64_t>{4}));
  EXPECT_EQ(read.tensors[5].role, TensorRole::State);
  EXPECT_EQ(read.tensors[3].entry, "decode");
  EXPECT_EQ(read.tensors[1].entry, "");
}

TEST_F(ManifestTest, OneEntryWithoutEntriesIsDerived) {
  std::vector<EntryInfo> table = entryTable(exampleManifest());
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].name, "main");
  EXPECT_EQ(table[0].arguments, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(table[0].results, (std::vector<int64_t>{2}));
  EXPECT_EQ(entryTable(twoEntryManifest()).size(), 2u);
}

TEST_F(ManifestTest, EntryValidationErrors) {
  struct Case {
    std::function<void(Manifest &)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](Manifest &m) { m.entries[1].name = "main"; },
       "entries[1].name: duplicate entry name \"main\""},
      {[](Manifest &m) { m.entries[1].name.clear(); },
       "entries[1].name: expected a non-empty name"},
      {[](Manifest &m) { m.entry = "prefill"; },
       "entry: expected the name of one of the entries, got \"prefill\""},
      {[](Manifest &m) { m.entries[0].arguments.push_back(9); },
       "entries[0].arguments[3]: expected a tensor index in [0, 6), got 9"},
      {[](Manifest &m) { m.entries[0].arguments.push_back(1); },
       "entries[0].arguments[3]: tensor 1 listed twice"},
      {[](Manifest &m) { m.entries[0].results.push_back(1); },
       "entries[0].results[1]: tensor 1 listed twice"},
      {[](Manifest &m) { m.entries[1].results = {5}; },
       "entries[1].results[0]: tensor 5 listed twice"},
      {[](Manifest &m) { m.entries[1].arguments = {3, 5}; m.entries[1].results = {1, 4}; },
       "entries[1].results[0]: the weight \"w1\" cannot be one of the "
       "results"},
      {[](Manifest &m) { m.entries[0].arguments[0] = 3; },
       "entries[0].arguments[0]: the input \"x\" belongs to entry \"decode\""},
      {[](Manifest &m) { m.entries[0].results.clear(); },
       "tensors[2]: the output \"y\" is not in its entry's arguments or "
       "results"},
      {[](Manifest &m) { m.tensors[5].entry = "main"; },
       "tensors[5].entry: the state \"cache\" is shared by the entries and "
       "names none"},
      {[](Manifest &m) {
         m.tensors[3].entry = "prefill";
         m.entries[1].arguments = {1, 5};
       },
       "tensors[3]: the input \"x\" is not in its entry's arguments or "
       "results"},
      {[](Manifest &m) { m.tensors[3].name = "w1"; },
       "tensors[3].name: the input \"w1\" of entry \"decode\" has the name of "
       "a shared tensor"},
      {[](Manifest &m) { m.tensors[4].name = "x"; },
       "tensors[4].name: duplicate tensor name \"x\""},
      {[](Manifest &m) {
         m.entries.clear();
         m.tensors.resize(3);
         for (TensorInfo &t : m.tensors)
           t.entry.clear();
         m.tensors.push_back({"cache", TensorRole::State, DType::F32, {4}, 0,
                              {"R", "R"}});
       },
       "tensors[3].role: state tensors need the manifest's \"entries\""},
  };
  for (const Case &c : cases) {
    Manifest m = twoEntryManifest();
    c.edit(m);
    std::string error = validateManifest(m);
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected: " << c.message << "\n     got: " << error;
  }
  EXPECT_EQ(validateManifest(twoEntryManifest()), "");
  // The reader names the JSON path of a bad entry.
  std::string error =
      readEdited([](json &r) { r["entries"] = {{{"name", "main"}}}; });
  EXPECT_NE(error.find("entries[0]: missing key \"arguments\""),
            std::string::npos)
      << error;
  error = readEdited([](json &r) { r["tensors"][0]["role"] = "cache"; });
  EXPECT_NE(error.find("expected \"input\", \"weight\", \"parameter\", "
                       "\"output\" or \"state\", got \"cache\""),
            std::string::npos)
      << error;
}

/// twoEntryManifest with the inputs slots (i64) and positions (i32) of
/// "decode", whose step writes one row per slot into the state cache
/// [4, 16].
Manifest rowWriteManifest() {
  Manifest m = twoEntryManifest();
  m.tensors.push_back({"slots", TensorRole::Input, DType::I64, {8}, 0,
                       {"R", "R"}, std::nullopt, "decode"});
  m.tensors.push_back({"positions", TensorRole::Input, DType::I32, {8}, 0,
                       {"R", "R"}, std::nullopt, "decode"});
  m.entries[1].arguments = {3, 1, 5, 6, 7};
  m.entries[1].rowWrites = {{"cache", "slots", "positions", 1, 4, 16}};
  return m;
}

TEST_F(ManifestTest, RowWritesRoundTrip) {
  ASSERT_EQ(writeManifest(rowWriteManifest(), dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["entries"][1]["row_writes"],
            json::parse(R"([{"state": "cache", "slots": "slots",
                             "positions": "positions", "rows": 1,
                             "cache_slots": 4, "cache_positions": 16}])"));
  // An entry without row writes has no key.
  EXPECT_FALSE(root["entries"][0].contains("row_writes"));
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_TRUE(read.entries[0].rowWrites.empty());
  ASSERT_EQ(read.entries[1].rowWrites.size(), 1u);
  EXPECT_EQ(read.entries[1].rowWrites[0],
            (RowWriteInfo{"cache", "slots", "positions", 1, 4, 16}));

  // A manifest written before row writes existed reads without them.
  ASSERT_EQ(writeManifest(twoEntryManifest(), dir.path()), "");
  root = json::parse(readBytes(manifestPath()));
  EXPECT_FALSE(root["entries"][1].contains("row_writes"));
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_TRUE(read.entries[1].rowWrites.empty());
}

TEST_F(ManifestTest, RowWriteDecodingErrors) {
  ASSERT_EQ(writeManifest(rowWriteManifest(), dir.path()), "");
  json written = json::parse(readBytes(manifestPath()));
  auto readWith = [&](const std::function<void(json &)> &edit) {
    json root = written;
    edit(root["entries"][1]);
    root["content_hash"] = hashOf(root);
    writeBytes(manifestPath(), root.dump(2));
    Manifest read;
    return readManifest(dir.path(), read);
  };
  struct Case {
    std::function<void(json &)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](json &e) { e["row_writes"] = json::object(); },
       "entries[1].row_writes: expected an array, got {}"},
      {[](json &e) { e["row_writes"][0] = 1; },
       "entries[1].row_writes[0]: expected an object, got 1"},
      {[](json &e) { e["row_writes"][0].erase("positions"); },
       "entries[1].row_writes[0]: missing key \"positions\""},
      {[](json &e) { e["row_writes"][0]["state"] = 5; },
       "entries[1].row_writes[0].state: expected a string, got 5"},
      {[](json &e) { e["row_writes"][0]["rows"] = "1"; },
       "entries[1].row_writes[0].rows: expected a non-negative integer, got "
       "\"1\""},
      {[](json &e) { e["row_writes"][0]["cache_positions"] = 1.5; },
       "entries[1].row_writes[0].cache_positions: expected a non-negative "
       "integer, got 1.5"},
      // Semantic errors carry the same paths.
      {[](json &e) { e["row_writes"][0]["cache_slots"] = 5; },
       "entries[1].row_writes[0].cache_slots: expected 4, dim 0 of the state "
       "\"cache\", got 5"},
  };
  for (const Case &c : cases)
    EXPECT_EQ(readWith(c.edit), manifestPath() + ": " + c.message);
}

TEST_F(ManifestTest, RowWriteValidationErrors) {
  struct Case {
    std::function<void(Manifest &)> edit;
    std::string message;
  };
  auto write = [](Manifest &m) -> RowWriteInfo & {
    return m.entries[1].rowWrites[0];
  };
  const Case cases[] = {
      {[&](Manifest &m) { write(m).state = "w1"; },
       "entries[1].row_writes[0].state: \"w1\" is not a state tensor of entry "
       "\"decode\""},
      {[&](Manifest &m) { write(m).state = "kv"; },
       "entries[1].row_writes[0].state: \"kv\" is not a state tensor of entry "
       "\"decode\""},
      {[&](Manifest &m) {
         m.tensors[5].shape = {64};
         m.tensors[5].placements = {"R", "S(0)"};
       },
       "entries[1].row_writes[0].state: the state \"cache\" has shape [64]; "
       "rows are written into [slots, positions, ...]"},
      {[&](Manifest &m) { write(m).cacheSlots = 3; },
       "entries[1].row_writes[0].cache_slots: expected 4, dim 0 of the state "
       "\"cache\", got 3"},
      {[&](Manifest &m) { write(m).cachePositions = 8; },
       "entries[1].row_writes[0].cache_positions: expected 16, dim 1 of the "
       "state \"cache\", got 8"},
      {[&](Manifest &m) { write(m).rows = -1; },
       "entries[1].row_writes[0].rows: expected an integer in [0, 16] (the "
       "positions of the state \"cache\"), got -1"},
      {[&](Manifest &m) { write(m).rows = 17; },
       "entries[1].row_writes[0].rows: expected an integer in [0, 16] (the "
       "positions of the state \"cache\"), got 17"},
      // The input x of "main" is not one of "decode".
      {[&](Manifest &m) { write(m).slots = "y"; },
       "entries[1].row_writes[0].slots: \"y\" is not an input of entry "
       "\"decode\""},
      {[&](Manifest &m) { write(m).positions = "cache"; },
       "entries[1].row_writes[0].positions: \"cache\" is not an input of "
       "entry \"decode\""},
      {[&](Manifest &m) { write(m).slots = "x"; },
       "entries[1].row_writes[0].slots: the input \"x\" is f32; row indices "
       "are i32 or i64"},
      {[&](Manifest &m) { m.tensors[7].shape = {2, 4}; },
       "entries[1].row_writes[0].positions: the input \"positions\" has shape "
       "[2, 4]; expected one dim, an index per row"},
      {[&](Manifest &m) { m.tensors[6].placements = {"S(0)", "R"}; },
       "entries[1].row_writes[0].slots: the input \"slots\" is placed S(0); "
       "row indices are checked replicated (\"R\" on every mesh dim)"},
      {[&](Manifest &m) { m.tensors[7].shape = {6}; },
       "entries[1].row_writes[0].positions: the input \"positions\" has 6 "
       "rows, the slots \"slots\" 8"},
  };
  for (const Case &c : cases) {
    Manifest m = rowWriteManifest();
    c.edit(m);
    std::string error = validateManifest(m);
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected: " << c.message << "\n     got: " << error;
  }
  EXPECT_EQ(validateManifest(rowWriteManifest()), "");
  // Zero rows per call write nothing and fit any cache.
  Manifest empty = rowWriteManifest();
  empty.entries[1].rowWrites[0].rows = 0;
  EXPECT_EQ(validateManifest(empty), "");
  // The writer validates too.
  Manifest bad = rowWriteManifest();
  bad.entries[1].rowWrites[0].slots = "positions";
  bad.entries[1].rowWrites[0].cacheSlots = 9;
  EXPECT_NE(writeManifest(bad, dir.path()).find("row_writes[0].cache_slots"),
            std::string::npos);
}

/// The example with two custom-op libraries and two custom ops.
static Manifest customOpManifest() {
  Manifest manifest = exampleManifest();
  manifest.customOpLibraries = {"/opt/ops/libfused.so", "/opt/ops/libmore.so"};
  manifest.customOps = {
      {"fused_swiglu", "example_swiglu", 0, {DType::F32, DType::F32},
       DType::F32},
      {"rows", "count_rows", 1, {DType::BF16}, DType::I64}};
  return manifest;
}

TEST_F(ManifestTest, CustomOpsRoundTrip) {
  // None: no keys.
  ASSERT_EQ(writeManifest(exampleManifest(), dir.path()), "");
  json plain = json::parse(readBytes(manifestPath()));
  EXPECT_FALSE(plain.contains("custom_op_libraries"));
  EXPECT_FALSE(plain.contains("custom_ops"));

  Manifest written = customOpManifest();
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["custom_op_libraries"],
            json({"/opt/ops/libfused.so", "/opt/ops/libmore.so"}));
  EXPECT_EQ(root["custom_ops"][1], json({{"name", "rows"},
                                         {"symbol", "count_rows"},
                                         {"library", 1},
                                         {"inputs", {"bf16"}},
                                         {"output", "i64"}}));
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_EQ(read.customOpLibraries, written.customOpLibraries);
  ASSERT_EQ(read.customOps.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(read.customOps[i].name, written.customOps[i].name);
    EXPECT_EQ(read.customOps[i].symbol, written.customOps[i].symbol);
    EXPECT_EQ(read.customOps[i].library, written.customOps[i].library);
    EXPECT_EQ(read.customOps[i].inputs, written.customOps[i].inputs);
    EXPECT_EQ(read.customOps[i].output, written.customOps[i].output);
  }
  // A manifest read back writes the same bytes.
  std::string first = readBytes(manifestPath());
  ASSERT_EQ(writeManifest(read, dir.path()), "");
  EXPECT_EQ(readBytes(manifestPath()), first);
}

TEST_F(ManifestTest, CustomOpDecodingErrors) {
  auto withOps = [](json ops) {
    return [ops](json &r) {
      r["custom_op_libraries"] = {"/lib.so"};
      r["custom_ops"] = ops;
    };
  };
  std::string notArray = readEdited(withOps(json::object()));
  EXPECT_NE(notArray.find("custom_ops: expected an array"), std::string::npos)
      << notArray;
  std::string missing = readEdited(withOps({{{"name", "f"}}}));
  EXPECT_NE(missing.find("custom_ops[0]: missing key \"symbol\""),
            std::string::npos)
      << missing;
  std::string dtype = readEdited(
      withOps({{{"name", "f"}, {"symbol", "s"}, {"library", 0},
                {"inputs", {"f32", "f8"}}, {"output", "f32"}}}));
  EXPECT_NE(dtype.find("custom_ops[0].inputs[1]: expected one of f32"),
            std::string::npos)
      << dtype;
  std::string library = readEdited([](json &r) {
    r["custom_op_libraries"] = {3};
  });
  EXPECT_NE(library.find("custom_op_libraries[0]: expected a string, got 3"),
            std::string::npos)
      << library;
}

TEST_F(ManifestTest, CustomOpValidationErrors) {
  Manifest range = customOpManifest();
  range.customOps[1].library = 2;
  std::string error = writeManifest(range, dir.path());
  EXPECT_NE(error.find("custom_ops[1].library: library 2 is out of range: "
                       "the manifest lists 2 custom-op libraries"),
            std::string::npos)
      << error;
  Manifest twice = customOpManifest();
  twice.customOps[1].name = "fused_swiglu";
  error = writeManifest(twice, dir.path());
  EXPECT_NE(error.find("custom_ops[1].name: custom op \"fused_swiglu\" is "
                       "listed twice"),
            std::string::npos)
      << error;
  Manifest symbol = customOpManifest();
  symbol.customOps[0].symbol = "";
  EXPECT_NE(writeManifest(symbol, dir.path()).find("custom_ops[0].symbol"),
            std::string::npos);
  Manifest path = customOpManifest();
  path.customOpLibraries[0] = "";
  EXPECT_NE(writeManifest(path, dir.path()).find("custom_op_libraries[0]"),
            std::string::npos);
}

TEST_F(ManifestTest, ParametersNeedVersionTwo) {
  Manifest written = exampleManifest();
  EXPECT_EQ(formatVersionFor(written.tensors), 1);
  written.tensors[1].role = TensorRole::Parameter;
  EXPECT_EQ(formatVersionFor(written.tensors), 2);
  // The writer checks what it writes: version 1 cannot hold a parameter.
  EXPECT_NE(writeManifest(written, dir.path()), "");
  written.formatVersion = formatVersionFor(written.tensors);
  ASSERT_EQ(writeManifest(written, dir.path()), "");
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  EXPECT_EQ(read.formatVersion, 2);
  EXPECT_EQ(read.tensors[1].role, TensorRole::Parameter);
  EXPECT_TRUE(isWeightRole(read.tensors[1].role));
  EXPECT_TRUE(isSharedRole(read.tensors[1].role));
}

TEST_F(ManifestTest, IndexBoundsRoundTripAndChecks) {
  Manifest m = rowWriteManifest();
  m.entries[1].indexBounds = {{"slots", 4, "table"}};
  ASSERT_EQ(writeManifest(m, dir.path()), "");
  json root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["entries"][1]["index_bounds"],
            json::parse(R"([{"input": "slots", "bound": 4,
                             "table": "table"}])"));
  EXPECT_FALSE(root["entries"][0].contains("index_bounds"));
  Manifest read;
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_EQ(read.entries[1].indexBounds.size(), 1u);
  EXPECT_EQ(read.entries[1].indexBounds[0],
            (IndexBoundInfo{"slots", 4, "table"}));
  EXPECT_TRUE(read.entries[0].indexBounds.empty());
  // A cross-entropy's targets: the ignore_index is written and read back.
  m.entries[1].indexBounds = {{"slots", 4, "", -100}};
  ASSERT_EQ(writeManifest(m, dir.path()), "");
  root = json::parse(readBytes(manifestPath()));
  EXPECT_EQ(root["entries"][1]["index_bounds"],
            json::parse(R"([{"input": "slots", "bound": 4, "table": "",
                             "ignore_index": -100}])"));
  ASSERT_EQ(readManifest(dir.path(), read), "");
  ASSERT_EQ(read.entries[1].indexBounds.size(), 1u);
  EXPECT_EQ(read.entries[1].indexBounds[0],
            (IndexBoundInfo{"slots", 4, "", -100}));
  // A bound names an integer input of its entry.
  m.entries[1].indexBounds = {{"cache", 4, ""}};
  EXPECT_EQ(writeManifest(m, dir.path()),
            manifestPath() +
                ": entries[1].index_bounds[0].input: \"cache\" is not an i32 "
                "or i64 input of entry \"decode\"");
  m.entries[1].indexBounds = {{"slots", -1, ""}};
  EXPECT_EQ(writeManifest(m, dir.path()),
            manifestPath() + ": entries[1].index_bounds[0].bound: expected a "
                             "non-negative integer, got -1");
}
