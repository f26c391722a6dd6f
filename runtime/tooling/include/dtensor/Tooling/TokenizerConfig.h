//===- TokenizerConfig.h - A model folder's token settings ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Besides the tokenizer itself, a Hugging Face model folder names the
// tokens that end a sequence (generation_config.json's eos_token_id, else
// tokenizer_config.json's eos_token) and its chat template: a server stops
// generating at those tokens as `transformers`' generate does.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_TOKENIZERCONFIG_H
#define DTENSOR_TOOLING_TOKENIZERCONFIG_H

#include "dtensor/Tooling/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::tooling {

struct TokenizerConfig {
  /// The tokens that end a generated sequence (empty: none named).
  std::vector<int64_t> endOfSequence;
  /// The Jinja source of the chat template ("" when there is none).
  std::string chatTemplate;
  /// tokenizer_config.json's bos_token and eos_token texts ("" when not
  /// given): the template's variables of those names.
  std::string bosToken, eosToken;
};

/// Reads `directory`'s generation_config.json, tokenizer_config.json and
/// chat_template.jinja, where they are. False with `error` set when one of
/// them is not valid JSON or names a token `tokenizer` does not have.
bool readTokenizerConfig(const std::string &directory,
                         const Tokenizer &tokenizer, TokenizerConfig &config,
                         std::string &error);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_TOKENIZERCONFIG_H
