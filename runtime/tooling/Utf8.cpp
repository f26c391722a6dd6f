//===- Utf8.cpp - UTF-8 checks and repair for tokenizers ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The well-formed byte sequences of Unicode's table 3-7: the lead byte fixes
// the length and the range of the second byte (narrower after E0, ED, F0 and
// F4, which excludes overlong forms, surrogates and code points past
// U+10FFFF); every later byte is 80..BF.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Utf8.h"

namespace dtensor::tooling {

namespace {

/// The length of the character `lead` starts and the range of its second
/// byte; length 0 for a byte that starts no character.
struct LeadByte {
  int length = 0;
  unsigned char low = 0x80, high = 0xBF;
};

LeadByte classify(unsigned char lead) {
  if (lead < 0x80)
    return {1};
  if (lead < 0xC2)
    return {0};
  if (lead < 0xE0)
    return {2};
  if (lead == 0xE0)
    return {3, 0xA0, 0xBF};
  if (lead == 0xED)
    return {3, 0x80, 0x9F};
  if (lead < 0xF0)
    return {3};
  if (lead == 0xF0)
    return {4, 0x90, 0xBF};
  if (lead < 0xF4)
    return {4};
  if (lead == 0xF4)
    return {4, 0x80, 0x8F};
  return {0};
}

/// How many bytes from `at` form a valid prefix of one character (at least
/// 1 when the lead byte is valid), and whether the character is complete.
size_t validPrefix(std::string_view bytes, size_t at, bool &complete) {
  LeadByte lead = classify(static_cast<unsigned char>(bytes[at]));
  complete = false;
  if (lead.length == 0)
    return 0;
  size_t used = 1;
  for (; used < static_cast<size_t>(lead.length); ++used) {
    if (at + used >= bytes.size())
      return used;
    unsigned char next = static_cast<unsigned char>(bytes[at + used]);
    unsigned char low = used == 1 ? lead.low : 0x80;
    unsigned char high = used == 1 ? lead.high : 0xBF;
    if (next < low || next > high)
      return used;
  }
  complete = true;
  return used;
}

} // namespace

void appendUtf8(uint32_t codePoint, std::string &out) {
  if (codePoint < 0x80) {
    out += static_cast<char>(codePoint);
  } else if (codePoint < 0x800) {
    out += static_cast<char>(0xC0 | (codePoint >> 6));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    out += static_cast<char>(0xE0 | (codePoint >> 12));
    out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (codePoint >> 18));
    out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  }
}

std::string utf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t at = 0;
  while (at < bytes.size()) {
    bool complete = false;
    size_t used = validPrefix(bytes, at, complete);
    if (complete) {
      out.append(bytes.substr(at, used));
      at += used;
      continue;
    }
    // A maximal invalid subpart: a bad lead byte alone, or a valid lead
    // with the continuation bytes that were still valid.
    appendUtf8(0xFFFD, out);
    at += used == 0 ? 1 : used;
  }
  return out;
}

bool isValidUtf8(std::string_view bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    bool complete = false;
    size_t used = validPrefix(bytes, at, complete);
    if (!complete)
      return false;
    at += used;
  }
  return true;
}

size_t unfinishedUtf8Tail(std::string_view bytes) {
  // The last character starts at most 3 bytes before the end.
  size_t first = bytes.size() > 3 ? bytes.size() - 3 : 0;
  for (size_t at = first; at < bytes.size(); ++at) {
    bool complete = false;
    size_t used = validPrefix(bytes, at, complete);
    if (!complete && used > 0 && at + used == bytes.size())
      return used;
  }
  return 0;
}

} // namespace dtensor::tooling
