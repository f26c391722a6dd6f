//===- dtensor-sample.cpp - Sample tokens from JSON lines -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reads one JSON object a line on stdin and answers one a line on stdout:
//   {"logits": [...], "prompt": [...], "generated": [...], "choice": c,
//    "draws": N, "params": {"temperature": t, "top_k": k, "top_p": p,
//    "min_p": m, "repetition_penalty": r, "presence_penalty": a,
//    "frequency_penalty": f, "logit_bias": {"id": bias}, "seed": s}}
//   -> {"probs": softmax of the processed logits, "token": sampleToken(...),
//       "counts": how often each id was drawn in N draws with the seeds
//       s, s+1, ..., s+N-1}
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Sampling.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace dtensor::tooling;
using nlohmann::json;

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty())
      continue;
    json request;
    try {
      request = json::parse(line);
    } catch (const json::exception &failure) {
      std::cerr << "dtensor-sample: " << failure.what() << "\n";
      return 1;
    }
    std::vector<float> logits = request.at("logits").get<std::vector<float>>();
    std::vector<int64_t> prompt =
        request.value("prompt", std::vector<int64_t>());
    std::vector<int64_t> generated =
        request.value("generated", std::vector<int64_t>());
    const json &given = request.value("params", json::object());
    SamplingParams params;
    params.temperature = given.value("temperature", 1.0);
    params.topK = given.value("top_k", int64_t(0));
    params.topP = given.value("top_p", 1.0);
    params.minP = given.value("min_p", 0.0);
    params.repetitionPenalty = given.value("repetition_penalty", 1.0);
    params.presencePenalty = given.value("presence_penalty", 0.0);
    params.frequencyPenalty = given.value("frequency_penalty", 0.0);
    params.seed = given.value("seed", uint64_t(0));
    json bias = given.value("logit_bias", json::object());
    for (const auto &item : bias.items())
      params.logitBias[std::stoll(item.key())] = item.value().get<double>();
    int64_t vocab = static_cast<int64_t>(logits.size());
    uint64_t choice = request.value("choice", uint64_t(0));

    std::vector<double> probabilities =
        softmax(processLogits(logits.data(), vocab, params, prompt, generated));
    json answer = {{"probs", probabilities},
                   {"token", sampleToken(logits.data(), vocab, params, prompt,
                                         generated, choice)}};
    int64_t draws = request.value("draws", int64_t(0));
    std::vector<int64_t> counts(static_cast<size_t>(vocab), 0);
    for (int64_t i = 0; i < draws; ++i)
      ++counts[drawToken(probabilities,
                         counterUniform(params.seed + static_cast<uint64_t>(i),
                                        choice, generated.size()))];
    answer["counts"] = counts;
    std::cout << answer.dump() << "\n";
  }
  return 0;
}
