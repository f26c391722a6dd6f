//===- Options.cpp - dtensor-server's command line ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace dtensor::server {

namespace {

const char *const kUsage =
    "usage: mpirun -n RANKS dtensor-server ARTIFACT [options]\n"
    "\n"
    "Serves a compiled dtensor artifact (a token model such as\n"
    "examples/llama_tiny.json) over HTTP. One process per rank: rank 0\n"
    "answers HTTP, batches the requests and broadcasts each step to the\n"
    "other ranks; every rank runs the compiled step.\n"
    "\n"
    "HTTP (rank 0):\n"
    "  --host ADDR              address to listen on (default 127.0.0.1)\n"
    "  --port P                 TCP port (default 8000; 0 picks a free one)\n"
    "  --port-file FILE         write the bound port there once the server\n"
    "                           is ready (for scripts and tests)\n"
    "  --http-threads N         HTTP worker threads (default 16)\n"
    "  --max-body-bytes N       larger request bodies get 413 (default 65536)\n"
    "\n"
    "Model:\n"
    "  --seed N                 fill the weights from the artifact's\n"
    "                           initializers with seed N (default 0)\n"
    "  --weights FILE           safetensors file of global weights (weights\n"
    "                           it lacks keep their initializer's values)\n"
    "  --tokens NAME            the token input, i64 [B, S] (default: the\n"
    "                           only i64 input of rank 2)\n"
    "  --output NAME            the argmax output, i64 [B, S] (default: the\n"
    "                           only i64 output of rank 2)\n"
    "  --logits NAME            a float output [B, S, V] to serve with\n"
    "                           \"logits\": true (default: the only float\n"
    "                           output of rank 3, if any)\n"
    "  --vocab V                token ids must lie in [0, V) (default: the\n"
    "                           logits' last dim, else the first dim of the\n"
    "                           --embedding weight)\n"
    "  --embedding NAME         the embedding weight whose first dim is the\n"
    "                           vocabulary (default tok_embeddings.weight)\n"
    "  --threads N              BLAS threads per rank (default: cores/ranks)\n"
    "\n"
    "Batching and failures:\n"
    "  --max-batch-wait-ms M    once a request is queued, wait at most M ms\n"
    "                           for more to fill the batch (default 5)\n"
    "  --step-timeout-s T       a step that takes longer than T seconds\n"
    "                           means a stuck rank: answer 503 and abort the\n"
    "                           job with MPI_Abort (default 60; 0 = never)\n"
    "  -q, --quiet              no log lines except errors\n"
    "  -h, --help               this text\n"
    "\n"
    "Testing aids (make a rank fail the way a real failure would):\n"
    "  --fail-at-step K         break step K (counted from 0) on --fail-rank\n"
    "  --fail-rank R            the rank that fails (default: the last one)\n"
    "  --fail-kind error|hang   error: that rank passes a wrong shape to\n"
    "                           dtensor_program_set, the runtime reports it "
    "on\n"
    "                           every rank and the server answers 503 and\n"
    "                           exits 1; hang: that rank stops answering and\n"
    "                           --step-timeout-s ends the job (default error)\n"
    "\n"
    "Endpoints: POST /v1/next_token, POST /v1/generate, GET /health,\n"
    "GET /metrics, POST /admin/shutdown (loopback clients only). SIGINT or\n"
    "SIGTERM on rank 0 drains the queue and shuts every rank down.\n";

bool fail(const std::string &message) {
  std::fprintf(stderr, "dtensor-server: %s\n", message.c_str());
  return false;
}

template <typename T>
bool parseInteger(const std::string &flag, const std::string &text, T lo,
                  T &value) {
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || parsed < static_cast<long long>(lo) ||
      parsed > static_cast<long long>(std::numeric_limits<T>::max()))
    return fail(flag + " expects an integer >= " + std::to_string(lo) +
                ", not '" + text + "'");
  value = static_cast<T>(parsed);
  return true;
}

} // namespace

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string text;
    auto value = [&]() {
      if (i + 1 >= argc)
        return fail(arg + " needs a value");
      text = argv[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--host") {
      if (!value())
        return false;
      options.host = text;
    } else if (arg == "--port") {
      if (!value() || !parseInteger(arg, text, 0, options.port))
        return false;
      if (options.port > 65535)
        return fail("--port must be at most 65535");
    } else if (arg == "--port-file") {
      if (!value())
        return false;
      options.portFile = text;
    } else if (arg == "--http-threads") {
      if (!value() || !parseInteger(arg, text, 1, options.httpThreads))
        return false;
    } else if (arg == "--max-body-bytes") {
      if (!value() || !parseInteger<size_t>(arg, text, 1, options.maxBodyBytes))
        return false;
    } else if (arg == "--seed") {
      if (!value() || !parseInteger<uint64_t>(arg, text, 0, options.seed))
        return false;
    } else if (arg == "--weights") {
      if (!value())
        return false;
      options.weights = text;
    } else if (arg == "--tokens" || arg == "--output" || arg == "--logits" ||
               arg == "--embedding") {
      if (!value())
        return false;
      (arg == "--tokens"   ? options.tokensName
       : arg == "--output" ? options.outputName
       : arg == "--logits" ? options.logitsName
                           : options.embeddingName) = text;
    } else if (arg == "--vocab") {
      int64_t vocab = 0;
      if (!value() || !parseInteger<int64_t>(arg, text, 1, vocab))
        return false;
      options.vocab = vocab;
    } else if (arg == "--threads") {
      if (!value() || !parseInteger(arg, text, 0, options.threads))
        return false;
    } else if (arg == "--max-batch-wait-ms") {
      if (!value() || !parseInteger(arg, text, 0, options.maxBatchWaitMs))
        return false;
    } else if (arg == "--step-timeout-s") {
      if (!value())
        return false;
      char *end = nullptr;
      options.stepTimeoutS = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !std::isfinite(options.stepTimeoutS) ||
          options.stepTimeoutS < 0)
        return fail("--step-timeout-s expects seconds >= 0, not '" + text +
                    "'");
    } else if (arg == "-q" || arg == "--quiet") {
      options.quiet = true;
    } else if (arg == "--fail-at-step") {
      int64_t step = 0;
      if (!value() || !parseInteger<int64_t>(arg, text, 0, step))
        return false;
      options.failAtStep = step;
    } else if (arg == "--fail-rank") {
      if (!value() || !parseInteger(arg, text, 0, options.failRank))
        return false;
    } else if (arg == "--fail-kind") {
      if (!value())
        return false;
      if (text == "error")
        options.failKind = FailureKind::Error;
      else if (text == "hang")
        options.failKind = FailureKind::Hang;
      else
        return fail("--fail-kind expects error or hang, not '" + text + "'");
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "dtensor-server: unknown option %s\n%s", arg.c_str(),
                   kUsage);
      return false;
    } else if (options.artifact.empty()) {
      options.artifact = arg;
    } else {
      return fail("more than one artifact given ('" + options.artifact +
                  "', '" + arg + "')");
    }
  }
  if (options.artifact.empty()) {
    std::fputs(kUsage, stderr);
    return false;
  }
  return true;
}

} // namespace dtensor::server
