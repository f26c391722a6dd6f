//===- UnicodeRegex.cpp - Pre-tokenizer regular expressions ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PCRE2_UCP makes \s, \d, \w and the POSIX classes Unicode-aware, as in the
// Oniguruma regexes of `tokenizers`.
//
//===----------------------------------------------------------------------===//

#define PCRE2_CODE_UNIT_WIDTH 8
#include "dtensor/Tooling/UnicodeRegex.h"

#include <pcre2.h>

namespace dtensor::tooling {

struct UnicodeRegex::Compiled {
  pcre2_code *code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

std::unique_ptr<UnicodeRegex> UnicodeRegex::compile(const std::string &pattern,
                                                    std::string &error) {
  int status = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
      PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &status, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(status, message, sizeof(message));
    error = "the regular expression '" + pattern + "' does not compile (at " +
            std::to_string(offset) +
            "): " + reinterpret_cast<const char *>(message);
    return nullptr;
  }
  // The JIT is an optimisation: without it (an unsupported platform or
  // SELinux refusing executable memory) matching is slower, not different.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::unique_ptr<UnicodeRegex> regex(new UnicodeRegex());
  regex->compiled_ = std::make_unique<Compiled>();
  regex->compiled_->code = code;
  return regex;
}

UnicodeRegex::~UnicodeRegex() = default;

std::vector<std::pair<size_t, size_t>>
UnicodeRegex::matches(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> found;
  pcre2_match_data *data =
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  while (at <= text.size()) {
    int count = pcre2_match(compiled_->code, subject, text.size(), at,
                            PCRE2_NO_UTF_CHECK, data, nullptr);
    if (count < 0)
      break;
    PCRE2_SIZE *vector = pcre2_get_ovector_pointer(data);
    size_t begin = vector[0], end = vector[1];
    if (end > begin) {
      found.emplace_back(begin, end);
      at = end;
      continue;
    }
    // An empty match: go on after the character it stands before.
    at = begin + 1;
    while (at < text.size() &&
           (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
      ++at;
  }
  pcre2_match_data_free(data);
  return found;
}

std::vector<std::string_view> splitIsolated(const UnicodeRegex &regex,
                                            std::string_view text) {
  std::vector<std::string_view> pieces;
  size_t last = 0;
  for (auto [begin, end] : regex.matches(text)) {
    if (begin > last)
      pieces.push_back(text.substr(last, begin - last));
    pieces.push_back(text.substr(begin, end - begin));
    last = end;
  }
  if (last < text.size())
    pieces.push_back(text.substr(last));
  return pieces;
}

} // namespace dtensor::tooling
