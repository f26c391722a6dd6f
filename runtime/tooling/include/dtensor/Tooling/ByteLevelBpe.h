//===- ByteLevelBpe.h - Byte-level BPE of tokenizer.json --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tokenizer of GPT-2, Llama 3 and Qwen2 as Hugging Face `tokenizers`
// runs it from `tokenizer.json`: added tokens are cut out of the text
// first; each remaining segment is normalized (Qwen2's NFC, by utf8proc,
// Debian's Unicode library) and split by the pre-tokenizer's regular
// expressions (UnicodeRegex.h); each piece's bytes become the printable
// characters of GPT-2's byte alphabet, and BPE merges adjacent tokens by
// the rank of their merge until no merge applies. Decoding maps the
// characters back to bytes.
//
// Written here rather than taken from a library: Debian packages no C++
// implementation of `tokenizers` (the Rust crate and its C bindings are not
// in Debian), and the algorithm is small; its results are checked against
// `tokenizers` itself (test/Tools/dtensor-tokenize).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_BYTELEVELBPE_H
#define DTENSOR_TOOLING_BYTELEVELBPE_H

#include "dtensor/Tooling/Tokenizer.h"
#include "dtensor/Tooling/UnicodeRegex.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace dtensor::tooling {

class ByteLevelBpe : public Tokenizer {
public:
  /// The tokenizer `document` (a parsed tokenizer.json) describes; null
  /// with `error` set when it uses a normalizer, pre-tokenizer, model,
  /// post-processor or decoder other than those of byte-level BPE.
  static std::unique_ptr<ByteLevelBpe> fromJson(const nlohmann::json &document,
                                                std::string &error);

  std::vector<int64_t> encode(const std::string &text,
                              bool addSpecialTokens) const override;
  std::string decode(const std::vector<int64_t> &ids,
                     bool skipSpecialTokens) const override;
  int64_t size() const override {
    return static_cast<int64_t>(tokenBytes_.size());
  }
  std::optional<int64_t> tokenId(const std::string &token) const override;
  bool isSpecial(int64_t id) const override { return special_.count(id) != 0; }
  std::string kind() const override { return "byte-level BPE"; }

private:
  ByteLevelBpe() = default;

  /// A token of `added_tokens`: matched in the text before pre-tokenizing.
  struct AddedToken {
    int64_t id = 0;
    std::string content;
    bool leftStrip = false, rightStrip = false;
    bool normalized = false;
  };

  /// One step of the pre-tokenizer: a Split on a regular expression, or
  /// ByteLevel (a space before each piece that has none, then GPT-2's
  /// expression when it uses one).
  struct PreTokenizerStep {
    std::shared_ptr<UnicodeRegex> regex;
    bool addPrefixSpace = false;
  };

  bool readPreTokenizer(const nlohmann::json &config, std::string &error);
  bool readPostProcessor(const nlohmann::json &config, std::string &error);

  /// Appends the ids of `text`, which holds no added token.
  void encodeSegment(std::string_view text, std::vector<int64_t> &ids) const;
  /// Appends the BPE ids of one pre-tokenized piece.
  void encodeWord(std::string_view piece, std::vector<int64_t> &ids) const;

  // GPT-2's alphabet: the character of each byte, as UTF-8.
  std::array<std::string, 256> byteChars_;
  std::unordered_map<std::string, int64_t> vocab_;
  /// (left id << 32 | right id) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> merges_;
  bool ignoreMerges_ = false;
  /// The normalizer NFC (Qwen2's); false: none.
  bool nfc_ = false;
  std::vector<PreTokenizerStep> preTokenizer_;
  std::vector<AddedToken> added_;
  /// The bytes an added token may start with: other positions are skipped.
  std::array<bool, 256> addedFirstBytes_{};
  std::unordered_set<int64_t> special_;
  /// The ids the post-processor puts before and after a sequence.
  std::vector<int64_t> prefixIds_, suffixIds_;
  /// The bytes each id decodes to (empty for an unused id).
  std::vector<std::string> tokenBytes_;
  /// Pieces already merged: text repeats its words.
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_BYTELEVELBPE_H
