//===- UnicodeRegex.h - Pre-tokenizer regular expressions -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pre-tokenizers of byte-level BPE split text with a regular expression
// over Unicode classes (\p{L}, \p{N}, \s), possessive quantifiers and
// look-ahead, which std::regex cannot do: PCRE2 (Debian's libpcre2-dev) in
// UTF mode with Unicode properties, JIT-compiled where the platform allows.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_UNICODEREGEX_H
#define DTENSOR_TOOLING_UNICODEREGEX_H

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtensor::tooling {

class UnicodeRegex {
public:
  /// Compiles `pattern`; null with `error` set when PCRE2 refuses it.
  static std::unique_ptr<UnicodeRegex> compile(const std::string &pattern,
                                               std::string &error);
  ~UnicodeRegex();
  UnicodeRegex(const UnicodeRegex &) = delete;
  UnicodeRegex &operator=(const UnicodeRegex &) = delete;

  /// The [begin, end) byte ranges of the successive non-overlapping
  /// matches in `text` (valid UTF-8), leftmost first; an empty match is
  /// skipped past one character.
  std::vector<std::pair<size_t, size_t>> matches(std::string_view text) const;

private:
  UnicodeRegex() = default;
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

/// `text` cut into pieces by `regex` as `tokenizers`' Split with behavior
/// "Isolated": every match is a piece, and so is the text between matches.
std::vector<std::string_view> splitIsolated(const UnicodeRegex &regex,
                                            std::string_view text);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_UNICODEREGEX_H
