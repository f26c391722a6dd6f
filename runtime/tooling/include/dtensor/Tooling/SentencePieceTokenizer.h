//===- SentencePieceTokenizer.h - SentencePiece models ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The `tokenizer.model` of Llama 2 and Mistral through Debian's
// libsentencepiece (the reference implementation itself), with the BOS and
// EOS tokens that the model folder's tokenizer_config.json asks to add.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_SENTENCEPIECETOKENIZER_H
#define DTENSOR_TOOLING_SENTENCEPIECETOKENIZER_H

#include "dtensor/Tooling/Tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
} // namespace sentencepiece

namespace dtensor::tooling {

class SentencePieceTokenizer : public Tokenizer {
public:
  /// Loads `path`; null with `error` set when it is not a model.
  /// `addBos`/`addEos`: what encode(text, true) adds.
  static std::unique_ptr<SentencePieceTokenizer>
  load(const std::string &path, bool addBos, bool addEos, std::string &error);
  ~SentencePieceTokenizer() override;

  std::vector<int64_t> encode(const std::string &text,
                              bool addSpecialTokens) const override;
  std::string decode(const std::vector<int64_t> &ids,
                     bool skipSpecialTokens) const override;
  int64_t size() const override;
  std::optional<int64_t> tokenId(const std::string &token) const override;
  bool isSpecial(int64_t id) const override;
  std::string kind() const override { return "SentencePiece"; }

private:
  SentencePieceTokenizer();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  bool addBos_ = false, addEos_ = false;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_SENTENCEPIECETOKENIZER_H
