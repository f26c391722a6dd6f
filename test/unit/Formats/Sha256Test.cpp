//===- Sha256Test.cpp - SHA-256 against the FIPS 180-4 examples -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Sha256.h"

#include <gtest/gtest.h>

#include <string>

using namespace dtensor::rt;

namespace {

std::string hashOf(const std::string &message) {
  Sha256 sha;
  sha.update(message.data(), message.size());
  return toHex(sha.finish());
}

TEST(Sha256Test, EmptyMessage) {
  EXPECT_EQ(hashOf(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, Abc) {
  EXPECT_EQ(hashOf("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, TwoBlockMessage448Bits) {
  EXPECT_EQ(hashOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, Message896Bits) {
  EXPECT_EQ(hashOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhij"
                   "klmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256Test, MillionAsInOddPieces) {
  const std::string chunk(997, 'a');
  Sha256 sha;
  size_t fed = 0, piece = 1;
  while (fed < 1000000) {
    size_t size = std::min({piece, chunk.size(), size_t(1000000) - fed});
    sha.update(chunk.data(), size);
    fed += size;
    piece = piece * 7 % 991 + 1; // odd sizes, crossing block boundaries
  }
  EXPECT_EQ(toHex(sha.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // Lengths around the 55/56/64-byte padding cases agree with one-shot
  // hashing whatever the split.
  for (size_t length : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    std::string message(length, 'x');
    std::string whole = hashOf(message);
    Sha256 sha;
    sha.update(message.data(), 1);
    sha.update(message.data() + 1, length - 1);
    EXPECT_EQ(toHex(sha.finish()), whole) << length;
  }
  EXPECT_EQ(hashOf(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(Sha256Test, FinishResets) {
  Sha256 sha;
  sha.update("abc", 3);
  sha.finish();
  sha.update("abc", 3);
  EXPECT_EQ(toHex(sha.finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

} // namespace
