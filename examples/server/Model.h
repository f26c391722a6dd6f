//===- Model.h - The compiled token model on this rank ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The server's only user of the runtime: a context on MPI_COMM_WORLD, the
// loaded artifact, its weights, and one step. Everything goes through the
// public C API (dtensor/runtime.h), as in any program outside this tree.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_MODEL_H
#define DTENSOR_EXAMPLES_SERVER_MODEL_H

#include "Options.h"

#include "dtensor/Tooling/Generation.h"
#include "dtensor/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtensor::server {

/// What the server needs to know about the artifact, found from its tensors.
struct ModelSpec {
  std::string tokens; // input, i64 [batch, seqLen]
  std::string output; // output, i64 [batch, seqLen]: argmax per position
  /// output, f32/f64 [batch, seqLen, vocab] (with a KV cache: every step
  /// entry's `logits[B, T, V]`); "" if none
  std::string logits;
  dtensor_dtype logitsDtype = DTENSOR_F32;
  int64_t batch = 0;
  int64_t seqLen = 0;
  int64_t vocab = 0;
  std::string vocabSource; // where `vocab` came from, for the log
  /// A KV-cache artifact (generation entries: docs/runtime.md): `batch` is
  /// its slots and `seqLen` its positions per slot.
  bool cache = false;
};

class Model {
public:
  Model() = default;
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  /// Destroys what close() has not.
  ~Model();

  /// COLLECTIVE. Creates the context, loads the artifact and sets the
  /// weights (initializers from --seed, then --weights). On failure every
  /// rank returns it (the runtime agrees), with the message in `error`.
  dtensor_status open(const Options &options, std::string &error);

  /// Finds the token input, the outputs and the vocabulary, or the
  /// generation entries of a KV-cache artifact (the same on every rank: it
  /// reads only the manifest). False with `error` if the artifact is not a
  /// token model the server can drive.
  bool describe(const Options &options, ModelSpec &spec, std::string &error);

  /// COLLECTIVE, KV-cache artifacts. Prefills `prompt` into `slot`; `all`
  /// gets the next token after each prompt token and, with `fetchLogits`
  /// (an artifact with logits), `logits` on rank 0 the V logits after the
  /// last one. `breakIt`: as step's.
  dtensor_status prefill(int64_t slot, const std::vector<int64_t> &prompt,
                         bool fetchLogits, bool breakIt,
                         std::vector<int64_t> &all, std::vector<float> &logits,
                         std::string &error);
  /// COLLECTIVE, KV-cache artifacts. One decode step over `rows`; with
  /// `fetchLogits`, `logits` on rank 0 holds each row's V logits.
  dtensor_status decode(const std::vector<tooling::Generator::Row> &rows,
                        bool fetchLogits, bool breakIt,
                        std::vector<int64_t> &next, std::vector<float> &logits,
                        std::string &error);

  /// COLLECTIVE. One step on `tokens` (batch * seqLen ids, the same on
  /// every rank): set, run, then on rank 0 fetch the argmax (`next`) and,
  /// with `fetchLogits`, the logits. `breakIt` makes this rank pass a wrong
  /// shape to dtensor_program_set (--fail-kind error): a failure the runtime
  /// reports on every rank like any other.
  dtensor_status step(const ModelSpec &spec, const std::vector<int64_t> &tokens,
                      bool fetchLogits, bool breakIt,
                      std::vector<int64_t> &next, std::vector<float> &logits,
                      std::string &error);

  /// COLLECTIVE. Destroys the program and the context.
  dtensor_status close();

  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }

private:
  dtensor_context *context_ = nullptr;
  dtensor_program *program_ = nullptr;
  std::unique_ptr<tooling::Generator> generator_;
  int rank_ = 0;
  int worldSize_ = 1;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_MODEL_H
