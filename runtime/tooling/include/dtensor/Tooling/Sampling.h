//===- Sampling.h - Next-token sampling from logits -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The logits processors of OpenAI-style sampling, in the order Hugging Face
// `transformers` and vLLM apply them: logit_bias, the repetition penalty
// (over the prompt and the generated tokens), the presence and frequency
// penalties (over the generated tokens), temperature, then top-k, top-p and
// min-p filtering; then one draw from the softmax.
//
// The draw is reproducible: its uniform number is a hash of (seed, choice,
// token index), not the next value of a shared generator, so a request
// samples the same tokens whatever else is in the batch and on any number
// of ranks (the logits themselves may differ in the last bits across
// meshes, which moves a draw only when it falls that close to a boundary
// of the cumulative distribution).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_SAMPLING_H
#define DTENSOR_TOOLING_SAMPLING_H

#include <cstdint>
#include <map>
#include <vector>

namespace dtensor::tooling {

struct SamplingParams {
  /// 0: greedy (the argmax of the processed logits).
  double temperature = 1.0;
  /// <= 0: off.
  int64_t topK = 0;
  /// 1: off.
  double topP = 1.0;
  /// 0: off.
  double minP = 0.0;
  /// 1: off. Hugging Face's: a seen token's positive logit is divided by
  /// it, a negative one multiplied.
  double repetitionPenalty = 1.0;
  /// OpenAI's: logit -= frequency * count + presence * (count > 0), count
  /// in the generated tokens.
  double presencePenalty = 0.0;
  double frequencyPenalty = 0.0;
  /// Added to the logits of these token ids.
  std::map<int64_t, double> logitBias;
  uint64_t seed = 0;

  /// Whether the plain argmax of the logits is the answer (no logits are
  /// needed when the model computes its argmax itself).
  bool greedyArgmax() const;
};

/// The processed logits of one position (-infinity where filtered out).
std::vector<double> processLogits(const float *logits, int64_t vocab,
                                  const SamplingParams &params,
                                  const std::vector<int64_t> &prompt,
                                  const std::vector<int64_t> &generated);

/// softmax(`logits`) in double (zero where -infinity).
std::vector<double> softmax(const std::vector<double> &logits);

/// log(softmax(`logits`)).
std::vector<double> logSoftmax(const float *logits, int64_t vocab);

/// A uniform number in [0, 1) from (seed, choice, index) alone.
double counterUniform(uint64_t seed, uint64_t choice, uint64_t index);

/// The token drawn from `probabilities` with the uniform number `u`
/// (inverse of the cumulative distribution, in id order).
int64_t drawToken(const std::vector<double> &probabilities, double u);

/// The next token: processed, then the argmax with temperature 0, else a
/// draw with counterUniform(params.seed, choice, generated.size()).
int64_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingParams &params,
                    const std::vector<int64_t> &prompt,
                    const std::vector<int64_t> &generated, uint64_t choice);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_SAMPLING_H
