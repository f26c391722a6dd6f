//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tokenizer of a Hugging Face model folder, in C++ so that serving
// needs no Python: `tokenizer.json` with a byte-level BPE model (GPT-2,
// Llama 3; ByteLevelBpe.h) or a SentencePiece `tokenizer.model`
// (Llama 2, Mistral; SentencePieceTokenizer.h). Both give the ids and the
// text that Hugging Face `tokenizers` and `sentencepiece` give.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_TOKENIZER_H
#define DTENSOR_TOOLING_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::tooling {

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  /// The ids of `text`; with `addSpecialTokens` the ones the model's
  /// post-processor puts around a sequence (a BOS token, say), as
  /// `tokenizers`' encode(text, add_special_tokens=True) does.
  virtual std::vector<int64_t> encode(const std::string &text,
                                      bool addSpecialTokens) const = 0;

  /// The text of `ids` (invalid UTF-8 replaced by U+FFFD); special tokens
  /// left out with `skipSpecialTokens`. Ids outside the vocabulary are
  /// left out too (validate them with size() first).
  virtual std::string decode(const std::vector<int64_t> &ids,
                             bool skipSpecialTokens) const = 0;

  /// Ids are in [0, size()).
  virtual int64_t size() const = 0;

  /// The id of a token given by its text ("<|eot_id|>"), if it has one.
  virtual std::optional<int64_t> tokenId(const std::string &token) const = 0;

  /// Whether `id` is a special (control) token.
  virtual bool isSpecial(int64_t id) const = 0;

  /// "byte-level BPE" or "SentencePiece", for logs and /health.
  virtual std::string kind() const = 0;
};

/// The tokenizer of a model folder: `tokenizer.json` when it is there,
/// else `tokenizer.model`. Null with `error` set when there is neither or
/// the file uses what is not supported (the message names it).
std::unique_ptr<Tokenizer> loadTokenizer(const std::string &directory,
                                         std::string &error);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_TOKENIZER_H
