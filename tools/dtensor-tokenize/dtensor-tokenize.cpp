//===- dtensor-tokenize.cpp - Tokenize JSON lines -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reads one JSON object a line on stdin and answers one a line on stdout:
//   {"text": "...", "add_special_tokens": true}
//     -> {"ids": [...], "text": decode(ids), "stream": the text of a
//         StreamingDetokenizer fed the ids one at a time,
//         "stream_chunks": [...], "skip_special": decode(ids, skip)}
//   {"ids": [...]} -> {"text": ..., "stream": ..., "stream_chunks": [...],
//                      "skip_special": ...}
// With --chat-template FILE each line is the variables of the template
// (messages, add_generation_prompt, bos_token, ...) and the answer
// {"text": the rendered prompt, "ids": its ids} or {"error": why}.
// With --bench FILE it instead encodes FILE's text --repeat times and
// prints {"bytes": N, "seconds": S, "tokens": T}.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ChatTemplate.h"
#include "dtensor/Tooling/StreamingDetokenizer.h"
#include "dtensor/Tooling/Tokenizer.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

using dtensor::tooling::StreamingDetokenizer;
using dtensor::tooling::Tokenizer;
using nlohmann::json;

namespace {

/// The decodings of `ids`: whole, streamed, and without special tokens.
void addDecodings(const Tokenizer &tokenizer, const std::vector<int64_t> &ids,
                  json &answer) {
  answer["text"] = tokenizer.decode(ids, false);
  answer["skip_special"] = tokenizer.decode(ids, true);
  StreamingDetokenizer stream(tokenizer, false);
  std::string streamed;
  json chunks = json::array();
  for (int64_t id : ids) {
    std::string piece = stream.push(id);
    chunks.push_back(piece);
    streamed += piece;
  }
  std::string rest = stream.finish();
  chunks.push_back(rest);
  answer["stream"] = streamed + rest;
  answer["stream_chunks"] = chunks;
}

int bench(const Tokenizer &tokenizer, const std::string &path, int repeat) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "dtensor-tokenize: cannot read " << path << "\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string text = buffer.str();
  // Line by line, as requests come: one long string would time the regex
  // on a shape no request has.
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    lines.push_back(line);
  size_t tokens = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i)
    for (const std::string &line : lines)
      tokens += tokenizer.encode(line, false).size();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << json{{"bytes", text.size() * static_cast<size_t>(repeat)},
                    {"seconds", seconds},
                    {"tokens", tokens}}
                   .dump()
            << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Tokenize JSON lines with a model folder's tokenizer"};
  std::string directory, benchFile, templateFile;
  int repeat = 1;
  app.add_option("--tokenizer", directory,
                 "folder with tokenizer.json or tokenizer.model")
      ->required();
  app.add_option("--bench", benchFile,
                 "time the encoding of this file's lines instead");
  app.add_option("--repeat", repeat, "times --bench encodes the file")
      ->check(CLI::PositiveNumber);
  app.add_option("--chat-template", templateFile,
                 "render this Jinja chat template for each line instead");
  CLI11_PARSE(app, argc, argv);

  std::string error;
  std::unique_ptr<Tokenizer> tokenizer =
      dtensor::tooling::loadTokenizer(directory, error);
  if (!tokenizer) {
    std::cerr << "dtensor-tokenize: " << error << "\n";
    return 1;
  }
  if (!benchFile.empty())
    return bench(*tokenizer, benchFile, repeat);
  std::unique_ptr<dtensor::tooling::ChatTemplate> chat;
  if (!templateFile.empty()) {
    std::ifstream file(templateFile);
    std::stringstream source;
    source << file.rdbuf();
    if (!file ||
        !(chat = dtensor::tooling::ChatTemplate::parse(source.str(), error))) {
      std::cerr << "dtensor-tokenize: " << templateFile << ": "
                << (file ? error : "cannot read it") << "\n";
      return 1;
    }
  }

  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty())
      continue;
    json request, answer;
    try {
      request = json::parse(line);
    } catch (const json::exception &failure) {
      std::cerr << "dtensor-tokenize: " << failure.what() << "\n";
      return 1;
    }
    std::vector<int64_t> ids;
    if (chat) {
      std::string text;
      if (chat->render(nlohmann::ordered_json::parse(line), text, error))
        answer = {{"text", text}, {"ids", tokenizer->encode(text, false)}};
      else
        answer = {{"error", error}};
      std::cout << answer.dump(-1, ' ', false, json::error_handler_t::replace)
                << "\n";
      continue;
    }
    if (request.contains("text")) {
      ids = tokenizer->encode(request["text"].get<std::string>(),
                              request.value("add_special_tokens", true));
      answer["ids"] = ids;
    } else {
      ids = request.at("ids").get<std::vector<int64_t>>();
    }
    addDecodings(*tokenizer, ids, answer);
    std::cout << answer.dump(-1, ' ', false, json::error_handler_t::replace)
              << "\n";
  }
  return 0;
}
