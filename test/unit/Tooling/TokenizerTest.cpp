//===- TokenizerTest.cpp - Tests of the tokenizers' pieces ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// UTF-8 repair as Rust's from_utf8_lossy (the expected strings are Rust's
// documented outputs for these inputs), the pre-tokenizer regex, BPE merges
// by rank on a hand-written tokenizer.json, streaming that holds back half
// characters, and the loader's refusals. test/Tools/dtensor-tokenize
// compares whole tokenizers with Hugging Face's.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ByteLevelBpe.h"
#include "dtensor/Tooling/StreamingDetokenizer.h"
#include "dtensor/Tooling/UnicodeRegex.h"
#include "dtensor/Tooling/Utf8.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace dtensor::tooling;
using nlohmann::json;

namespace {

const std::string replacement = "\xEF\xBF\xBD";

TEST(Utf8Test, LossyReplacesMaximalSubparts) {
  EXPECT_EQ(utf8Lossy("abc"), "abc");
  EXPECT_EQ(utf8Lossy("\xE4\xB8\xAD"), "\xE4\xB8\xAD"); // 中
  // A truncated 4-byte character is one maximal subpart.
  EXPECT_EQ(utf8Lossy("\xF0\x90\x80"
                      "a"),
            replacement + "a");
  // An overlong form: C0 is never a lead byte, AF never a first byte.
  EXPECT_EQ(utf8Lossy("\xC0\xAF"), replacement + replacement);
  // A surrogate: ED A0 is not a valid start, so three subparts.
  EXPECT_EQ(utf8Lossy("\xED\xA0\x80"), replacement + replacement + replacement);
  EXPECT_EQ(utf8Lossy("\xFF"
                      "b\x80"),
            replacement + "b" + replacement);
  EXPECT_TRUE(isValidUtf8("h\xC3\xA9llo"));
  EXPECT_FALSE(isValidUtf8("h\xC3"));
}

TEST(Utf8Test, UnfinishedTail) {
  EXPECT_EQ(unfinishedUtf8Tail("abc"), 0u);
  EXPECT_EQ(unfinishedUtf8Tail("ab\xE4"), 1u);
  EXPECT_EQ(unfinishedUtf8Tail("ab\xE4\xB8"), 2u);
  EXPECT_EQ(unfinishedUtf8Tail("ab\xE4\xB8\xAD"), 0u);
  EXPECT_EQ(unfinishedUtf8Tail("\xF0\x9F\x98"), 3u);
  // A byte that can start nothing is not waiting for anything.
  EXPECT_EQ(unfinishedUtf8Tail("a\xFF"), 0u);
}

TEST(UnicodeRegexTest, SplitsOnUnicodeClasses) {
  std::string error;
  auto regex = UnicodeRegex::compile(
      R"('s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", error);
  ASSERT_TRUE(regex) << error;
  std::vector<std::string_view> pieces =
      splitIsolated(*regex, "It's 東京  42!");
  std::vector<std::string> got(pieces.begin(), pieces.end());
  EXPECT_EQ(got,
            (std::vector<std::string>{"It", "'s", " 東京", " ", " 42", "!"}));
  EXPECT_FALSE(UnicodeRegex::compile("(unclosed", error));
  EXPECT_NE(error.find("does not compile"), std::string::npos);
}

/// A byte-level BPE over "a", "b", "ab", "abb" and the byte-level space
/// "Ġ": merges a+b (rank 0), ab+b (rank 1).
json smallBpe() {
  json vocab = {{"a", 0}, {"b", 1}, {"ab", 2}, {"abb", 3}, {"\xC4\xA0", 4}};
  // The three bytes of 中 (E4 B8 AD) in GPT-2's alphabet: E4 and B8 are
  // printable (their own code points), AD (soft hyphen) is not: the 68
  // unprintable bytes are U+0100 onwards, AD the 68th of them.
  vocab["\xC3\xA4"] = 5; // U+00E4 = byte E4
  vocab["\xC2\xB8"] = 6; // U+00B8 = byte B8
  vocab["\xC5\x83"] = 7; // U+0143 = byte AD (the 68th non-printable)
  return json{
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"},
        {"add_prefix_space", false},
        {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b", "ab b"}}}},
      {"added_tokens",
       json::array({{{"id", 8}, {"content", "<s>"}, {"special", true}}})},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}}};
}

TEST(ByteLevelBpeTest, MergesByRank) {
  std::string error;
  auto bpe = ByteLevelBpe::fromJson(smallBpe(), error);
  ASSERT_TRUE(bpe) << error;
  EXPECT_EQ(bpe->encode("abb", false), (std::vector<int64_t>{3}));
  EXPECT_EQ(bpe->encode("abab", false), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(bpe->encode("ba b", false), (std::vector<int64_t>{1, 0, 4, 1}));
  EXPECT_EQ(bpe->encode("<s>ab", false), (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(bpe->decode({8, 2, 4, 3}, false), "<s>ab abb");
  EXPECT_EQ(bpe->decode({8, 2}, true), "ab");
  EXPECT_EQ(bpe->encode("\xE4\xB8\xAD", false),
            (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(bpe->decode({5, 6}, false), replacement);
  EXPECT_TRUE(bpe->isSpecial(8));
  EXPECT_EQ(bpe->tokenId("<s>"), 8);
  EXPECT_EQ(bpe->size(), 9);
}

TEST(StreamingDetokenizerTest, HoldsHalfCharacters) {
  std::string error;
  auto bpe = ByteLevelBpe::fromJson(smallBpe(), error);
  ASSERT_TRUE(bpe) << error;
  StreamingDetokenizer stream(*bpe, false);
  EXPECT_EQ(stream.push(2), "ab");
  EXPECT_EQ(stream.push(5), "");
  EXPECT_EQ(stream.push(6), "");
  EXPECT_EQ(stream.push(7), "\xE4\xB8\xAD");
  EXPECT_EQ(stream.push(4), " ");
  // A character that never completes comes out at the end, repaired.
  EXPECT_EQ(stream.push(5), "");
  EXPECT_EQ(stream.finish(), replacement);
}

TEST(ByteLevelBpeTest, RefusesWhatItDoesNotImplement) {
  std::string error;
  json withNormalizer = smallBpe();
  withNormalizer["normalizer"] = {{"type", "NFKC"}};
  EXPECT_FALSE(ByteLevelBpe::fromJson(withNormalizer, error));
  EXPECT_NE(error.find("the normalizer 'NFKC' is not supported"),
            std::string::npos)
      << error;
  json metaspace = smallBpe();
  metaspace["decoder"] = {{"type", "Metaspace"}};
  EXPECT_FALSE(ByteLevelBpe::fromJson(metaspace, error));
  EXPECT_NE(error.find("tokenizer.model"), std::string::npos) << error;
  json badMerge = smallBpe();
  badMerge["model"]["merges"] = {"a c"};
  EXPECT_FALSE(ByteLevelBpe::fromJson(badMerge, error));
  EXPECT_NE(error.find("not in the vocabulary"), std::string::npos) << error;
}

TEST(TokenizerTest, LoadsAFolderOrSaysWhy) {
  std::filesystem::path folder =
      std::filesystem::temp_directory_path() /
      ("dtensor-tokenizer-test-" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(folder);
  std::string error;
  EXPECT_FALSE(loadTokenizer(folder.string(), error));
  EXPECT_NE(error.find("has no tokenizer.json and no tokenizer.model"),
            std::string::npos)
      << error;
  std::ofstream(folder / "tokenizer.json") << smallBpe().dump();
  auto tokenizer = loadTokenizer(folder.string(), error);
  ASSERT_TRUE(tokenizer) << error;
  EXPECT_EQ(tokenizer->kind(), "byte-level BPE");
  std::filesystem::remove_all(folder);
}

} // namespace
