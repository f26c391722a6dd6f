//===- Protocol.cpp - JSON requests and answers ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Protocol.h"

#include <nlohmann/json.hpp>

#include <set>

namespace dtensor::server {

namespace {

using nlohmann::json;

/// "a string", "an array", ... for messages.
std::string describe(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "the number " + value.dump();
  }
}

bool refuse(RequestError &error, int status, std::string message) {
  error.status = status;
  error.message = std::move(message);
  return false;
}

} // namespace

bool parseRequest(JobKind kind, const std::string &body, const Limits &limits,
                  Request &request, RequestError &error) {
  json document;
  try {
    document = json::parse(body);
  } catch (const json::parse_error &parseError) {
    // what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 9: ..."; keep the part after the tag.
    std::string what = parseError.what();
    size_t tagEnd = what.find("] ");
    return refuse(
        error, 400,
        "malformed JSON (byte " + std::to_string(parseError.byte) + "): " +
            (tagEnd == std::string::npos ? what : what.substr(tagEnd + 2)));
  }
  if (!document.is_object())
    return refuse(error, 400,
                  "the request must be a JSON object, not " +
                      describe(document));

  bool generate = kind == JobKind::Generate;
  std::set<std::string> known = {"tokens"};
  if (generate)
    known.insert("max_new_tokens");
  else if (limits.hasLogits)
    known.insert("logits");
  for (const auto &item : document.items())
    if (!known.count(item.key())) {
      std::string expected;
      for (const std::string &name : known)
        expected += (expected.empty() ? "" : ", ") + name;
      std::string hint;
      if (item.key() == "logits")
        hint = generate ? ": logits are served by /v1/next_token only"
                        : ": this model has no logits output";
      return refuse(error, 422,
                    "unknown field '" + item.key() + "'" + hint +
                        " (expected: " + expected + ")");
    }

  request = Request();
  request.kind = kind;
  auto tokens = document.find("tokens");
  if (tokens == document.end())
    return refuse(error, 422, "missing field 'tokens' (an array of token ids)");
  if (!tokens->is_array())
    return refuse(error, 422,
                  "'tokens' must be an array of token ids, not " +
                      describe(*tokens));
  if (tokens->empty())
    return refuse(error, 422, "'tokens' is empty: give at least one token id");
  if (static_cast<int64_t>(tokens->size()) > limits.seqLen)
    return refuse(error, 422,
                  "'tokens' has " + std::to_string(tokens->size()) +
                      " ids; this model takes at most " +
                      std::to_string(limits.seqLen) + " (its sequence length)");
  for (size_t i = 0; i < tokens->size(); ++i) {
    const json &id = (*tokens)[i];
    std::string where = "tokens[" + std::to_string(i) + "]";
    if (!id.is_number_integer())
      return refuse(error, 422,
                    where + " must be an integer token id, not " +
                        describe(id));
    // Unsigned JSON numbers above INT64_MAX are out of range too.
    bool inRange =
        id.is_number_unsigned()
            ? id.get<uint64_t>() < static_cast<uint64_t>(limits.vocab)
            : id.get<int64_t>() >= 0 && id.get<int64_t>() < limits.vocab;
    if (!inRange)
      return refuse(error, 422,
                    where + " = " + id.dump() +
                        " is outside the vocabulary [0, " +
                        std::to_string(limits.vocab) + ")");
    request.tokens.push_back(id.get<int64_t>());
  }

  if (generate) {
    auto count = document.find("max_new_tokens");
    if (count == document.end())
      return refuse(error, 422,
                    "missing field 'max_new_tokens' (how many tokens to "
                    "generate, at least 1)");
    if (!count->is_number_integer())
      return refuse(error, 422,
                    "'max_new_tokens' must be an integer, not " +
                        describe(*count));
    // nlohmann/json reads every non-negative integer as unsigned.
    if (!count->is_number_unsigned() || count->get<uint64_t>() < 1)
      return refuse(error, 422,
                    "'max_new_tokens' must be at least 1, not " +
                        count->dump());
    uint64_t wanted = count->get<uint64_t>();
    uint64_t total = request.tokens.size() + wanted;
    if (wanted > static_cast<uint64_t>(limits.seqLen) ||
        total > static_cast<uint64_t>(limits.seqLen))
      return refuse(error, 422,
                    "'tokens' (" + std::to_string(request.tokens.size()) +
                        ") + 'max_new_tokens' (" + count->dump() +
                        ") exceeds the sequence length " +
                        std::to_string(limits.seqLen));
    request.maxNewTokens = static_cast<int64_t>(wanted);
  } else if (auto logits = document.find("logits"); logits != document.end()) {
    if (!logits->is_boolean())
      return refuse(error, 422,
                    "'logits' must be true or false, not " + describe(*logits));
    request.logits = logits->get<bool>();
  }
  return true;
}

std::string answerBody(const Request &request, const JobResult &result) {
  json answer;
  if (request.kind == JobKind::NextToken) {
    answer["next_token"] = result.generated.empty() ? -1 : result.generated[0];
    answer["argmax"] = result.argmax;
    if (request.logits)
      answer["logits"] = result.logits;
  } else {
    answer["generated"] = result.generated;
    std::vector<int64_t> all = request.tokens;
    all.insert(all.end(), result.generated.begin(), result.generated.end());
    answer["tokens"] = all;
  }
  return answer.dump();
}

std::string errorBody(const std::string &message) {
  // Invalid UTF-8 in a message (echoed input) is replaced, never thrown on.
  return json{{"error", message}}.dump(-1, ' ', false,
                                       json::error_handler_t::replace);
}

} // namespace dtensor::server
