//===- NpyTest.cpp - NumPy .npy reading and writing -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/Npy.h"

#include "dtensor/Tooling/ElementTypes.h"

#include "NpyBytes.h"
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dtensor::tooling;
using namespace dtensor::rt::test;
using dtensor::tooling::test::rawNpy;

namespace {

class NpyTest : public ::testing::Test {
protected:
  std::string readRaw(const std::string &bytes) {
    writeBytes(path, bytes);
    NpyArray array;
    return readNpy(path, array);
  }

  TempDir dir;
  std::string path = dir.file("array.npy");
};

TEST_F(NpyTest, RoundTripEveryDType) {
  for (dtensor_dtype dtype : {DTENSOR_F32, DTENSOR_F64, DTENSOR_F16,
                              DTENSOR_I32, DTENSOR_I64, DTENSOR_I8,
                              DTENSOR_BOOL}) {
    SCOPED_TRACE(dtypeName(dtype));
    std::vector<int64_t> shape = {2, 3, 4};
    std::vector<uint8_t> data(24 * dtypeSize(dtype));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<uint8_t>(dtype == DTENSOR_BOOL ? i % 2 : i * 13);
    ASSERT_EQ(writeNpy(path, dtype, shape, data.data()), "");
    std::string bytes = readBytes(path);
    // Version 1.0, data 64-byte aligned, header ending in a newline.
    EXPECT_EQ(bytes[6], 1);
    EXPECT_EQ((bytes.size() - data.size()) % 64, 0u);
    EXPECT_EQ(bytes[bytes.size() - data.size() - 1], '\n');
    NpyArray array;
    ASSERT_EQ(readNpy(path, array), "");
    EXPECT_EQ(array.dtype, dtype);
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.data, data);
  }
}

TEST_F(NpyTest, HeaderText) {
  float values[3] = {1, 2, 3};
  ASSERT_EQ(writeNpy(path, DTENSOR_F32, {3}, values), "");
  std::string bytes = readBytes(path);
  const std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(bytes.substr(10, header.size()), header);
  ASSERT_EQ(writeNpy(path, DTENSOR_I64, {2, 0, 5}, nullptr), "");
  EXPECT_TRUE(contains(readBytes(path), "'shape': (2, 0, 5), }"));
}

TEST_F(NpyTest, ScalarAndEmpty) {
  double scalar = -1.5;
  ASSERT_EQ(writeNpy(path, DTENSOR_F64, {}, &scalar), "");
  EXPECT_TRUE(contains(readBytes(path), "'shape': (), }"));
  NpyArray array;
  ASSERT_EQ(readNpy(path, array), "");
  EXPECT_TRUE(array.shape.empty());
  ASSERT_EQ(array.data.size(), 8u);
  double read;
  std::memcpy(&read, array.data.data(), 8);
  EXPECT_EQ(read, -1.5);

  ASSERT_EQ(writeNpy(path, DTENSOR_I32, {0, 4}, nullptr), "");
  ASSERT_EQ(readNpy(path, array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(array.data.empty());
}

TEST_F(NpyTest, ReadsVersions2And3AndNumPyStyleHeaders) {
  std::string data("\x01\0\0\0\x02\0\0\0", 8);
  for (int major : {1, 2, 3}) {
    std::string header = "{\"descr\": \"<i4\", \"fortran_order\": False, "
                         "\"shape\": (2L,)}          \n";
    writeBytes(path, rawNpy(major, header, data));
    NpyArray array;
    ASSERT_EQ(readNpy(path, array), "") << major;
    EXPECT_EQ(array.dtype, DTENSOR_I32);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2}));
  }
  // Keys in any order, no trailing comma.
  writeBytes(path, rawNpy(1,
                          "{'shape': (1, 2), 'fortran_order': False, "
                          "'descr': '|b1'}\n",
                          std::string("\x01\0", 2)));
  NpyArray array;
  ASSERT_EQ(readNpy(path, array), "");
  EXPECT_EQ(array.dtype, DTENSOR_BOOL);
}

TEST_F(NpyTest, MalformedFiles) {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (2,), }\n";
  const std::string data(8, '\0');
  struct Case {
    std::string bytes;
    std::string message;
  };
  const Case cases[] = {
      {"", "not an .npy file (missing the \\x93NUMPY magic)"},
      {"\x93NUMP", "not an .npy file"},
      {"PK\x03\x04 zip archive", "not an .npy file"},
      {std::string("\x93NUMPY\x04\x00", 8) + "xx",
       "unsupported .npy format version 4.0 (this reader reads 1.0, 2.0, 3.0)"},
      {std::string("\x93NUMPY\x01\x01", 8) + "xx",
       "unsupported .npy format version 1.1"},
      {std::string("\x93NUMPY\x01\x00", 8) + "x",
       "the file ends inside the header length"},
      {std::string("\x93NUMPY\x02\x00\x10\x00", 10),
       "the file ends inside the header length"},
      {std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{}",
       "header length 255 runs past the end of the 12-byte file"},
      {rawNpy(1, "['descr']\n", data),
       "bad header: expected '{' at the start of the header dict"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': False}\n", data),
       "bad header: missing key 'shape'"},
      {rawNpy(1, "{'descr': '<f4', 'shape': (2,)}\n", data),
       "bad header: missing key 'fortran_order'"},
      {rawNpy(1, "{'fortran_order': False, 'shape': (2,)}\n", data),
       "bad header: missing key 'descr'"},
      {rawNpy(1,
              "{'descr': [('a', '<f4')], 'fortran_order': False, "
              "'shape': (2,)}\n",
              data),
       "bad header: 'descr': expected a quoted type string such as '<f4' "
       "(structured dtypes are not supported)"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}\n", data),
       "bad header: 'fortran_order': expected True or False"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}\n",
              data),
       "bad header: 'shape': expected a tuple"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}\n",
              data),
       "bad header: 'shape': expected a non-negative integer dim"},
      {rawNpy(1,
              "{'descr': '<f4', 'fortran_order': False, "
              "'shape': (99999999999999999999,)}\n",
              data),
       "bad header: 'shape': dim too large"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) \n",
              data),
       "bad header: expected ',' or '}'"},
      {rawNpy(1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
              "'extra': 1}\n",
              data),
       "bad header: unexpected key 'extra'"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x\n",
              data),
       "bad header: unexpected text after the header dict"},
      {rawNpy(1, "{'descr: '<f4'}\n", data), "bad header: expected ':' after"},
      {rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}\n",
              data),
       "fortran_order True is not supported (save a C-ordered array, e.g. "
       "numpy.ascontiguousarray)"},
      {rawNpy(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,)}\n",
              data),
       "unsupported descr '<u2' (supported: '<f4', '<f8', '<f2', '<i4', "
       "'<i8', '|i1', '|b1')"},
      {rawNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}\n",
              data),
       "unsupported descr '>f4'"},
      {rawNpy(1,
              "{'descr': '<f8', 'fortran_order': False, "
              "'shape': (4294967296, 4294967296)}\n",
              data),
       "the size of the shape overflows 64 bits"},
      {rawNpy(1, good, data.substr(0, 7)),
       "the data is 7 bytes, but the shape and dtype need 8 (the file is "
       "truncated)"},
      {rawNpy(1, good, data + "xyz"), "3 trailing bytes after the data"},
  };
  for (const Case &c : cases) {
    EXPECT_TRUE(contains(readRaw(c.bytes), path + ": " + c.message));
  }
  NpyArray array;
  EXPECT_TRUE(contains(readNpy(dir.file("absent.npy"), array),
                       "cannot open " + dir.file("absent.npy")));
}

TEST_F(NpyTest, WriteErrors) {
  uint16_t bf16[2] = {0x3f80, 0x4000};
  std::string error = writeNpy(path, DTENSOR_BF16, {2}, bf16);
  EXPECT_TRUE(contains(error, path + ": bf16 cannot be stored"));
  EXPECT_TRUE(contains(error, "convert the tensor to f32"));
  EXPECT_TRUE(contains(writeNpy(path, DTENSOR_F32, {-1}, bf16),
                       "the shape has a negative dim"));
  EXPECT_TRUE(contains(writeNpy(path, DTENSOR_F32, {2}, nullptr), "no data"));
  EXPECT_TRUE(
      contains(writeNpy(dir.file("missing/a.npy"), DTENSOR_F32, {1}, bf16),
               "cannot create " + dir.file("missing/a.npy")));
}

} // namespace
