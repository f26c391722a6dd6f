//===- TokenDataTest.cpp - Token files and their batches ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/TokenBatches.h"
#include "dtensor/Tooling/TokenStream.h"

#include "NpyBytes.h"
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

using namespace dtensor::tooling;
using namespace dtensor::rt::test;
using dtensor::tooling::test::rawNpy;

namespace {

/// The little-endian bytes of `values`, each `width` bytes wide.
template <typename T> std::string bytesOf(const std::vector<T> &values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// An llm.c shard: 256 int32 (magic, version, count) then the tokens.
template <typename T>
std::string llmcShard(int32_t magic, int32_t version,
                      const std::vector<T> &tokens, int32_t count = -1) {
  std::vector<int32_t> header(256, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = count < 0 ? static_cast<int32_t>(tokens.size()) : count;
  return bytesOf(header) + bytesOf(tokens);
}

std::string npyOf(const std::string &descr, const std::string &shape,
                  const std::string &data) {
  return rawNpy(1,
                "{'descr': '" + descr +
                    "', 'fortran_order': False, 'shape': " + shape + ", }\n",
                data);
}

class TokenDataTest : public ::testing::Test {
protected:
  std::string write(const std::string &name, const std::string &bytes) {
    std::string path = dir.file(name);
    writeBytes(path, bytes);
    return path;
  }
  std::string openError(const std::vector<std::string> &paths) {
    TokenStream stream;
    return TokenStream::open(paths, stream);
  }

  TempDir dir;
};

std::vector<int64_t> readAll(const TokenStream &stream) {
  std::vector<int64_t> out(stream.size());
  stream.read(0, stream.size(), out.data());
  return out;
}

} // namespace

TEST_F(TokenDataTest, ReadsEveryIntegerDtypeOfNpy) {
  std::string u2 =
      write("u2.npy", npyOf("<u2", "(3,)", bytesOf<uint16_t>({1, 65535, 7})));
  std::string i8 = write(
      "i8.npy", npyOf("<i8", "(2, 2)", bytesOf<int64_t>({4, 5, 6, 1LL << 40})));
  std::string u1 =
      write("u1.npy", npyOf("|u1", "(2,)", bytesOf<uint8_t>({200, 3})));
  std::string i2 =
      write("i2.npy", npyOf("<i2", "(1,)", bytesOf<int16_t>({-2})));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({u2, i8, u1, i2}, stream), "");
  EXPECT_EQ(stream.size(), 10u);
  EXPECT_EQ(readAll(stream), (std::vector<int64_t>{1, 65535, 7, 4, 5, 6,
                                                   1LL << 40, 200, 3, -2}));
  // A range across three files.
  std::vector<int64_t> middle(5);
  stream.read(2, 5, middle.data());
  EXPECT_EQ(middle, (std::vector<int64_t>{7, 4, 5, 6, 1LL << 40}));
}

TEST_F(TokenDataTest, ReadsLlmcShards) {
  std::string gpt2 =
      write("gpt2.bin", llmcShard<uint16_t>(20240520, 1, {50256, 0, 42}));
  std::string llama3 =
      write("llama3.bin", llmcShard<uint32_t>(20240801, 7, {128000, 9}));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({gpt2, llama3}, stream), "");
  EXPECT_EQ(readAll(stream), (std::vector<int64_t>{50256, 0, 42, 128000, 9}));
  EXPECT_EQ(stream.getFiles()[0].width, 2u);
  EXPECT_EQ(stream.getFiles()[1].width, 4u);
}

TEST_F(TokenDataTest, RefusesBadFiles) {
  EXPECT_TRUE(contains(openError({dir.file("missing.bin")}), "cannot open"));
  EXPECT_TRUE(contains(openError({}), "no token file"));
  std::string shortHeader = write("short.bin", std::string(100, '\0'));
  EXPECT_TRUE(contains(openError({shortHeader}),
                       "shorter than llm.c's 1024-byte header"));
  std::string magic = write("magic.bin", llmcShard<uint16_t>(1234, 1, {1}));
  EXPECT_TRUE(contains(openError({magic}), "(magic 1234, expected 20240520"));
  std::string version =
      write("version.bin", llmcShard<uint16_t>(20240520, 3, {1}));
  EXPECT_TRUE(contains(openError({version}), "unsupported version 3"));
  std::string truncated =
      write("truncated.bin", llmcShard<uint16_t>(20240520, 1, {1, 2}, 5));
  EXPECT_TRUE(contains(openError({truncated}),
                       "the header gives 5 tokens (1034 bytes with the "
                       "header), but the file has 1028 bytes (truncated)"));
  std::string trailing =
      write("trailing.bin", llmcShard<uint16_t>(20240520, 1, {1, 2, 3}, 2));
  EXPECT_TRUE(contains(openError({trailing}), "2 trailing bytes"));
  std::string floats =
      write("f4.npy", npyOf("<f4", "(1,)", bytesOf<float>({1.0f})));
  EXPECT_TRUE(contains(openError({floats}),
                       "token ids must be integers; the array's descr is "
                       "'<f4'"));
  std::string shortNpy =
      write("short.npy", npyOf("<u2", "(4,)", bytesOf<uint16_t>({1, 2})));
  EXPECT_TRUE(contains(openError({shortNpy}), "(the file is truncated)"));
  // The error names the file that is wrong, after good ones.
  std::string good =
      write("good.npy", npyOf("<i4", "(1,)", bytesOf<int32_t>({1})));
  EXPECT_TRUE(contains(openError({good, magic}), "magic.bin"));
}

TEST_F(TokenDataTest, ChecksTheVocabulary) {
  std::string good =
      write("good.npy", npyOf("<i4", "(3,)", bytesOf<int32_t>({0, 1, 99})));
  std::string negative =
      write("negative.npy", npyOf("<i2", "(2,)", bytesOf<int16_t>({3, -1})));
  std::string wide = write(
      "wide.npy", npyOf("<u8", "(1,)", bytesOf<uint64_t>({~uint64_t(0)})));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({good}, stream), "");
  EXPECT_EQ(stream.checkVocabulary(100), "");
  EXPECT_TRUE(contains(stream.checkVocabulary(99),
                       "good.npy: token 2 is 99, outside the vocabulary "
                       "[0, 99)"));
  ASSERT_EQ(TokenStream::open({good, negative}, stream), "");
  EXPECT_TRUE(contains(stream.checkVocabulary(100),
                       "negative.npy: token 1 is -1, outside"));
  ASSERT_EQ(TokenStream::open({wide}, stream), "");
  EXPECT_TRUE(contains(stream.checkVocabulary(100),
                       "token 0 is 18446744073709551615, outside"));
}

TEST_F(TokenDataTest, CutsWindowsWithShiftedTargets) {
  // 0..20: windows of 4 tokens start at 0, 4, 8, 12, 16 ((21 - 1) / 4 = 5).
  std::vector<int32_t> ids(21);
  std::iota(ids.begin(), ids.end(), 0);
  std::string path =
      write("ids.npy", npyOf("<i4", "(21,)", bytesOf<int32_t>(ids)));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({path}, stream), "");
  TokenBatches batches;
  ASSERT_EQ(TokenBatches::create(stream, 2, 4, std::nullopt, batches), "");
  EXPECT_EQ(batches.getWindows(), 5u);
  std::vector<int64_t> tokens(8), targets(8);
  batches.read(0, 0, 2, tokens.data(), targets.data());
  EXPECT_EQ(tokens, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(targets, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  // Batch 2 takes the last window and wraps to the next epoch's first.
  batches.read(2, 0, 2, tokens.data(), targets.data());
  EXPECT_EQ(tokens, (std::vector<int64_t>{16, 17, 18, 19, 0, 1, 2, 3}));
  EXPECT_EQ(targets, (std::vector<int64_t>{17, 18, 19, 20, 1, 2, 3, 4}));
  // One rank's rows are the same rows of the whole batch.
  std::vector<int64_t> row(4), rowTargets(4);
  batches.read(2, 1, 2, row.data(), rowTargets.data());
  EXPECT_EQ(row, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST_F(TokenDataTest, ShufflesEachEpochFromTheSeed) {
  std::vector<uint16_t> ids(1001);
  std::iota(ids.begin(), ids.end(), 0);
  std::string path = write("ids.bin", llmcShard<uint16_t>(20240520, 1, ids));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({path}, stream), "");
  TokenBatches a, b, other;
  ASSERT_EQ(TokenBatches::create(stream, 10, 10, 7, a), "");
  ASSERT_EQ(TokenBatches::create(stream, 10, 10, 7, b), "");
  ASSERT_EQ(TokenBatches::create(stream, 10, 10, 8, other), "");
  ASSERT_EQ(a.getWindows(), 100u);
  auto epoch = [](const TokenBatches &batches, uint64_t e) {
    std::vector<uint64_t> starts;
    for (uint64_t batch = 10 * e; batch < 10 * (e + 1); ++batch)
      for (int64_t row = 0; row < 10; ++row)
        starts.push_back(batches.getRowStart(batch, row));
    return starts;
  };
  std::vector<uint64_t> first = epoch(a, 0), second = epoch(a, 1);
  // Every window once per epoch.
  std::set<uint64_t> seen(first.begin(), first.end());
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(*seen.rbegin(), 990u);
  EXPECT_NE(first, second);
  std::vector<uint64_t> sorted(first);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);
  // The same seed gives the same order, asked in any order; another seed
  // another order.
  EXPECT_EQ(epoch(b, 1), second);
  EXPECT_EQ(epoch(b, 0), first);
  EXPECT_NE(epoch(other, 0), first);
  // A row's tokens are its window's.
  std::vector<int64_t> tokens(10), targets(10);
  a.read(3, 4, 5, tokens.data(), targets.data());
  EXPECT_EQ(tokens[0], static_cast<int64_t>(a.getRowStart(3, 4)));
  EXPECT_EQ(targets[9], tokens[9] + 1);
}

TEST_F(TokenDataTest, RefusesDataShorterThanOneBatch) {
  std::string path =
      write("few.npy", npyOf("<i4", "(9,)",
                             bytesOf<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8})));
  TokenStream stream;
  ASSERT_EQ(TokenStream::open({path}, stream), "");
  TokenBatches batches;
  EXPECT_EQ(TokenBatches::create(stream, 2, 4, std::nullopt, batches), "");
  EXPECT_TRUE(contains(
      TokenBatches::create(stream, 3, 4, std::nullopt, batches),
      "the token data holds 9 tokens: 2 sequences of 4 tokens and their "
      "targets, fewer than the 3 rows of one batch"));
  EXPECT_TRUE(contains(TokenBatches::create(stream, 0, 4, 1, batches),
                       "at least one row"));
}
