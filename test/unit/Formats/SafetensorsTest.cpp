//===- SafetensorsTest.cpp - Safetensors reading, writing, validation -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Safetensors.h"

#include "dtensor/Formats/Box.h"
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>

using namespace dtensor::rt;
using namespace dtensor::rt::test;

namespace {

/// A safetensors file from a raw header text and data bytes.
std::string rawFile(const std::string &header, const std::string &data) {
  std::string bytes(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(length >> (8 * i));
  return bytes + header + data;
}

class SafetensorsTest : public ::testing::Test {
protected:
  std::string openRaw(const std::string &bytes) {
    writeBytes(path, bytes);
    SafetensorsFile file;
    return file.open(path);
  }

  TempDir dir;
  std::string path = dir.file("weights.safetensors");
};

TEST_F(SafetensorsTest, WriteThenRead) {
  std::vector<float> a(6);
  std::iota(a.begin(), a.end(), 1.0f);
  std::vector<int64_t> b = {-5, 7, 1ll << 40};
  std::vector<uint16_t> c(2 * 3 * 2);
  std::iota(c.begin(), c.end(), uint16_t(100));
  double scalar = 3.25;
  std::vector<SafetensorsTensor> tensors = {
      {"layer.a", DType::F32, {2, 3}, a.data()},
      {"b", DType::I64, {3}, b.data()},
      {"c", DType::BF16, {2, 3, 2}, c.data()},
      {"scalar", DType::F64, {}, &scalar},
      {"empty", DType::I8, {4, 0}, nullptr},
  };
  ASSERT_EQ(writeSafetensors(path, tensors), "");
  EXPECT_FALSE(
      std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));

  // The header is padded with spaces so that the data is 8-byte aligned.
  std::string bytes = readBytes(path);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ(headerSize % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerSize + 24 + 24 + 24 + 8);

  SafetensorsFile file;
  ASSERT_EQ(file.open(path), "");
  ASSERT_EQ(file.entries().size(), tensors.size());
  // Entries come in data order, which is the written order.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsEntry &entry = file.entries()[i];
    EXPECT_EQ(entry.name, tensors[i].name);
    EXPECT_EQ(entry.dtype, tensors[i].dtype);
    EXPECT_EQ(entry.shape, tensors[i].shape);
  }
  EXPECT_EQ(file.entries()[0].begin, 8 + headerSize);
  EXPECT_TRUE(file.metadata().empty());
  EXPECT_EQ(file.find("missing"), nullptr);

  std::vector<float> a2(6);
  ASSERT_EQ(file.readBox(*file.find("layer.a"), {0, 0}, {2, 3}, a2.data()), "");
  EXPECT_EQ(a2, a);
  std::vector<int64_t> b2(3);
  ASSERT_EQ(file.readBox(*file.find("b"), {0}, {3}, b2.data()), "");
  EXPECT_EQ(b2, b);
  std::vector<uint16_t> c2(12);
  ASSERT_EQ(file.readBox(*file.find("c"), {0, 0, 0}, {2, 3, 2}, c2.data()), "");
  EXPECT_EQ(c2, c);
  double scalar2 = 0;
  ASSERT_EQ(file.readBox(*file.find("scalar"), {}, {}, &scalar2), "");
  EXPECT_EQ(scalar2, 3.25);
  ASSERT_EQ(file.readBox(*file.find("empty"), {0, 0}, {4, 0}, nullptr), "");

  // A moved-to file still reads.
  SafetensorsFile moved = std::move(file);
  ASSERT_EQ(moved.readBox(*moved.find("b"), {1}, {1}, b2.data()), "");
  EXPECT_EQ(b2[0], 7);
}

TEST_F(SafetensorsTest, ReadBoxMatchesCopyBoxOut) {
  struct Tensor {
    std::vector<int64_t> shape;
    std::vector<std::vector<int64_t>> boxes; // offset..., shape...
  };
  const Tensor cases[] = {
      {{17}, {{0, 17}, {5, 4}, {13, 4}, {16, 1}, {3, 0}, {17, 0}}},
      {{6, 10},
       {{2, 3, 2, 4},
        {0, 0, 6, 10},
        {0, 7, 6, 3},
        {5, 0, 1, 10},
        {3, 0, 2, 10},
        {2, 9, 3, 1},
        {4, 4, 0, 3}}},
      {{4, 5, 6},
       {{1, 1, 1, 2, 3, 4},
        {0, 0, 0, 4, 5, 6},
        {3, 4, 5, 1, 1, 1},
        {1, 0, 0, 2, 5, 6},
        {0, 2, 0, 4, 2, 6},
        {0, 0, 3, 4, 5, 3},
        {2, 5, 0, 1, 0, 6}}},
  };
  for (const Tensor &t : cases) {
    int64_t count = numElements(t.shape);
    std::vector<int32_t> data(count);
    for (int64_t i = 0; i < count; ++i)
      data[i] = static_cast<int32_t>(i * 7 + 3);
    // A neighbour before it, so that offsets are not relative to the data.
    std::vector<int32_t> neighbour = {-1, -2, -3};
    ASSERT_EQ(
        writeSafetensors(path, {{"before", DType::I32, {3}, neighbour.data()},
                                {"t", DType::I32, t.shape, data.data()}}),
        "");
    SafetensorsFile file;
    ASSERT_EQ(file.open(path), "");
    const SafetensorsEntry *entry = file.find("t");
    ASSERT_NE(entry, nullptr);
    const size_t rank = t.shape.size();
    for (const std::vector<int64_t> &box : t.boxes) {
      std::vector<int64_t> offset(box.begin(), box.begin() + rank);
      std::vector<int64_t> shape(box.begin() + rank, box.end());
      int64_t boxCount = numElements(shape);
      std::vector<int32_t> expected(boxCount + 1, 0x5a5a5a5a);
      copyBoxOut(data.data(), t.shape, offset, shape, 4, expected.data());
      std::vector<int32_t> got(boxCount + 1, 0x5a5a5a5a);
      ASSERT_EQ(file.readBox(*entry, offset, shape, got.data()), "");
      EXPECT_EQ(got, expected)
          << "rank " << rank << " box at " << ::testing::PrintToString(offset);
    }
  }
}

TEST_F(SafetensorsTest, ReadBoxRejectsBadBoxes) {
  std::vector<float> data(12);
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {3, 4}, data.data()}}),
            "");
  SafetensorsFile file;
  ASSERT_EQ(file.open(path), "");
  const SafetensorsEntry &entry = *file.find("w");
  std::vector<float> out(12);
  EXPECT_EQ(file.readBox(entry, {0}, {3}, out.data()),
            path + ": tensor \"w\": the box has rank 1/1, the tensor rank 2");
  EXPECT_EQ(file.readBox(entry, {1, 2}, {2, 3}, out.data()),
            path + ": tensor \"w\": the box [2, 2 + 3) of dim 1 is outside "
                   "[0, 4)");
  EXPECT_TRUE(contains(file.readBox(entry, {-1, 0}, {1, 1}, out.data()),
                       "of dim 0 is outside [0, 3)"));
  SafetensorsFile closed;
  EXPECT_TRUE(contains(closed.readBox(entry, {0, 0}, {1, 1}, out.data()),
                       "the file is not open"));
}

TEST_F(SafetensorsTest, Metadata) {
  std::vector<float> data = {1, 2};
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {2}, data.data()}},
                             {{"format", "pt"}, {"step", "10"}}),
            "");
  SafetensorsFile file;
  ASSERT_EQ(file.open(path), "");
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.metadata().at("step"), "10");
  ASSERT_EQ(file.entries().size(), 1u);

  // Hand-written, as other writers lay it out: metadata first, unpadded.
  std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("x":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})";
  ASSERT_EQ(openRaw(rawFile(header, "\x01\x02")), "");
  SafetensorsFile raw;
  ASSERT_EQ(raw.open(path), "");
  int8_t x[2];
  ASSERT_EQ(raw.readBox(*raw.find("x"), {0}, {2}, x), "");
  EXPECT_EQ(x[1], 2);
  EXPECT_EQ(raw.metadata().at("format"), "pt");
}

TEST_F(SafetensorsTest, EntriesAreSortedByOffset) {
  std::string header =
      R"({"a":{"dtype":"I8","shape":[2],"data_offsets":[2,4]},)"
      R"("b":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})";
  writeBytes(path, rawFile(header, "\x01\x02\x03\x04"));
  SafetensorsFile file;
  ASSERT_EQ(file.open(path), "");
  EXPECT_EQ(file.entries()[0].name, "b");
  int8_t a[2];
  ASSERT_EQ(file.readBox(*file.find("a"), {0}, {2}, a), "");
  EXPECT_EQ(a[0], 3);
}

TEST_F(SafetensorsTest, OpenErrors) {
  const std::string entry =
      R"("dtype":"F32","shape":[2,2],"data_offsets":[0,16])";
  const std::string data(16, '\0');
  struct Case {
    std::string bytes;
    std::string message;
  };
  std::string huge(8, '\0');
  uint64_t hugeLength = 200ull * 1000 * 1000;
  std::memcpy(huge.data(), &hugeLength, 8);
  const Case cases[] = {
      {"", "the file is 0 bytes, too short for the 8-byte header length"},
      {std::string("\x10\0\0", 3), "the file is 3 bytes, too short"},
      {rawFile("{}", "").substr(0, 8) + "{",
       "header length 2 runs past the end of the 9-byte file"},
      {huge + "{}", "header length 200000000 exceeds the limit of 100000000 "
                    "bytes (not a safetensors file?)"},
      {rawFile("{\"w\":", ""), "the header is not valid JSON"},
      {rawFile("[1,2]", ""), "the header is not a JSON object, got [1,2]"},
      {rawFile(R"({"w":[1]})", data),
       "tensor \"w\": expected an object, got [1]"},
      {rawFile(R"({"w":{"shape":[2,2],"data_offsets":[0,16]}})", data),
       "tensor \"w\": missing \"dtype\""},
      {rawFile(R"({"w":{"dtype":"F32","data_offsets":[0,16]}})", data),
       "tensor \"w\": missing \"shape\""},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2]}})", data),
       "tensor \"w\": missing \"data_offsets\""},
      {rawFile(R"({"w":{"dtype":"U16","shape":[2,2],"data_offsets":[0,16]}})",
               data),
       "tensor \"w\": unsupported dtype \"U16\" (expected F32, F64, F16, "
       "BF16, I32, I64, I8 or BOOL)"},
      {rawFile(R"({"w":{"dtype":3,"shape":[2,2],"data_offsets":[0,16]}})",
               data),
       "tensor \"w\": dtype: expected a string, got 3"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,-2],"data_offsets":[0,16]}})",
               data),
       "tensor \"w\": shape[1]: expected a non-negative integer, got -2"},
      {rawFile(R"({"w":{"dtype":"F32","shape":"2","data_offsets":[0,16]}})",
               data),
       "tensor \"w\": shape: expected an array, got \"2\""},
      {rawFile(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],)"
               R"("data_offsets":[0,16]}})",
               data),
       "tensor \"w\": the size of shape [4294967296,4294967296] overflows 64 "
       "bits"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})",
               data),
       "tensor \"w\": data_offsets span 12 bytes, but f32 [2,2] takes 16"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]}})",
               data),
       "tensor \"w\": data_offsets: expected [begin, end] with 0 <= begin <= "
       "end, got [16,0]"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0]}})",
               data),
       "tensor \"w\": data_offsets: expected [begin, end]"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[-4,12]}})",
               data),
       "tensor \"w\": data_offsets: expected [begin, end]"},
      {rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}})",
               data),
       "tensor \"w\": data_offsets [8,24] run past the end of the file (16 "
       "data bytes; the file is truncated?)"},
      {rawFile("{\"w\":{" + entry + "}}", data.substr(0, 15)),
       "tensor \"w\": data_offsets [0,16] run past the end of the file"},
      {rawFile(R"({"a":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},)"
               R"("b":{"dtype":"I8","shape":[3],"data_offsets":[2,5]}})",
               "12345"),
       "the data of tensors \"a\" and \"b\" overlap"},
      {rawFile(R"({"__metadata__":{"step":3}})", ""),
       "__metadata__.step: expected a string, got 3"},
      {rawFile(R"({"__metadata__":[]})", ""),
       "__metadata__: expected an object, got []"},
  };
  for (const Case &c : cases) {
    std::string error = openRaw(c.bytes);
    EXPECT_TRUE(contains(error, path + ": " + c.message));
  }
  SafetensorsFile file;
  EXPECT_TRUE(contains(file.open(dir.file("absent.safetensors")),
                       "cannot open " + dir.file("absent.safetensors")));
}

TEST_F(SafetensorsTest, TruncatedFileIsCaughtAtOpen) {
  std::vector<double> data(100, 1.0);
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F64, {10, 10}, data.data()}}),
            "");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  SafetensorsFile file;
  EXPECT_TRUE(contains(file.open(path), "run past the end of the file"));
}

TEST_F(SafetensorsTest, FileShrunkAfterOpenIsAReadError) {
  std::vector<float> data(64, 2.0f);
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {8, 8}, data.data()}}),
            "");
  SafetensorsFile file;
  ASSERT_EQ(file.open(path), "");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 40);
  std::vector<float> out(64);
  EXPECT_EQ(file.readBox(*file.find("w"), {0, 0}, {4, 8}, out.data()), "");
  std::string error = file.readBox(*file.find("w"), {6, 0}, {2, 8}, out.data());
  EXPECT_TRUE(contains(error, path + ": unexpected end of file at offset "));
  EXPECT_TRUE(contains(error, "(reading tensor \"w\")"));
}

// A file changed after open() (truncated, or rewritten in place with the
// same size) is caught by checkUnchanged(), which loads call after their
// reads: bytes read meanwhile may mix two versions.
TEST_F(SafetensorsTest, ChangesAfterOpenAreSeen) {
  std::vector<float> data(64, 2.0f), other(64, 3.0f);
  ASSERT_EQ(writeSafetensors(path, {{"w", DType::F32, {8, 8}, data.data()}}),
            "");
  SafetensorsFile file, again;
  ASSERT_EQ(file.open(path), "");
  EXPECT_EQ(file.checkUnchanged(), "");
  ASSERT_EQ(again.open(path), "");
  EXPECT_EQ(file.version().size, again.version().size);
  EXPECT_EQ(file.version().modifiedNs, again.version().modifiedNs);
  EXPECT_EQ(file.version().headerHash, again.version().headerHash);

  // Rewritten in place (same inode, same size), a second later.
  std::string bytes = readBytes(path);
  std::memcpy(bytes.data() + bytes.size() - 256, other.data(), 256);
  {
    FILE *out = std::fopen(path.c_str(), "r+");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
    std::fclose(out);
  }
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(1));
  EXPECT_EQ(file.checkUnchanged(),
            path + ": the file changed while it was read (modified after it "
                   "was opened)");

  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 40);
  EXPECT_TRUE(contains(file.checkUnchanged(),
                       path + ": the file changed while it was read (" +
                           std::to_string(bytes.size()) + " bytes at open, " +
                           std::to_string(bytes.size() - 40) + " now)"));
}

TEST_F(SafetensorsTest, EmptyTensorsDoNotOverlap) {
  std::string header =
      R"({"a":{"dtype":"I8","shape":[0],"data_offsets":[1,1]},)"
      R"("b":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})";
  EXPECT_EQ(openRaw(rawFile(header, "12")), "");
}

TEST_F(SafetensorsTest, WriteErrors) {
  float x = 0;
  EXPECT_TRUE(contains(writeSafetensors(path, {{"a", DType::F32, {1}, &x},
                                               {"a", DType::F32, {1}, &x}}),
                       "tensor \"a\": the name appears twice"));
  EXPECT_TRUE(
      contains(writeSafetensors(path, {{"__metadata__", DType::F32, {1}, &x}}),
               "invalid tensor name \"__metadata__\""));
  EXPECT_TRUE(contains(writeSafetensors(path, {{"a", DType::F32, {-1}, &x}}),
                       "tensor \"a\": the shape has a negative dim"));
  EXPECT_TRUE(
      contains(writeSafetensors(path, {{"a", DType::F32, {2}, nullptr}}),
               "tensor \"a\": no data"));
  EXPECT_TRUE(contains(writeSafetensors(dir.file("no/such/dir.safetensors"),
                                        {{"a", DType::F32, {1}, &x}}),
                       "cannot create " + dir.file("no/such/dir.safetensors")));
  EXPECT_FALSE(std::filesystem::exists(path));
}

} // namespace
