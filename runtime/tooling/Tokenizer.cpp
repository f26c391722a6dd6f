//===- Tokenizer.cpp - Text to token ids and back -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Llama 2 folder has both files, its tokenizer.json a SentencePiece-like
// BPE (Metaspace, byte fallback) that ByteLevelBpe refuses: then
// tokenizer.model serves, through SentencePiece itself.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Tokenizer.h"

#include "dtensor/Tooling/ByteLevelBpe.h"
#include "dtensor/Tooling/SentencePieceTokenizer.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace dtensor::tooling {

namespace {

bool readJson(const std::string &path, nlohmann::json &document,
              std::string &error) {
  std::ifstream file(path);
  if (!file)
    return false;
  try {
    document = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception &failure) {
    error = path + ": " + failure.what();
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Tokenizer> loadTokenizer(const std::string &directory,
                                         std::string &error) {
  std::string jsonPath = directory + "/tokenizer.json";
  std::string modelPath = directory + "/tokenizer.model";
  std::string jsonError;
  nlohmann::json document;
  if (readJson(jsonPath, document, jsonError)) {
    if (auto bpe = ByteLevelBpe::fromJson(document, jsonError))
      return bpe;
    jsonError = directory + "/" + jsonError;
  }
  if (std::ifstream(modelPath)) {
    nlohmann::json config;
    std::string configError;
    bool addBos = false, addEos = false;
    if (readJson(directory + "/tokenizer_config.json", config, configError)) {
      addBos = config.value("add_bos_token", false);
      addEos = config.value("add_eos_token", false);
    } else if (!configError.empty()) {
      error = configError;
      return nullptr;
    }
    return SentencePieceTokenizer::load(modelPath, addBos, addEos, error);
  }
  error = jsonError.empty() ? directory + " has no tokenizer.json and no "
                                          "tokenizer.model"
                            : jsonError;
  return nullptr;
}

} // namespace dtensor::tooling
