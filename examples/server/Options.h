//===- Options.h - dtensor-server's command line ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every rank parses the same command line (mpirun gives each the same
// arguments), so they all agree on the model set-up and the testing aids.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_OPTIONS_H
#define DTENSOR_EXAMPLES_SERVER_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace dtensor::server {

/// How --fail-at-step breaks a step on --fail-rank (testing aids).
enum class FailureKind {
  Error, // pass a wrong shape to dtensor_program_set: the runtime reports it
  Hang   // stop answering: rank 0's --step-timeout-s must notice
};

struct Options {
  std::string artifact;
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string portFile;
  uint64_t seed = 0;
  std::string weights;
  int threads = 0;
  std::string tokensName; // empty: the only i64 input of rank 2
  std::string outputName; // empty: the only i64 output of rank 2
  std::string logitsName; // empty: a float output [B, S, V] if there is one
  std::string embeddingName = "tok_embeddings.weight";
  std::optional<int64_t> vocab;
  /// The name /v1/models and completions report ("": the artifact's
  /// directory name without ".dtc").
  std::string modelName;
  /// A Hugging Face model folder's tokenizer files ("": token ids only).
  std::string tokenizer;
  /// Requests must carry "Authorization: Bearer <apiKey>" ("": none).
  std::string apiKey;
  int maxBatchWaitMs = 5;
  /// KV cache: prefills between two decode steps while requests decode
  /// (0: every free slot's).
  int maxPrefills = 0;
  double stepTimeoutS = 60;
  int httpThreads = 16;
  size_t maxBodyBytes = 64 * 1024;
  bool quiet = false;
  // Testing aids.
  std::optional<int64_t> failAtStep;
  int failRank = -1; // -1: the last rank
  FailureKind failKind = FailureKind::Error;
  int stepDelayMs = 0;
};

/// Parses argv into `options`. std::nullopt to go on; otherwise the status
/// to exit with: 0 after --help printed the usage, 2 after a mistake was
/// reported.
std::optional<int> parseOptions(int argc, char **argv, Options &options);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_OPTIONS_H
