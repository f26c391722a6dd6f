//===- Utf8.h - UTF-8 checks and repair for tokenizers ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tokens are byte strings: a token may end in the middle of a character, so
// decoded text is repaired the way Hugging Face `tokenizers` does it (Rust's
// String::from_utf8_lossy, one U+FFFD per maximal invalid subpart), and a
// stream holds back an unfinished character until its last byte arrives.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_UTF8_H
#define DTENSOR_TOOLING_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dtensor::tooling {

/// The UTF-8 encoding of `codePoint` appended to `out`.
void appendUtf8(uint32_t codePoint, std::string &out);

/// `bytes` with every maximal invalid subpart replaced by U+FFFD, as Rust's
/// String::from_utf8_lossy (and so Hugging Face's decoders) does.
std::string utf8Lossy(std::string_view bytes);

/// True when `bytes` is valid UTF-8.
bool isValidUtf8(std::string_view bytes);

/// How many bytes at the end of `bytes` are the valid start of a character
/// whose remaining bytes have not come yet (0 to 3): a stream emits the rest
/// now and these once the character is complete.
size_t unfinishedUtf8Tail(std::string_view bytes);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_UTF8_H
