//===- Generation.h - Greedy generation over a KV cache ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Token generation with a program whose entries are steps of one model over
// a KV cache held as state (docs/runtime.md, "Generation"): each step entry
// takes `tokens[B, T]`, `slots[B]` (the cache slot of each row; negative:
// a padding row) and `start[B]` (the position of each row's first token)
// and returns `next_token[B, T]`, the greedy next token after each token,
// and optionally `logits[B, T, V]` (f32 or f64), fetched on demand for
// sampling (gathered to rank 0; the argmax alone needs none).
// A prompt is prefilled into its slot by the entries of the most tokens per
// row (a ladder of lengths, e.g. prefill_16/64/256), then each new token is
// a decode step (T = 1) over all active slots at once.
//
// Everything goes through the runtime's C API, which is collective: every
// rank must make the same calls with the same values.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_GENERATION_H
#define DTENSOR_TOOLING_GENERATION_H

#include "dtensor/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtensor::tooling {

/// A step entry: B rows of T tokens.
struct StepShape {
  std::string entry;
  int64_t rows = 0;
  int64_t tokens = 0;
};

/// One call of a prefill: `length` tokens of the prompt from `offset`, at
/// cache positions `offset ..`, through `steps[step]` (its T may exceed
/// `length`: the row is padded).
struct PrefillChunk {
  size_t step = 0;
  int64_t offset = 0;
  int64_t length = 0;
};

/// Splits a prompt of `length` tokens into chunks, each through the step of
/// the fewest tokens per row that holds what is left of the prompt (fewest
/// rows among equals), or else through the one of the most tokens; a chunk
/// never reaches past `maxPositions`. Empty with `error` set when the
/// prompt is empty or does not fit.
std::vector<PrefillChunk> planPrefill(const std::vector<StepShape> &steps,
                                      int64_t length, int64_t maxPositions,
                                      std::string &error);

/// The step to decode `active` rows with: among the steps of one token per
/// row, the one of the fewest rows that holds them all, else the one of the
/// most rows (run as many times as it takes); -1 when there is none.
int64_t pickDecodeStep(const std::vector<StepShape> &steps, size_t active);

class Generator {
public:
  /// Finds the step entries of `program` (which must outlive the
  /// generator) and the cache's slots and positions (dims 0 and 1 of its
  /// state). Null with `error` set when the program cannot generate.
  /// `rank`: this process's rank; logits are gathered to rank 0.
  static std::unique_ptr<Generator> create(dtensor_program *program,
                                           std::string &error, int rank = 0);

  int64_t numSlots() const { return slots; }
  int64_t maxPositions() const { return positions; }
  /// V when every step entry has a `logits[B, T, V]` output, else 0.
  int64_t logitsVocab() const { return vocab; }
  const std::vector<StepShape> &getSteps() const { return steps; }

  /// Prefills `prompt` into `slot` (positions 0 .. size-1) and returns the
  /// token after it in `next`; with `all`, the greedy next token after each
  /// of the prompt's tokens. With `logits` (a program with logitsVocab()),
  /// rank 0 gets the V logits after the last prompt token (the other ranks
  /// an empty vector); only the last chunk's logits are fetched.
  bool prefill(int64_t slot, const std::vector<int64_t> &prompt, int64_t &next,
               std::string &error, std::vector<int64_t> *all = nullptr,
               std::vector<float> *logits = nullptr);

  /// One token for each row: `token` at `position` of `slot`.
  struct Row {
    int64_t slot = 0;
    int64_t token = 0;
    int64_t position = 0;
  };
  /// Runs decode steps over `rows` (several when there are more rows than
  /// the decode entry has) and returns each row's next token; with
  /// `logits`, rank 0 gets each row's V logits (rows x V, row-major).
  bool decode(const std::vector<Row> &rows, std::vector<int64_t> &next,
              std::string &error, std::vector<float> *logits = nullptr);

  /// Wall-clock milliseconds of generate's phases.
  struct Times {
    double prefill = 0;
    /// One per decode step (each over all prompts).
    std::vector<double> decode;
  };

  /// Greedy generation of `newTokens` tokens after each prompt, prompt `i`
  /// in slot `i`, decoded together. Fills `generated` (one list per prompt)
  /// and, when given, `times`.
  bool generate(const std::vector<std::vector<int64_t>> &prompts,
                int64_t newTokens,
                std::vector<std::vector<int64_t>> &generated,
                std::string &error, Times *times = nullptr);

private:
  Generator(dtensor_program *program) : program(program) {}

  /// Runs `step` on `rows` rows of tokens (row-major, rows x T), filling the
  /// next tokens and, with `logits`, on rank 0 the step's [rows, T, V]
  /// logits as f32.
  bool runStep(const StepShape &step, const std::vector<int64_t> &tokens,
               const std::vector<int64_t> &slotIds,
               const std::vector<int64_t> &starts, std::vector<int64_t> &next,
               std::string &error, std::vector<float> *logits = nullptr);

  dtensor_program *program;
  std::vector<StepShape> steps;
  std::vector<dtensor_dtype> tokenTypes, slotTypes, startTypes, nextTypes,
      logitsTypes;
  int rank = 0;
  int64_t vocab = 0;
  int64_t slots = 0;
  int64_t positions = 0;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_GENERATION_H
