//===- Options.cpp - dtensor-server's command line ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Declared on the dtensor tools' CommandLine (CLI11, runtime/tooling): the
// same help layout, messages and repeated-flag rule as dtensor-run.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "dtensor/Tooling/CommandLine.h"
#include "dtensor/Tooling/FlagValues.h"

#include <cstdio>
#include <limits>
#include <vector>

namespace dtensor::server {

std::optional<int> parseOptions(int argc, char **argv, Options &options) {
  using dtensor::tooling::integerAtLeast;
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  dtensor::tooling::CommandLine cli(
      "dtensor-server",
      "usage: mpirun -n RANKS dtensor-server ARTIFACT [options]",
      "Serves a compiled dtensor artifact (a token model such as\n"
      "examples/llama_tiny.json) over HTTP. One process per rank: rank 0\n"
      "answers HTTP, batches the requests and broadcasts each step to the\n"
      "other ranks; every rank runs the compiled step.");
  CLI::App &app = cli.app();
  std::vector<std::string> artifacts;
  app.add_option("ARTIFACT", artifacts,
                 "the artifact directory (dtensor-compile -o)");

  const std::string http = "HTTP (rank 0)";
  app.add_option("--host", options.host,
                 "address to listen on (default 127.0.0.1)")
      ->type_name("ADDR")
      ->group(http);
  app.add_option("--port", options.port,
                 "TCP port (default 8000; 0 picks a free one)")
      ->type_name("P")
      ->transform(dtensor::tooling::integerIn(0, 65535))
      ->group(http);
  app.add_option("--port-file", options.portFile,
                 "write the bound port there once the server\n"
                 "is ready (for scripts and tests)")
      ->type_name("FILE")
      ->group(http);
  app.add_option("--model-name", options.modelName,
                 "the model's name in /v1/models and the\n"
                 "completions (default: the artifact's directory\n"
                 "name without .dtc)")
      ->type_name("NAME")
      ->group(http);
  app.add_option("--api-key", options.apiKey,
                 "answer 401 to requests without the header\n"
                 "'Authorization: Bearer KEY' (/health and\n"
                 "/metrics stay open)")
      ->type_name("KEY")
      ->group(http);
  app.add_option("--http-threads", options.httpThreads,
                 "HTTP worker threads (default 16)")
      ->type_name("N")
      ->transform(integerAtLeast(1, kIntMax))
      ->group(http);
  app.add_option("--max-body-bytes", options.maxBodyBytes,
                 "larger request bodies get 413 (default 65536)")
      ->type_name("N")
      ->transform(integerAtLeast(1))
      ->group(http);

  const std::string model = "Model";
  app.add_option("--tokenizer", options.tokenizer,
                 "a model folder's tokenizer.json or\n"
                 "tokenizer.model (with tokenizer_config.json,\n"
                 "generation_config.json): text prompts, stop\n"
                 "strings, /tokenize, /detokenize, and a stop at\n"
                 "the end-of-sequence tokens")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory)
      ->group(model);
  app.add_option("--seed", options.seed,
                 "fill the weights from the artifact's\n"
                 "initializers with seed N (default 0)")
      ->type_name("N")
      ->transform(integerAtLeast(0))
      ->group(model);
  app.add_option("--weights", options.weights,
                 "safetensors file of global weights (weights\n"
                 "it lacks keep their initializer's values)")
      ->type_name("FILE")
      ->group(model);
  app.add_option("--tokens", options.tokensName,
                 "the token input, i64 [B, S] (default: the\n"
                 "only i64 input of rank 2)")
      ->type_name("NAME")
      ->group(model);
  app.add_option("--output", options.outputName,
                 "the argmax output, i64 [B, S] (default: the\n"
                 "only i64 output of rank 2)")
      ->type_name("NAME")
      ->group(model);
  app.add_option("--logits", options.logitsName,
                 "a float output [B, S, V] to serve with\n"
                 "\"logits\": true (default: the only float\n"
                 "output of rank 3, if any)")
      ->type_name("NAME")
      ->group(model);
  int64_t vocab = 0;
  CLI::Option *vocabOption =
      app.add_option("--vocab", vocab,
                     "token ids must lie in [0, V) (default: the\n"
                     "logits' last dim, else the first dim of the\n"
                     "--embedding weight)")
          ->type_name("V")
          ->transform(integerAtLeast(1))
          ->group(model);
  app.add_option("--embedding", options.embeddingName,
                 "the embedding weight whose first dim is the\n"
                 "vocabulary (default tok_embeddings.weight)")
      ->type_name("NAME")
      ->group(model);
  app.add_option("--threads", options.threads,
                 "BLAS threads per rank (default: cores/ranks)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax))
      ->group(model);

  const std::string batching = "Batching and failures";
  app.add_option("--max-batch-wait-ms", options.maxBatchWaitMs,
                 "once a request is queued, wait at most M ms\n"
                 "for more to fill the batch (default 5)")
      ->type_name("M")
      ->transform(integerAtLeast(0, kIntMax))
      ->group(batching);
  app.add_option("--max-prefills", options.maxPrefills,
                 "with a KV cache: while requests decode, admit\n"
                 "at most N new ones (each a prefill) between two\n"
                 "decode steps (default 0: as many as slots are\n"
                 "free)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax))
      ->group(batching);
  app.add_option("--step-timeout-s", options.stepTimeoutS,
                 "a step that takes longer than T seconds\n"
                 "means a stuck rank: answer 503 and abort the\n"
                 "job with MPI_Abort (default 60; 0 = never)")
      ->type_name("T")
      ->transform(dtensor::tooling::numberAtLeast(0))
      ->group(batching);
  app.add_flag("-q,--quiet", options.quiet, "no log lines except errors")
      ->group(batching);
  cli.addHelp(batching);

  const std::string aids =
      "Testing aids (make a rank fail the way a real failure would)";
  int64_t failAtStep = 0;
  CLI::Option *failAtStepOption =
      app.add_option("--fail-at-step", failAtStep,
                     "break step K (counted from 0) on --fail-rank")
          ->type_name("K")
          ->transform(integerAtLeast(0))
          ->group(aids);
  app.add_option("--fail-rank", options.failRank,
                 "the rank that fails (default: the last one)")
      ->type_name("R")
      ->transform(integerAtLeast(0, kIntMax))
      ->group(aids);
  std::string failKind = "error";
  app.add_option("--fail-kind", failKind,
                 "error: that rank passes a wrong shape to\n"
                 "dtensor_program_set, the runtime reports it on\n"
                 "every rank and the server answers 503 and\n"
                 "exits 1; hang: that rank stops answering and\n"
                 "--step-timeout-s ends the job (default error)")
      ->type_name("error|hang")
      ->transform(dtensor::tooling::oneOf({"error", "hang"}))
      ->group(aids);
  app.add_option("--step-delay-ms", options.stepDelayMs,
                 "rank 0 sleeps M ms before each step (a slow\n"
                 "model, so that tests can act between steps)")
      ->type_name("M")
      ->transform(integerAtLeast(0, kIntMax))
      ->group(aids);

  app.footer("Endpoints: POST /v1/next_token, POST /v1/generate, POST\n"
             "/v1/completions, GET /v1/models, GET /health, GET /metrics, "
             "POST\n/admin/shutdown (loopback clients only). SIGINT or "
             "SIGTERM on rank 0\ndrains the queue and shuts every rank down.");

  if (std::optional<int> status = cli.parse(argc, argv, 2))
    return status;
  if (artifacts.empty()) {
    std::fputs(cli.help().c_str(), stderr);
    return 2;
  }
  if (artifacts.size() > 1) {
    cli.error("more than one artifact given ('" + artifacts[0] + "', '" +
              artifacts[1] + "')");
    return 2;
  }
  options.artifact = artifacts.front();
  if (*vocabOption)
    options.vocab = vocab;
  if (*failAtStepOption)
    options.failAtStep = failAtStep;
  options.failKind =
      failKind == "hang" ? FailureKind::Hang : FailureKind::Error;
  return std::nullopt;
}

} // namespace dtensor::server
