//===- StreamingDetokenizer.cpp - Text of a token stream ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The window algorithm of Hugging Face's text-generation-inference: decode
// the window with and without the new tokens; the difference is new text
// unless it ends in U+FFFD, which both tokenizers put for bytes that do not
// yet form a character, so the tokens wait for the next one.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/StreamingDetokenizer.h"

namespace dtensor::tooling {

namespace {
bool endsInReplacement(const std::string &text) {
  static const std::string replacement = "\xEF\xBF\xBD";
  return text.size() >= replacement.size() &&
         text.compare(text.size() - replacement.size(), replacement.size(),
                      replacement) == 0;
}
} // namespace

std::string StreamingDetokenizer::push(int64_t id) {
  ids_.push_back(id);
  std::vector<int64_t> emitted(ids_.begin() + prefix_, ids_.begin() + read_);
  std::vector<int64_t> window(ids_.begin() + prefix_, ids_.end());
  std::string before = tokenizer_.decode(emitted, skipSpecialTokens_);
  std::string after = tokenizer_.decode(window, skipSpecialTokens_);
  if (after.size() <= before.size() || endsInReplacement(after) ||
      after.compare(0, before.size(), before) != 0)
    return "";
  prefix_ = read_;
  read_ = ids_.size();
  return after.substr(before.size());
}

std::string StreamingDetokenizer::finish() {
  std::vector<int64_t> emitted(ids_.begin() + prefix_, ids_.begin() + read_);
  std::vector<int64_t> window(ids_.begin() + prefix_, ids_.end());
  std::string before = tokenizer_.decode(emitted, skipSpecialTokens_);
  std::string after = tokenizer_.decode(window, skipSpecialTokens_);
  prefix_ = read_ = ids_.size();
  if (after.size() <= before.size() ||
      after.compare(0, before.size(), before) != 0)
    return after.size() > before.size() ? after : "";
  return after.substr(before.size());
}

} // namespace dtensor::tooling
