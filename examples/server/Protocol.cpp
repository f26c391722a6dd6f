//===- Protocol.cpp - JSON requests and answers ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Protocol.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
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

/// Refuses the first member of `document` not in `known`, naming the
/// members it takes; true when it did. The native endpoints answer 422;
/// the OpenAI ones 400, as OpenAI's API does.
bool refuseUnknownFields(const json &document,
                         const std::set<std::string> &known,
                         RequestError &error, int status = 422) {
  for (const auto &item : document.items())
    if (!known.count(item.key())) {
      std::string expected;
      for (const std::string &name : known)
        expected += (expected.empty() ? "" : ", ") + name;
      return !refuse(error, status,
                     "unknown field '" + item.key() +
                         "' (expected: " + expected + ")");
    }
  return false;
}

/// The length's name in messages: the sequence length, or with a KV cache
/// the positions of a cache slot.
std::string lengthName(const Limits &limits) {
  return limits.cache ? "the positions of a cache slot" : "its sequence length";
}

/// "the sequence length 16", or with a KV cache "the 64 positions of a
/// cache slot".
std::string lengthBound(const Limits &limits) {
  return limits.cache ? "the " + std::to_string(limits.seqLen) +
                            " positions of a cache slot"
                      : "the sequence length " + std::to_string(limits.seqLen);
}

/// A non-empty array of ids in [0, vocab), at most seqLen of them.
bool readTokens(const json &tokens, const std::string &name,
                const Limits &limits, std::vector<int64_t> &ids,
                RequestError &error) {
  if (tokens.empty())
    return refuse(error, 422,
                  "'" + name + "' is empty: give at least one token id");
  if (static_cast<int64_t>(tokens.size()) > limits.seqLen)
    return refuse(error, 422,
                  "'" + name + "' has " + std::to_string(tokens.size()) +
                      " ids; this model takes at most " +
                      std::to_string(limits.seqLen) + " (" +
                      lengthName(limits) + ")");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const json &id = tokens[i];
    std::string where = name + "[" + std::to_string(i) + "]";
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
    ids.push_back(id.get<int64_t>());
  }
  return true;
}

/// Parses `body` as a JSON object (400 otherwise).
bool parseObject(const std::string &body, json &document, RequestError &error) {
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
  } catch (const json::out_of_range &rangeError) {
    // A number beyond a double (1e999) is out_of_range, not a parse_error:
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    std::string what = rangeError.what();
    size_t tagEnd = what.find("] ");
    return refuse(error, 400,
                  "malformed JSON: " + (tagEnd == std::string::npos
                                            ? what
                                            : what.substr(tagEnd + 2)));
  }
  if (!document.is_object())
    return refuse(error, 400,
                  "the request must be a JSON object, not " +
                      describe(document));
  return true;
}

} // namespace

bool parseRequest(JobKind kind, const std::string &body, const Limits &limits,
                  Request &request, RequestError &error) {
  json document;
  if (!parseObject(body, document, error))
    return false;

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
  if (!readTokens(*tokens, "tokens", limits, request.tokens, error))
    return false;

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
                        ") exceeds " + lengthBound(limits));
    request.maxNewTokens = static_cast<int64_t>(wanted);
  } else if (auto logits = document.find("logits"); logits != document.end()) {
    if (!logits->is_boolean())
      return refuse(error, 422,
                    "'logits' must be true or false, not " + describe(*logits));
    request.logits = logits->get<bool>();
  }
  return true;
}

namespace {

/// 2, 0.5, 1e+06: a bound as people write it.
std::string bound(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// A number field in [low, high] (`open`: low excluded) into `value`.
bool readNumber(const json &document, const char *name, double low, double high,
                bool open, double &value, RequestError &error) {
  auto field = document.find(name);
  if (field == document.end() || field->is_null())
    return true;
  if (!field->is_number() || field->get<double>() < low ||
      field->get<double>() > high || (open && field->get<double>() == low))
    return refuse(error, 400,
                  std::string("'") + name + "' must be a number in " +
                      (open ? "(" : "[") + bound(low) + ", " + bound(high) +
                      "], not " +
                      (field->is_number() ? field->dump() : describe(*field)));
  value = field->get<double>();
  return true;
}

/// An integer field in [low, high] into `value`.
bool readInteger(const json &document, const char *name, int64_t low,
                 int64_t high, int64_t &value, RequestError &error) {
  auto field = document.find(name);
  if (field == document.end() || field->is_null())
    return true;
  if (!field->is_number_integer() ||
      (field->is_number_unsigned()
           ? field->get<uint64_t>() > static_cast<uint64_t>(high)
           : field->get<int64_t>() < low || field->get<int64_t>() > high))
    return refuse(error, 400,
                  std::string("'") + name + "' must be an integer in [" +
                      std::to_string(low) + ", " + std::to_string(high) +
                      "], not " +
                      (field->is_number() ? field->dump() : describe(*field)));
  value = field->get<int64_t>();
  return true;
}

bool parseSampling(const json &document, const Limits &limits, Request &request,
                   RequestError &error) {
  tooling::SamplingParams params;
  // OpenAI's default, 1, where the artifact can sample; an argmax-only
  // artifact decodes greedily a request that leaves it out.
  bool canSample = limits.hasLogits;
  params.temperature = canSample ? 1 : 0;
  double topK = 0;
  int64_t topKValue = 0, seed = -1, n = 1, logprobs = -1;
  if (!readNumber(document, "temperature", 0, 2, false, params.temperature,
                  error) ||
      !readNumber(document, "top_p", 0, 1, true, params.topP, error) ||
      !readNumber(document, "min_p", 0, 1, false, params.minP, error) ||
      !readNumber(document, "presence_penalty", -2, 2, false,
                  params.presencePenalty, error) ||
      !readNumber(document, "frequency_penalty", -2, 2, false,
                  params.frequencyPenalty, error) ||
      !readNumber(document, "repetition_penalty", 0, 1e6, true,
                  params.repetitionPenalty, error) ||
      !readInteger(document, "top_k", -1, limits.vocab, topKValue, error) ||
      !readInteger(document, "seed", INT64_MIN, INT64_MAX, seed, error) ||
      !readInteger(document, "n", 1, kMaxChoices, n, error) ||
      !readInteger(document, "logprobs", 0, kMaxLogprobs, logprobs, error))
    return false;
  (void)topK;
  params.topK = topKValue;
  if (auto bias = document.find("logit_bias");
      bias != document.end() && !bias->is_null()) {
    if (!bias->is_object())
      return refuse(error, 400,
                    "'logit_bias' must be an object of token id -> bias, "
                    "not " +
                        describe(*bias));
    for (const auto &item : bias->items()) {
      char *end = nullptr;
      long long id = std::strtoll(item.key().c_str(), &end, 10);
      if (item.key().empty() || *end != '\0' || id < 0 || id >= limits.vocab)
        return refuse(error, 400,
                      "'logit_bias' key '" + item.key() +
                          "' is not a token id in [0, " +
                          std::to_string(limits.vocab) + ")");
      if (!item.value().is_number() || item.value().get<double>() < -100 ||
          item.value().get<double>() > 100)
        return refuse(error, 400,
                      "'logit_bias' of " + item.key() +
                          " must be a number in [-100, 100]");
      params.logitBias[id] = item.value().get<double>();
    }
  }
  // Unseeded requests draw from a seed of their own.
  params.seed =
      seed >= 0 || document.contains("seed")
          ? static_cast<uint64_t>(seed)
          : std::random_device()() * 0x100000000ull + std::random_device()();
  request.n = n;
  request.logprobs = static_cast<int>(logprobs);
  bool needsLogits = !params.greedyArgmax() || logprobs >= 0;
  if (!canSample) {
    const char *why =
        limits.cache
            ? "the KV-cache steps of this artifact return their argmax only; "
              "compile a plan of gen_model_plan --kv-cache --logits-output"
            : "this artifact has no logits output; export with "
              "dtensor-export --next-token, or gen_model_plan "
              "--logits-output";
    if (params.temperature != 0)
      return refuse(error, 422,
                    std::string("only greedy decoding is served: "
                                "'temperature' must be 0 (sampling needs the "
                                "logits: ") +
                        why + ")");
    if (n != 1)
      return refuse(error, 422,
                    std::string("'n' must be 1: one completion per request "
                                "(several need sampling, which needs the "
                                "logits: ") +
                        why + ")");
    if (needsLogits)
      return refuse(error, 422,
                    std::string("penalties, logit_bias and logprobs need the "
                                "logits: ") +
                        why);
  }
  if (request.stream && n != 1)
    return refuse(error, 422,
                  "'n' > 1 is served without streaming only: set 'stream' to "
                  "false");
  if (params.temperature != 0 || !params.greedyArgmax())
    request.sampling = params;
  return true;
}

} // namespace

bool parseCompletion(const std::string &body, const Limits &limits,
                     Request &request, RequestError &error,
                     const tooling::Tokenizer *tokenizer) {
  json document;
  if (!parseObject(body, document, error))
    return false;
  static const std::set<std::string> known = {"echo",
                                              "frequency_penalty",
                                              "logit_bias",
                                              "logprobs",
                                              "max_tokens",
                                              "min_p",
                                              "model",
                                              "n",
                                              "presence_penalty",
                                              "prompt",
                                              "repetition_penalty",
                                              "seed",
                                              "stop",
                                              "stream",
                                              "temperature",
                                              "top_k",
                                              "top_p",
                                              "user"};
  if (refuseUnknownFields(document, known, error, 400))
    return false;
  request = Request();
  request.kind = JobKind::Completion;
  if (auto model = document.find("model"); model != document.end()) {
    if (!model->is_string())
      return refuse(error, 422,
                    "'model' must be a string, not " + describe(*model));
    request.model = model->get<std::string>();
  }
  auto prompt = document.find("prompt");
  const char *promptKinds =
      tokenizer ? "a string or an array of token ids" : "an array of token ids";
  if (prompt == document.end())
    return refuse(error, 422,
                  std::string("missing field 'prompt' (") + promptKinds + ")");
  const char *noTokenizer =
      "this model has no tokenizer: give 'prompt' as an array of token ids";
  // [[ids]] or ["text"]: a batch of one prompt. More prompts per request
  // are not served.
  const json *ids = &*prompt;
  std::string name = "prompt";
  if (prompt->is_array() && !prompt->empty() &&
      ((*prompt)[0].is_array() || (*prompt)[0].is_string())) {
    if ((*prompt)[0].is_string() && !tokenizer)
      return refuse(error, 422, noTokenizer);
    if (prompt->size() != 1)
      return refuse(error, 422,
                    "'prompt' holds " + std::to_string(prompt->size()) +
                        " prompts; this server takes one per request");
    ids = &(*prompt)[0];
    name = "prompt[0]";
  }
  json encoded;
  if (ids->is_string()) {
    if (!tokenizer)
      return refuse(error, 422, noTokenizer);
    request.promptText = ids->get<std::string>();
    encoded = tokenizer->encode(request.promptText, true);
    ids = &encoded;
  } else if (!ids->is_array()) {
    return refuse(error, 422,
                  "'" + name + "' must be " + promptKinds + ", not " +
                      describe(*ids));
  }
  if (!readTokens(*ids, name, limits, request.tokens, error))
    return false;
  if (tokenizer && !ids->empty() && &*ids != &encoded)
    request.promptText = tokenizer->decode(request.tokens, true);

  uint64_t wanted = 16; // OpenAI's default
  std::string wantedText = "16, the default";
  if (auto count = document.find("max_tokens"); count != document.end()) {
    if (!count->is_number_unsigned() || count->get<uint64_t>() < 1)
      return refuse(
          error, 422,
          "'max_tokens' must be an integer of at least 1, not " +
              (count->is_number() ? count->dump() : describe(*count)));
    wanted = count->get<uint64_t>();
    wantedText = count->dump();
  }
  if (wanted > static_cast<uint64_t>(limits.seqLen) ||
      request.tokens.size() + wanted > static_cast<uint64_t>(limits.seqLen))
    return refuse(error, 422,
                  "the prompt (" + std::to_string(request.tokens.size()) +
                      " tokens) + 'max_tokens' (" + wantedText + ") exceeds " +
                      lengthBound(limits));
  request.maxNewTokens = static_cast<int64_t>(wanted);
  if (auto stream = document.find("stream"); stream != document.end()) {
    if (!stream->is_boolean())
      return refuse(error, 422,
                    "'stream' must be true or false, not " + describe(*stream));
    request.stream = stream->get<bool>();
  }
  if (auto echo = document.find("echo");
      echo != document.end() && !echo->is_null()) {
    if (!echo->is_boolean())
      return refuse(error, 422,
                    "'echo' must be true or false, not " + describe(*echo));
    if (echo->get<bool>() && !tokenizer)
      return refuse(error, 422,
                    "'echo' needs a tokenizer, which this model has not "
                    "(start the server with --tokenizer DIR)");
    request.echo = echo->get<bool>();
  }
  if (auto stop = document.find("stop");
      stop != document.end() && !stop->is_null()) {
    json list = stop->is_array() ? *stop : json::array({*stop});
    for (size_t i = 0; i < list.size(); ++i) {
      const json &id = list[i];
      std::string where = "stop[" + std::to_string(i) + "]";
      if (id.is_string()) {
        if (!tokenizer)
          return refuse(error, 422,
                        "stop strings need a tokenizer, which this model has "
                        "not: give 'stop' as token ids");
        if (id.get<std::string>().empty())
          return refuse(error, 422, where + " is an empty string");
        request.stopStrings.push_back(id.get<std::string>());
        continue;
      }
      if (!id.is_number_integer() ||
          (id.is_number_unsigned()
               ? id.get<uint64_t>() >= static_cast<uint64_t>(limits.vocab)
               : id.get<int64_t>() < 0))
        return refuse(error, 422,
                      where + " must be " + (tokenizer ? "a string or " : "") +
                          "a token id in [0, " + std::to_string(limits.vocab) +
                          "), not " +
                          (id.is_number() ? id.dump() : describe(id)));
      request.stop.push_back(id.get<int64_t>());
    }
  }
  return parseSampling(document, limits, request, error);
}

namespace {
json completionJson(const CompletionMeta &meta, json choice) {
  if (choice.is_null())
    return json{{"id", meta.id},
                {"object", "text_completion"},
                {"created", meta.created},
                {"model", meta.model}};
  return json{{"id", meta.id},
              {"object", "text_completion"},
              {"created", meta.created},
              {"model", meta.model},
              {"choices", json::array({std::move(choice)})}};
}
} // namespace

json logprobsJson(const std::vector<TokenLogprobs> &entries,
                  const std::vector<int64_t> &tokens,
                  const tooling::Tokenizer *tokenizer, size_t offset) {
  auto text = [&](int64_t id) {
    return tokenizer ? tokenizer->decode({id}, false) : std::to_string(id);
  };
  json result = {{"tokens", json::array()},
                 {"token_logprobs", json::array()},
                 {"top_logprobs", json::array()},
                 {"text_offset", json::array()}};
  for (size_t i = 0; i < entries.size() && i < tokens.size(); ++i) {
    std::string token = text(tokens[i]);
    result["tokens"].push_back(token);
    result["token_logprobs"].push_back(entries[i].logprob);
    json top = json::object();
    for (const auto &[id, logprob] : entries[i].top)
      top[text(id)] = logprob;
    result["top_logprobs"].push_back(top);
    result["text_offset"].push_back(offset);
    offset += token.size();
  }
  return result;
}

std::string completionBody(const Request &request, const JobResult &result,
                           const CompletionMeta &meta,
                           const std::string &text) {
  return completionBody(request, {{&result, text}}, meta, nullptr);
}

std::string completionBody(const Request &request,
                           const std::vector<ChoiceOutput> &choices,
                           const CompletionMeta &meta,
                           const tooling::Tokenizer *tokenizer) {
  json answer = completionJson(meta, nullptr);
  answer["choices"] = json::array();
  size_t prompt = request.tokens.size(), completion = 0;
  std::string promptText = request.echo ? request.promptText : "";
  for (size_t i = 0; i < choices.size(); ++i) {
    const JobResult &result = *choices[i].result;
    json logprobs = nullptr;
    if (request.logprobs >= 0)
      logprobs = logprobsJson(result.logprobs, result.generated, tokenizer,
                              promptText.size());
    answer["choices"].push_back({{"index", i},
                                 {"text", promptText + choices[i].text},
                                 {"token_ids", result.generated},
                                 {"logprobs", logprobs},
                                 {"finish_reason", result.finishReason}});
    completion += result.generated.size();
  }
  answer["usage"] = {{"prompt_tokens", prompt},
                     {"completion_tokens", completion},
                     {"total_tokens", prompt + completion}};
  return answer.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string completionEvent(const CompletionMeta &meta,
                            const std::vector<int64_t> &tokens,
                            const std::string &finishReason,
                            const std::string &text,
                            const std::vector<TokenLogprobs> *logprobs,
                            const tooling::Tokenizer *tokenizer) {
  json choice = {{"index", 0},
                 {"text", text},
                 {"token_ids", tokens},
                 {"logprobs", nullptr},
                 {"finish_reason", nullptr}};
  if (logprobs)
    choice["logprobs"] = logprobsJson(*logprobs, tokens, tokenizer, 0);
  if (!finishReason.empty())
    choice["finish_reason"] = finishReason;
  return "data: " +
         completionJson(meta, std::move(choice))
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

std::string streamErrorEvent(int status, const std::string &message) {
  json event = {
      {"error",
       {{"message", message}, {"type", "server_error"}, {"code", status}}}};
  return "data: " + event.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
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

bool parseChat(const std::string &body, const Limits &limits,
               const ChatSetup &setup, Request &request, RequestError &error) {
  if (!setup.tokenizer || !setup.chatTemplate)
    return refuse(error, 404,
                  setup.tokenizer
                      ? "/v1/chat/completions needs a chat template, which "
                        "the --tokenizer folder has not (tokenizer_config."
                        "json's chat_template or chat_template.jinja)"
                      : "/v1/chat/completions needs a tokenizer and its chat "
                        "template: start the server with --tokenizer DIR");
  json document;
  if (!parseObject(body, document, error))
    return false;
  // The messages, rendered; the rest as a completion's fields.
  auto messages = document.find("messages");
  if (messages == document.end() || !messages->is_array() || messages->empty())
    return refuse(error, 422,
                  "'messages' must be a non-empty array of {\"role\": ..., "
                  "\"content\": ...}");
  nlohmann::ordered_json rendered = nlohmann::ordered_json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    const json &message = (*messages)[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!message.is_object() || !message.contains("role") ||
        !message["role"].is_string())
      return refuse(error, 422, where + " must be an object with a 'role'");
    nlohmann::ordered_json entry = {{"role", message["role"]}};
    const json &content = message.value("content", json());
    if (content.is_string()) {
      entry["content"] = content;
    } else if (content.is_array()) {
      // OpenAI's content parts: the text ones, joined.
      std::string text;
      for (const json &part : content) {
        if (!part.is_object() || part.value("type", "") != "text" ||
            !part.contains("text") || !part["text"].is_string())
          return refuse(error, 422,
                        where + ": only text content parts are served");
        text += part["text"].get<std::string>();
      }
      entry["content"] = text;
    } else if (!content.is_null()) {
      return refuse(error, 422,
                    where + "'s content must be a string or text parts, not " +
                        describe(content));
    } else {
      entry["content"] = nullptr;
    }
    if (message.contains("name"))
      entry["name"] = message["name"];
    rendered.push_back(std::move(entry));
  }
  nlohmann::ordered_json variables = {{"messages", rendered},
                                      {"add_generation_prompt", true},
                                      {"bos_token", setup.bosToken},
                                      {"eos_token", setup.eosToken}};
  std::string text, why;
  if (!setup.chatTemplate->render(variables, text, why))
    return refuse(error, 422, "the chat template refused the messages: " + why);

  json completion = json::object();
  for (const auto &item : document.items()) {
    const std::string &key = item.key();
    if (key == "messages" || key == "logprobs" || key == "top_logprobs" ||
        key == "max_completion_tokens")
      continue;
    if (key == "prompt" || key == "echo")
      return refuse(error, 400,
                    "unknown field '" + key +
                        "' (a completions field: "
                        "/v1/chat/completions takes 'messages')");
    completion[key] = item.value();
  }
  if (auto count = document.find("max_completion_tokens");
      count != document.end() && !document.contains("max_tokens"))
    completion["max_tokens"] = *count;
  if (auto logprobs = document.find("logprobs");
      logprobs != document.end() && !logprobs->is_null()) {
    if (!logprobs->is_boolean())
      return refuse(error, 400,
                    "'logprobs' must be true or false, not " +
                        describe(*logprobs));
    if (logprobs->get<bool>())
      completion["logprobs"] = document.value("top_logprobs", json(0));
  }
  if (document.contains("top_logprobs") && !completion.contains("logprobs"))
    return refuse(error, 400, "'top_logprobs' needs 'logprobs': true");
  completion["prompt"] = setup.tokenizer->encode(text, false);
  if (!parseCompletion(completion.dump(), limits, request, error,
                       setup.tokenizer))
    return false;
  request.promptText = text;
  request.chat = true;
  return true;
}

namespace {

/// Chat logprobs: {"content": [{"token", "logprob", "bytes",
/// "top_logprobs": [{"token", "logprob", "bytes"}]}]}.
json chatLogprobs(const std::vector<TokenLogprobs> &entries,
                  const std::vector<int64_t> &tokens,
                  const tooling::Tokenizer *tokenizer) {
  auto entry = [&](int64_t id, double logprob) {
    std::string text =
        tokenizer ? tokenizer->decode({id}, false) : std::to_string(id);
    std::vector<int> bytes(text.begin(), text.end());
    for (int &byte : bytes)
      byte &= 0xFF;
    return json{{"token", text}, {"logprob", logprob}, {"bytes", bytes}};
  };
  json content = json::array();
  for (size_t i = 0; i < entries.size() && i < tokens.size(); ++i) {
    json item = entry(tokens[i], entries[i].logprob);
    item["top_logprobs"] = json::array();
    for (const auto &[id, logprob] : entries[i].top)
      item["top_logprobs"].push_back(entry(id, logprob));
    content.push_back(std::move(item));
  }
  return json{{"content", content}};
}

} // namespace

std::string chatBody(const Request &request,
                     const std::vector<ChoiceOutput> &choices,
                     const CompletionMeta &meta,
                     const tooling::Tokenizer *tokenizer) {
  json answer = {{"id", meta.id},
                 {"object", "chat.completion"},
                 {"created", meta.created},
                 {"model", meta.model},
                 {"choices", json::array()}};
  size_t completion = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const JobResult &result = *choices[i].result;
    json logprobs = nullptr;
    if (request.logprobs >= 0)
      logprobs = chatLogprobs(result.logprobs, result.generated, tokenizer);
    answer["choices"].push_back(
        {{"index", i},
         {"message", {{"role", "assistant"}, {"content", choices[i].text}}},
         {"token_ids", result.generated},
         {"logprobs", logprobs},
         {"finish_reason", result.finishReason}});
    completion += result.generated.size();
  }
  size_t prompt = request.tokens.size();
  answer["usage"] = {{"prompt_tokens", prompt},
                     {"completion_tokens", completion},
                     {"total_tokens", prompt + completion}};
  return answer.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string chatEvent(const CompletionMeta &meta, bool first,
                      const std::vector<int64_t> &tokens,
                      const std::string &text, const std::string &finishReason,
                      const std::vector<TokenLogprobs> *logprobs,
                      const tooling::Tokenizer *tokenizer) {
  json delta = json::object();
  if (first)
    delta = {{"role", "assistant"}, {"content", ""}};
  else if (finishReason.empty() || !text.empty())
    delta["content"] = text;
  json choice = {{"index", 0},
                 {"delta", delta},
                 {"token_ids", tokens},
                 {"logprobs", nullptr},
                 {"finish_reason", nullptr}};
  if (logprobs)
    choice["logprobs"] = chatLogprobs(*logprobs, tokens, tokenizer);
  if (!finishReason.empty())
    choice["finish_reason"] = finishReason;
  json event = {{"id", meta.id},
                {"object", "chat.completion.chunk"},
                {"created", meta.created},
                {"model", meta.model},
                {"choices", json::array({std::move(choice)})}};
  return "data: " + event.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

bool tokenizeAnswer(const std::string &body, const Limits &limits,
                    const tooling::Tokenizer &tokenizer, std::string &answer,
                    RequestError &error) {
  json document;
  if (!parseObject(body, document, error))
    return false;
  if (refuseUnknownFields(document, {"add_special_tokens", "model", "prompt"},
                          error))
    return false;
  auto prompt = document.find("prompt");
  if (prompt == document.end() || !prompt->is_string())
    return refuse(error, 422,
                  "'prompt' must be a string, not " +
                      (prompt == document.end() ? std::string("missing")
                                                : describe(*prompt)));
  bool special = true;
  if (auto add = document.find("add_special_tokens"); add != document.end()) {
    if (!add->is_boolean())
      return refuse(error, 422,
                    "'add_special_tokens' must be true or false, not " +
                        describe(*add));
    special = add->get<bool>();
  }
  std::vector<int64_t> ids =
      tokenizer.encode(prompt->get<std::string>(), special);
  answer = json{{"tokens", ids},
                {"count", ids.size()},
                {"max_model_len", limits.seqLen}}
               .dump();
  return true;
}

bool detokenizeAnswer(const std::string &body, const Limits &limits,
                      const tooling::Tokenizer &tokenizer, std::string &answer,
                      RequestError &error) {
  json document;
  if (!parseObject(body, document, error))
    return false;
  if (refuseUnknownFields(document, {"model", "tokens"}, error))
    return false;
  auto tokens = document.find("tokens");
  if (tokens == document.end() || !tokens->is_array())
    return refuse(error, 422,
                  "'tokens' must be an array of token ids, not " +
                      (tokens == document.end() ? std::string("missing")
                                                : describe(*tokens)));
  // Any number of ids (no sequence length applies), each in the
  // tokenizer's vocabulary or the model's, whichever is larger.
  Limits any = limits;
  any.seqLen = static_cast<int64_t>(tokens->size()) + 1;
  any.vocab = std::max(limits.vocab, tokenizer.size());
  std::vector<int64_t> ids;
  if (!tokens->empty() && !readTokens(*tokens, "tokens", any, ids, error))
    return false;
  answer = json{{"prompt", tokenizer.decode(ids, false)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
  return true;
}

std::string errorBody(const std::string &message) {
  // Invalid UTF-8 in a message (echoed input) is replaced, never thrown on.
  return json{{"error", message}}.dump(-1, ' ', false,
                                       json::error_handler_t::replace);
}

} // namespace dtensor::server
