//===- TokenizerConfig.cpp - A model folder's token settings ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/TokenizerConfig.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace dtensor::tooling {

namespace {

using nlohmann::json;

/// Parses `path` into `document`; true with a null document when the file
/// is not there.
bool readOptionalJson(const std::string &path, json &document,
                      std::string &error) {
  std::ifstream file(path);
  if (!file)
    return true;
  try {
    document = json::parse(file);
  } catch (const json::exception &failure) {
    error = path + ": " + failure.what();
    return false;
  }
  return true;
}

/// A token given as "text" or {"content": "text", ...}.
std::string tokenText(const json &token) {
  if (token.is_string())
    return token.get<std::string>();
  if (token.is_object() && token.contains("content") &&
      token["content"].is_string())
    return token["content"].get<std::string>();
  return "";
}

} // namespace

bool readTokenizerConfig(const std::string &directory,
                         const Tokenizer &tokenizer, TokenizerConfig &config,
                         std::string &error) {
  config = TokenizerConfig();
  json generation, tokenizerConfig;
  if (!readOptionalJson(directory + "/generation_config.json", generation,
                        error) ||
      !readOptionalJson(directory + "/tokenizer_config.json", tokenizerConfig,
                        error))
    return false;

  if (generation.is_object() && generation.contains("eos_token_id")) {
    const json &eos = generation["eos_token_id"];
    for (const json &id : eos.is_array() ? eos : json::array({eos}))
      if (id.is_number_integer())
        config.endOfSequence.push_back(id.get<int64_t>());
  } else if (tokenizerConfig.is_object() &&
             tokenizerConfig.contains("eos_token")) {
    std::string text = tokenText(tokenizerConfig["eos_token"]);
    if (!text.empty()) {
      std::optional<int64_t> id = tokenizer.tokenId(text);
      if (!id) {
        error = directory + "/tokenizer_config.json: the eos_token '" + text +
                "' is not a token of the tokenizer";
        return false;
      }
      config.endOfSequence.push_back(*id);
    }
  }

  if (tokenizerConfig.is_object()) {
    if (tokenizerConfig.contains("bos_token"))
      config.bosToken = tokenText(tokenizerConfig["bos_token"]);
    if (tokenizerConfig.contains("eos_token"))
      config.eosToken = tokenText(tokenizerConfig["eos_token"]);
  }

  // transformers 4.43 and later save the template in a file of its own.
  std::ifstream templateFile(directory + "/chat_template.jinja");
  if (templateFile) {
    std::stringstream text;
    text << templateFile.rdbuf();
    config.chatTemplate = text.str();
  } else if (tokenizerConfig.is_object() &&
             tokenizerConfig.contains("chat_template") &&
             tokenizerConfig["chat_template"].is_string()) {
    config.chatTemplate = tokenizerConfig["chat_template"].get<std::string>();
  }
  return true;
}

} // namespace dtensor::tooling
