//===- SentencePieceTokenizer.cpp - SentencePiece models ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/SentencePieceTokenizer.h"

#include <sentencepiece_processor.h>

namespace dtensor::tooling {

SentencePieceTokenizer::SentencePieceTokenizer()
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer>
SentencePieceTokenizer::load(const std::string &path, bool addBos, bool addEos,
                             std::string &error) {
  std::unique_ptr<SentencePieceTokenizer> tokenizer(
      new SentencePieceTokenizer());
  auto status = tokenizer->processor_->Load(path);
  if (!status.ok()) {
    error = path + ": not a SentencePiece model (" + status.ToString() + ")";
    return nullptr;
  }
  tokenizer->addBos_ = addBos;
  tokenizer->addEos_ = addEos;
  return tokenizer;
}

std::vector<int64_t>
SentencePieceTokenizer::encode(const std::string &text,
                               bool addSpecialTokens) const {
  std::vector<int> pieces;
  // Encode fails only on an unloaded model.
  (void)processor_->Encode(text, &pieces);
  std::vector<int64_t> ids;
  ids.reserve(pieces.size() + 2);
  if (addSpecialTokens && addBos_ && processor_->bos_id() >= 0)
    ids.push_back(processor_->bos_id());
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  if (addSpecialTokens && addEos_ && processor_->eos_id() >= 0)
    ids.push_back(processor_->eos_id());
  return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t> &ids,
                                           bool skipSpecialTokens) const {
  // SentencePiece decodes control tokens (BOS, EOS) to nothing, so
  // skipSpecialTokens changes nothing here.
  (void)skipSpecialTokens;
  std::vector<int> pieces;
  pieces.reserve(ids.size());
  for (int64_t id : ids)
    if (id >= 0 && id < size())
      pieces.push_back(static_cast<int>(id));
  std::string text;
  (void)processor_->Decode(pieces, &text);
  return text;
}

int64_t SentencePieceTokenizer::size() const {
  return processor_->GetPieceSize();
}

std::optional<int64_t>
SentencePieceTokenizer::tokenId(const std::string &token) const {
  int id = processor_->PieceToId(token);
  // PieceToId answers the unknown token's id for any other piece.
  if (id == processor_->unk_id() && token != processor_->IdToPiece(id))
    return std::nullopt;
  return id;
}

bool SentencePieceTokenizer::isSpecial(int64_t id) const {
  return id >= 0 && id < size() &&
         (processor_->IsControl(static_cast<int>(id)) ||
          processor_->IsUnknown(static_cast<int>(id)));
}

} // namespace dtensor::tooling
