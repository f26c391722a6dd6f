//===- dtensor-run.cpp - run an artifact on MPI ranks -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run model.dtc -n 4 [--input x=x.npy | --random-inputs SEED]
//     [--weights w.safetensors] [--seed N] [--output y=y.npy] [--check]
//     [--iters N] [--input-local x=x.{rank}.npy] [--output-local y=y.{rank}.npy]
// dtensor-run model.dtc -n 2 --generate N --prompt ids.npy [--prompt ...]
//     [--check]
//
// With -n, starts itself under `mpirun`; without, it is one rank of an
// external launcher (mpirun, Slurm) or a world of one. Everything goes
// through the runtime's C API; MPI is used directly only to agree on
// failures of this tool's own steps (reading files) and on the --check
// verdict, so that every rank exits with the same status.
//
//===----------------------------------------------------------------------===//

#include "Traces.h"

#include "dtensor/Tooling/CommTrace.h"
#include "dtensor/Tooling/CommandLine.h"
#include "dtensor/Tooling/Compare.h"
#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/FlagValues.h"
#include "dtensor/Tooling/Generation.h"
#include "dtensor/Tooling/Npy.h"

#include "dtensor/runtime.h"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
  std::string artifact;
  int ranks = 0;
  std::map<std::string, std::string> inputs;
  std::optional<uint64_t> randomSeed;
  std::string weights;
  uint64_t seed = 0;
  std::map<std::string, std::string> outputs;
  // Per-rank files: NAME -> a path pattern holding "{rank}".
  std::map<std::string, std::string> localInputs;
  std::map<std::string, std::string> localOutputs;
  bool check = false;
  /// --entry: the entry point to run ("": the artifact's default).
  std::string entry;
  /// --trace: the Chrome trace file of the timed steps ("": none).
  std::string trace;
  /// --comm-trace: "text" or "json" ("": none), written to commTraceFile
  /// ("-": standard output).
  std::string commTrace;
  std::string commTraceFile = "-";
  std::optional<double> tolerance;
  int iters = 1;
  int warmup = 0;
  int threads = 0;
  std::string mpirun = "mpirun";
  bool quiet = false;
  bool verbose = false;
  /// --generate: new tokens per prompt (0: run steps instead).
  int generate = 0;
  std::vector<std::string> prompts;
};

int rank = 0;
int worldSize = 1;

/// Prints an error of this rank; the others' copies of an agreed failure
/// are left to rank 0.
void report(const std::string &message, dtensor_status status = DTENSOR_OK) {
  if (status == DTENSOR_ERR_PEER && rank != 0)
    return;
  std::fprintf(stderr, "dtensor-run: %s%s\n",
               worldSize > 1 ? ("rank " + std::to_string(rank) + ": ").c_str()
                             : "",
               message.c_str());
}

/// True when any rank passes `failed`: every rank learns about a failure of
/// a step that is not a runtime call.
bool anyFailed(bool failed) {
  int local = failed, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

/// `pattern` with every "{rank}" replaced by `rankNumber`.
std::string rankPath(const std::string &pattern, int rankNumber) {
  static const std::string kField = "{rank}";
  std::string path;
  size_t start = 0;
  for (size_t at = pattern.find(kField); at != std::string::npos;
       at = pattern.find(kField, start)) {
    path += pattern.substr(start, at - start) + std::to_string(rankNumber);
    start = at + kField.size();
  }
  return path + pattern.substr(start);
}

/// Declares the options and parses the command line into `options`;
/// `forwarded` gets what the ranks are started with when -n starts them:
/// the same command line less -n and --mpirun. std::nullopt
/// to go on, else the exit status (0 after --help, 2 after a mistake).
std::optional<int> parseArgs(int argc, char **argv, Options &options,
                             std::vector<std::string> &forwarded) {
  using dtensor::tooling::integerAtLeast;
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  dtensor::tooling::CommandLine cli(
      "dtensor-run", "usage: dtensor-run ARTIFACT [-n RANKS] [options]",
      "Runs a compiled dtensor artifact on every rank.");
  CLI::App &app = cli.app();
  std::vector<std::string> artifacts, inputs, outputs, localInputs,
      localOutputs;
  uint64_t randomSeed = 0;
  double tolerance = 0;
  app.add_option("ARTIFACT", artifacts,
                 "the artifact directory (dtensor-compile -o)");
  CLI::Option *ranks =
      app.add_option("-n", options.ranks,
                     "start RANKS processes with mpirun (otherwise\n"
                     "run as one rank of an external launcher)")
          ->type_name("RANKS")
          ->transform(integerAtLeast(1, kIntMax));
  // Repeatable: each occurrence takes one value.
  auto repeatable = [](CLI::Option *option) {
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false)
        ->transform(dtensor::tooling::nameEqualsValue("NAME=FILE"));
  };
  repeatable(app.add_option("--input", inputs,
                            "global value of input NAME (repeatable)")
                 ->type_name("NAME=FILE.npy"));
  CLI::Option *randomInputs =
      app.add_option("--random-inputs", randomSeed,
                     "random normal values for the inputs and\n"
                     "weights given no file or initializer, from\n"
                     "SEED")
          ->type_name("SEED")
          ->transform(integerAtLeast(0));
  app.add_option("--weights", options.weights,
                 "safetensors file of global weights")
      ->type_name("FILE");
  app.add_option("--seed", options.seed,
                 "seed of the weights' initializers, for those\n"
                 "given no file (default 0)")
      ->type_name("N")
      ->transform(integerAtLeast(0));
  repeatable(app.add_option("--output", outputs,
                            "write global output NAME (repeatable)")
                 ->type_name("NAME=FILE.npy"));
  // Per-rank files name their rank: "{rank}" must be in the path.
  auto perRank = [&](CLI::Option *option) {
    repeatable(option);
    option->check(CLI::Validator(
        [](std::string &text) -> std::string {
          if (text.find("{rank}", text.find('=')) == std::string::npos)
            return "the file name must contain {rank}, which each rank "
                   "replaces with its number: '" +
                   text + "'";
          return "";
        },
        ""));
  };
  perRank(app.add_option("--input-local", localInputs,
                         "this rank's shard of input NAME, from the\n"
                         "file FILE names with {rank} replaced by\n"
                         "the rank's number (repeatable)")
              ->type_name("NAME=FILE.npy"));
  perRank(app.add_option("--output-local", localOutputs,
                         "each rank writes its shard of output NAME\n"
                         "(Partial values unreduced) to FILE with\n"
                         "{rank} replaced (repeatable)")
              ->type_name("NAME=FILE.npy"));
  app.add_option("--trace", options.trace,
                 "write a timeline of the timed steps (each\n"
                 "rank's steps, collectives and the compute\n"
                 "between them) in Chrome's trace format")
      ->type_name("FILE.json");
  CLI::Option *commTrace = app.add_option("--comm-trace", options.commTrace,
                 "report the collectives each rank ran in the\n"
                 "timed steps, per model module, next to the\n"
                 "compile-time communication report: a text\n"
                 "table, or JSON with =json")
      ->expected(0, 1)
      ->type_name("[=text|json]")
      ->check(CLI::IsMember({"", "text", "json"}));
  app.add_option("--comm-trace-file", options.commTraceFile,
                 "write the --comm-trace report to FILE instead\n"
                 "of standard output")
      ->type_name("FILE");
  app.add_option("--entry", options.entry,
                 "the entry point to run, of an artifact with\n"
                 "several (default: its first); state persists\n"
                 "across its steps (--warmup, --iters)")
      ->type_name("NAME");
  app.add_flag("--check", options.check,
               "compare the outputs with the artifact's\n"
               "single-device reference program");
  CLI::Option *toleranceOption =
      app.add_option("--tolerance", tolerance,
                     "largest relative error --check accepts\n"
                     "(default 1e-5; 1e-2 for f16/bf16)")
          ->type_name("X")
          ->transform(dtensor::tooling::numberAtLeast(0));
  app.add_option("--iters", options.iters,
                 "steps to run and time (default 1)")
      ->type_name("N")
      ->transform(integerAtLeast(1, kIntMax));
  app.add_option("--warmup", options.warmup,
                 "untimed steps first (default 0)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax));
  app.add_option("--threads", options.threads,
                 "BLAS threads per rank (default: cores/ranks)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax));
  CLI::Option *mpirun =
      app.add_option("--mpirun", options.mpirun,
                     "launcher for -n (default: mpirun)")
          ->type_name("PATH");
  CLI::Option *generate =
      app.add_option("--generate", options.generate,
                     "greedy generation of N tokens after each\n"
                     "--prompt with the artifact's KV-cache entries\n"
                     "(docs/runtime.md), printing the ids; with\n"
                     "--check also on the single-device reference")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  app.add_option("--prompt", options.prompts,
                 "token ids (a 1-D .npy of i32 or i64) to\n"
                 "generate after, each in its own cache slot\n"
                 "and decoded together (repeatable)")
      ->type_name("FILE.npy")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  CLI::Option *quiet =
      app.add_flag("-q,--quiet", options.quiet, "print errors only");
  app.add_flag("-v,--verbose", options.verbose,
               "also print the CPU matrix kernels in use (OpenBLAS's\n"
               "kernel family and why it was chosen)")
      ->excludes(quiet);
  cli.addHelp();

  if (std::optional<int> status = cli.parse(argc, argv, 2))
    return status;
  if (artifacts.empty()) {
    std::fputs(cli.help().c_str(), stderr);
    return 2;
  }
  if (artifacts.size() > 1) {
    cli.error("more than one artifact given");
    return 2;
  }
  options.artifact = artifacts.front();
  for (const std::string &input : inputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(input);
    options.inputs[name] = file;
  }
  for (const std::string &output : outputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(output);
    options.outputs[name] = file;
  }
  for (const std::string &input : localInputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(input);
    if (options.inputs.count(name)) {
      cli.error("input '" + name + "' is given by both --input and "
                "--input-local");
      return 2;
    }
    options.localInputs[name] = file;
  }
  for (const std::string &output : localOutputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(output);
    options.localOutputs[name] = file;
  }
  if (*randomInputs)
    options.randomSeed = randomSeed;
  if (*toleranceOption)
    options.tolerance = tolerance;
  if (bool(*generate) == options.prompts.empty()) {
    cli.error(*generate ? "--generate needs at least one --prompt"
                        : "--prompt needs --generate");
    return 2;
  }
  if (bool(*generate) && (!options.inputs.empty() || !options.localInputs.empty() ||
                    !options.outputs.empty() || !options.localOutputs.empty())) {
    cli.error("--generate makes its own inputs and prints its tokens: it "
              "takes no --input, --input-local, --output or --output-local");
    return 2;
  }
  // A bare --comm-trace is the text table.
  if (*commTrace && options.commTrace.empty())
    options.commTrace = "text";
  forwarded = cli.arguments({ranks, mpirun});
  return std::nullopt;
}

/// True inside a process started by an MPI launcher.
bool underLauncher() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                           "PMI_SIZE", "SLURM_STEP_ID"})
    if (std::getenv(name))
      return true;
  return false;
}

/// Replaces this process with `mpirun -n RANKS <this program> ARGS`.
int launch(const Options &options, const std::vector<std::string> &forwarded) {
  std::vector<std::string> command = {options.mpirun, "-n",
                                      std::to_string(options.ranks)};
  // More ranks than cores is normal for tests and demos.
  command.push_back("--oversubscribe");
  // OpenMPI binds each rank to one core when there are at most two ranks,
  // which leaves a single rank's BLAS threads one core: 1.9x slower GEMMs
  // on two cores. Unbound, each rank's threads (cores / ranks) spread.
  command.push_back("--bind-to");
  command.push_back("none");
  if (geteuid() == 0)
    command.push_back("--allow-run-as-root");
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) {
    std::perror("dtensor-run: cannot find its own executable");
    return 1;
  }
  self[length] = '\0';
  command.push_back(self);
  command.insert(command.end(), forwarded.begin(), forwarded.end());
  std::vector<char *> args;
  for (std::string &arg : command)
    args.push_back(arg.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "dtensor-run: cannot start %s: %s\n",
               options.mpirun.c_str(), std::strerror(errno));
  return 1;
}

struct TensorView {
  std::string name;
  dtensor_role role;
  dtensor_dtype dtype;
  std::vector<int64_t> shape;
  /// Its index among the program's tensors.
  int32_t index = 0;

  size_t numElements() const {
    size_t count = 1;
    for (int64_t size : shape)
      count *= static_cast<size_t>(size);
    return count;
  }
  size_t bytes() const { return numElements() * dtensor_dtype_size(dtype); }
  std::string typeString() const {
    std::string text = dtensor::tooling::dtypeName(dtype);
    text += "[";
    for (size_t i = 0; i < shape.size(); ++i)
      text += (i ? "x" : "") + std::to_string(shape[i]);
    return text + "]";
  }
};

/// The tensors of the selected entry: its inputs and outputs, and the
/// weights and state the entries share.
std::vector<TensorView> listTensors(dtensor_program *program) {
  int32_t count = 0, entries = 0;
  dtensor_program_num_tensors(program, &count);
  dtensor_program_num_entries(program, &entries);
  const char *selectedName = "";
  dtensor_program_selected_entry(program, &selectedName);
  std::string selected = entries > 1 ? selectedName : "";
  std::vector<TensorView> tensors;
  for (int32_t i = 0; i < count; ++i) {
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, i, &info);
    if (info.entry[0] && selected != info.entry)
      continue;
    tensors.push_back({info.name, info.role, info.dtype,
                       std::vector<int64_t>(info.global_shape,
                                            info.global_shape + info.ndim),
                       i});
  }
  return tensors;
}

/// Writes `text` to `path` (standard output for "-"); false after a
/// message naming `flag` when it cannot.
bool writeText(const std::string &text, const std::string &path,
               const char *flag) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  std::FILE *file = std::fopen(path.c_str(), "w");
  bool ok = file && std::fwrite(text.data(), 1, text.size(), file) ==
                        text.size();
  if (file)
    ok = std::fclose(file) == 0 && ok;
  if (!ok)
    report(std::string(flag) + ": cannot write " + path + ": " +
           std::strerror(errno));
  return ok;
}

/// Writes the traced steps' --trace timeline and --comm-trace report on
/// rank 0, from every rank's events. False (after a message) when rank 0
/// cannot write a file.
bool writeTraces(dtensor_program *program, const Options &options) {
  std::vector<TraceEvent> events = gatherTrace(program, rank, worldSize);
  if (rank != 0)
    return true;
  int32_t count = 0;
  dtensor_program_num_sites(program, &count);
  std::vector<dtensor::tooling::TraceSite> sites;
  std::vector<std::string> siteModules;
  for (int32_t i = 0; i < count; ++i) {
    dtensor_site_info info;
    dtensor_program_site_info(program, i, &info);
    sites.push_back({info.kind, info.reduction, info.module, info.position,
                     info.bytes_sent});
    siteModules.push_back(info.module);
  }
  bool ok = true;
  if (!options.trace.empty())
    ok &= writeText(chromeTrace(events, worldSize, siteModules).dump(1) + "\n",
                    options.trace, "--trace");
  if (!options.commTrace.empty()) {
    std::vector<dtensor::tooling::TracedCall> calls;
    for (const TraceEvent &event : events)
      if (event.kind != 0)
        calls.push_back({event.rank, event.site, traceEventName(event.kind),
                         event.group, event.bytesSent,
                         event.end - event.start});
    dtensor::tooling::CommTrace trace = dtensor::tooling::buildCommTrace(
        sites, calls, worldSize, options.iters);
    std::string text =
        options.commTrace == "json"
            ? dtensor::tooling::commTraceJson(trace).dump(1) + "\n"
            : dtensor::tooling::formatCommTraceText(trace);
    ok &= writeText(text, options.commTraceFile, "--comm-trace-file");
  }
  return ok;
}

/// COLLECTIVE. The global value of `tensor` (Partial dims reduced) into
/// `data` on rank 0; the other ranks take part and get nothing.
dtensor_status fetchGlobal(dtensor_program *program, const TensorView &tensor,
                           std::vector<uint8_t> &data) {
  if (rank == 0)
    data.resize(tensor.bytes());
  return dtensor_program_get(program, tensor.name.c_str(), DTENSOR_GLOBAL, 0,
                             rank == 0 ? data.data() : nullptr,
                             rank == 0 ? data.size() : 0);
}

/// Rank 0 alone: a context on MPI_COMM_SELF and the artifact's
/// single-device reference program in it, for --check.
dtensor_status loadReference(const Options &options, dtensor_context **single,
                             dtensor_program **reference) {
  MPI_Comm self = MPI_COMM_SELF;
  dtensor_context_options selfOptions{sizeof(dtensor_context_options), &self,
                                      options.threads};
  dtensor_load_options loadOptions{sizeof(dtensor_load_options), 1};
  dtensor_status status = dtensor_context_create(&selfOptions, single);
  if (!status)
    status = dtensor_program_load(*single, options.artifact.c_str(),
                                  &loadOptions, reference);
  return status;
}

/// --generate: greedy generation after each prompt on the ranks, printed by
/// rank 0; with --check also on the single-device reference program (on
/// rank 0, with the ranks' weights), token for token. Returns the exit
/// status, the same on every rank.
int runGeneration(dtensor_program *program, const Options &options,
                  const std::vector<std::vector<int64_t>> &prompts,
                  const std::vector<TensorView> &tensors) {
  using dtensor::tooling::Generator;
  // Every rank sees the same manifest and prompts: the same verdicts, and
  // a runtime failure is agreed by the runtime. Rank 0 speaks.
  std::string error;
  std::unique_ptr<Generator> generator = Generator::create(program, error);
  std::vector<std::vector<int64_t>> generated;
  Generator::Times times;
  if (generator &&
      !generator->generate(prompts, options.generate, generated, error,
                           &times))
    generator.reset();
  if (!generator) {
    if (rank == 0)
      report("--generate: " + error);
    return 1;
  }
  if (rank == 0) {
    for (size_t i = 0; i < generated.size(); ++i) {
      std::string line = "generated " + std::to_string(i) + ":";
      for (int64_t id : generated[i])
        line += " " + std::to_string(id);
      std::printf("%s\n", line.c_str());
    }
    if (!options.quiet) {
      std::vector<double> decode = times.decode;
      std::sort(decode.begin(), decode.end());
      std::printf("generated %d token%s after %zu prompt%s on %d rank%s: "
                  "prefill %.3f ms, decode step median %.3f ms\n",
                  options.generate, options.generate == 1 ? "" : "s",
                  prompts.size(), prompts.size() == 1 ? "" : "s", worldSize,
                  worldSize == 1 ? "" : "s", times.prefill,
                  decode.empty() ? 0.0 : decode[decode.size() / 2]);
    }
  }
  if (!options.check)
    return 0;

  // The weights, whole, on rank 0 (every rank takes part).
  std::map<std::string, std::vector<uint8_t>> weights;
  for (const TensorView &tensor : tensors) {
    if (tensor.role != DTENSOR_WEIGHT)
      continue;
    if (dtensor_status status =
            fetchGlobal(program, tensor, weights[tensor.name])) {
      report(dtensor_last_error(), status);
      return 1;
    }
  }
  bool checkFailed = false;
  if (rank == 0) {
    dtensor_context *single = nullptr;
    dtensor_program *reference = nullptr;
    dtensor_status status = loadReference(options, &single, &reference);
    for (const TensorView &tensor : tensors) {
      if (status || tensor.role != DTENSOR_WEIGHT)
        continue;
      const std::vector<uint8_t> &data = weights[tensor.name];
      status = dtensor_program_set(
          reference, tensor.name.c_str(), DTENSOR_GLOBAL, tensor.dtype,
          static_cast<int32_t>(tensor.shape.size()), tensor.shape.data(),
          data.data(), data.size());
    }
    std::vector<std::vector<int64_t>> expected;
    std::unique_ptr<Generator> check;
    if (status)
      error = dtensor_last_error();
    else
      check = Generator::create(reference, error);
    if (!check ||
        !check->generate(prompts, options.generate, expected, error)) {
      report("--check: " + error);
      checkFailed = true;
    }
    for (size_t i = 0; i < expected.size() && !checkFailed; ++i) {
      auto [want, got] = std::mismatch(expected[i].begin(), expected[i].end(),
                                       generated[i].begin());
      if (want == expected[i].end())
        continue;
      size_t at = want - expected[i].begin();
      std::printf("check generate: prompt %zu differs at token %zu: the "
                  "reference has %lld, the ranks %lld: MISMATCH\n",
                  i, at, static_cast<long long>(*want),
                  static_cast<long long>(*got));
      checkFailed = true;
    }
    if (!checkFailed)
      std::printf("check generate: %zu prompt%s x %d tokens equal the "
                  "single-device reference: ok\n",
                  prompts.size(), prompts.size() == 1 ? "" : "s",
                  options.generate);
    dtensor_program_destroy(reference);
    dtensor_context_destroy(single);
  }
  return anyFailed(checkFailed) ? 1 : 0;
}

/// Runs the whole job on this rank; returns the exit status.
int runRank(const Options &options) {
  auto fail = [&](dtensor_status status) {
    report(dtensor_last_error(), status);
    return 1;
  };

  // Files first, before any collective call: a rank that cannot read its
  // input must not leave the others waiting in the runtime.
  std::map<std::string, dtensor::tooling::NpyArray> inputArrays;
  bool readFailed = false;
  for (const auto &[name, path] : options.inputs) {
    std::string error = dtensor::tooling::readNpy(path, inputArrays[name]);
    if (!error.empty()) {
      report("--input " + name + ": " + error);
      readFailed = true;
    }
  }
  std::map<std::string, dtensor::tooling::NpyArray> localArrays;
  for (const auto &[name, pattern] : options.localInputs) {
    std::string error = dtensor::tooling::readNpy(rankPath(pattern, rank),
                                                  localArrays[name]);
    if (!error.empty()) {
      report("--input-local " + name + ": " + error);
      readFailed = true;
    }
  }
  std::vector<std::vector<int64_t>> prompts;
  for (const std::string &path : options.prompts) {
    dtensor::tooling::NpyArray array;
    std::string error = dtensor::tooling::readNpy(path, array);
    if (error.empty() &&
        (array.shape.size() != 1 ||
         (array.dtype != DTENSOR_I32 && array.dtype != DTENSOR_I64)))
      error = "expected a 1-D array of i32 or i64 token ids";
    if (!error.empty()) {
      report("--prompt " + path + ": " + error);
      readFailed = true;
      continue;
    }
    std::vector<int64_t> &ids = prompts.emplace_back(array.shape[0]);
    for (int64_t i = 0; i < array.shape[0]; ++i)
      ids[i] = static_cast<int64_t>(
          dtensor::tooling::elementAsDouble(array.data.data(), array.dtype, i));
  }
  if (anyFailed(readFailed))
    return 1;

  dtensor_context_options contextOptions{sizeof(dtensor_context_options),
                                         nullptr, options.threads};
  dtensor_context *context = nullptr;
  if (dtensor_status status = dtensor_context_create(&contextOptions, &context))
    return fail(status);
  dtensor_program *program = nullptr;
  if (dtensor_status status =
          dtensor_program_load(context, options.artifact.c_str(), nullptr,
                               &program)) {
    dtensor_context_destroy(context);
    return fail(status);
  }
  if (rank == 0 && options.verbose)
    std::printf("kernels: %s\n", dtensor_cpu_kernels());
  int exitCode = 0;
  auto finish = [&](int code) {
    dtensor_program_destroy(program);
    dtensor_context_destroy(context);
    return code;
  };

  // Every rank checks the same name against the same manifest: rank 0 says
  // what is wrong.
  if (!options.entry.empty())
    if (dtensor_status status =
            dtensor_program_select_entry(program, options.entry.c_str())) {
      if (rank == 0)
        report(dtensor_last_error(), status);
      return finish(1);
    }
  std::vector<TensorView> tensors = listTensors(program);
  // Names the user gave must exist (every rank sees the same manifest);
  // state may be set (--input) and read (--output) too.
  struct GivenNames {
    const char *flag;
    const std::map<std::string, std::string> &names;
    bool outputs;
  };
  for (const GivenNames &given :
       {GivenNames{"--input", options.inputs, false},
        GivenNames{"--input-local", options.localInputs, false},
        GivenNames{"--output", options.outputs, true},
        GivenNames{"--output-local", options.localOutputs, true}})
    for (const auto &entry : given.names) {
      auto it = std::find_if(tensors.begin(), tensors.end(),
                             [&](const TensorView &t) {
                               return t.name == entry.first;
                             });
      if (it == tensors.end() ||
          (it->role != DTENSOR_STATE &&
           (it->role == DTENSOR_OUTPUT) != given.outputs)) {
        std::string known;
        for (const TensorView &t : tensors)
          if (t.role == DTENSOR_STATE ||
              (t.role == DTENSOR_OUTPUT) == given.outputs)
            known += (known.empty() ? "" : ", ") + t.name;
        report(std::string(given.flag) + ": the program has no " +
               (given.outputs ? "output" : "input") + " '" + entry.first +
               "' (it has: " + known + ")");
        return finish(1);
      }
    }

  // Inputs and weights: files, then initializers (weights), then random
  // values, else an error. Initializers go first so that the weights file
  // overrides them; it may leave out weights that have one.
  if (dtensor_status status =
          dtensor_program_init_weights(program, options.seed, nullptr))
    return finish(fail(status));
  if (!options.weights.empty())
    if (dtensor_status status =
            dtensor_program_load_weights(program, options.weights.c_str()))
      return finish(fail(status));
  for (size_t index = 0; index < tensors.size(); ++index) {
    const TensorView &tensor = tensors[index];
    int32_t hasInit = 0;
    dtensor_program_has_init(program, tensor.index, &hasInit);
    if (tensor.role == DTENSOR_OUTPUT ||
        (tensor.role == DTENSOR_WEIGHT &&
         (!options.weights.empty() || hasInit)))
      continue;
    // Generation sets the inputs of each step; the cache starts at zero.
    if (options.generate && tensor.role != DTENSOR_WEIGHT)
      continue;
    // State starts at zero unless a file gives it.
    if (tensor.role == DTENSOR_STATE && !localArrays.count(tensor.name) &&
        !inputArrays.count(tensor.name))
      continue;
    // A file of this rank's shard (--input-local) or of the global tensor.
    auto local = localArrays.find(tensor.name);
    auto global = inputArrays.find(tensor.name);
    if (local != localArrays.end() || global != inputArrays.end()) {
      bool isLocal = local != localArrays.end();
      const dtensor::tooling::NpyArray &array =
          isLocal ? local->second : global->second;
      if (dtensor_status status = dtensor_program_set(
              program, tensor.name.c_str(),
              isLocal ? DTENSOR_LOCAL : DTENSOR_GLOBAL, array.dtype,
              static_cast<int32_t>(array.shape.size()), array.shape.data(),
              array.data.data(), array.data.size()))
        return finish(fail(status));
      continue;
    }
    if (!options.randomSeed) {
      report(std::string(tensor.role == DTENSOR_WEIGHT ? "weight" : "input") +
             " '" + tensor.name + "' (" + tensor.typeString() +
             ") has no value: give " +
             (tensor.role == DTENSOR_WEIGHT ? "--weights FILE.safetensors"
                                            : "--input " + tensor.name +
                                                  "=FILE.npy, --input-local " +
                                                  tensor.name +
                                                  "=FILE.{rank}.npy") +
             " or --random-inputs SEED");
      return finish(1);
    }
    if (dtensor_status status = dtensor_program_fill(
            program, tensor.name.c_str(),
            dtensor::tooling::isFloatingPoint(tensor.dtype) ? DTENSOR_RANDN
                                                            : DTENSOR_ZEROS,
            0.0,
            *options.randomSeed * 1000003u + tensor.index))
      return finish(fail(status));
  }

  if (options.generate)
    return finish(runGeneration(program, options, prompts, tensors));

  // --check replays the steps on the reference from the same state.
  bool hasState = std::any_of(tensors.begin(), tensors.end(),
                              [](const TensorView &t) {
                                return t.role == DTENSOR_STATE;
                              });
  std::map<std::string, std::vector<uint8_t>> initialState;
  for (const TensorView &tensor : tensors) {
    if (!options.check || tensor.role != DTENSOR_STATE)
      continue;
    if (dtensor_status status =
            fetchGlobal(program, tensor, initialState[tensor.name]))
      return finish(fail(status));
  }

  // Steps.
  for (int i = 0; i < options.warmup; ++i)
    if (dtensor_status status = dtensor_program_run(program))
      return finish(fail(status));
  if (!options.trace.empty() || !options.commTrace.empty()) {
    // One start for all ranks (within a barrier's skew), so that their
    // timelines line up.
    MPI_Barrier(MPI_COMM_WORLD);
    dtensor_program_set_tracing(program, 1);
  }
  std::vector<double> times;
  for (int i = 0; i < options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (dtensor_status status = dtensor_program_run(program))
      return finish(fail(status));
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  if (rank == 0 && !options.quiet) {
    std::sort(times.begin(), times.end());
    std::printf("ran %d step%s on %d rank%s: median %.3f ms, min %.3f ms\n",
                options.iters, options.iters == 1 ? "" : "s", worldSize,
                worldSize == 1 ? "" : "s", times[times.size() / 2],
                times.front());
  }

  bool writeFailed = false;
  if (!options.trace.empty() || !options.commTrace.empty())
    writeFailed |= !writeTraces(program, options);

  // Each rank's shard of the outputs --output-local names.
  for (size_t index = 0; index < tensors.size(); ++index) {
    const TensorView &tensor = tensors[index];
    auto pattern = options.localOutputs.find(tensor.name);
    if (pattern == options.localOutputs.end())
      continue;
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, tensor.index, &info);
    std::vector<int64_t> shape(info.local_shape, info.local_shape + info.ndim);
    size_t count = 1;
    for (int64_t size : shape)
      count *= static_cast<size_t>(size);
    std::vector<uint8_t> data(count * dtensor_dtype_size(tensor.dtype));
    if (dtensor_status status =
            dtensor_program_get(program, tensor.name.c_str(), DTENSOR_LOCAL,
                                0, data.data(), data.size()))
      return finish(fail(status));
    std::string error = dtensor::tooling::writeNpy(
        rankPath(pattern->second, rank), tensor.dtype, shape, data.data());
    if (!error.empty()) {
      report("--output-local " + tensor.name + ": " + error);
      writeFailed = true;
    }
  }

  // Global values on rank 0: the outputs, and for --check also the inputs
  // and weights the reference program needs.
  std::map<std::string, std::vector<uint8_t>> globals;
  for (const TensorView &tensor : tensors) {
    bool wanted = tensor.role == DTENSOR_OUTPUT || options.check ||
                  (tensor.role == DTENSOR_STATE &&
                   options.outputs.count(tensor.name));
    if (!wanted)
      continue;
    if (dtensor_status status =
            fetchGlobal(program, tensor, globals[tensor.name]))
      return finish(fail(status));
  }

  if (rank == 0) {
    for (const TensorView &tensor : tensors) {
      if (tensor.role != DTENSOR_OUTPUT &&
          !(tensor.role == DTENSOR_STATE &&
            options.outputs.count(tensor.name)))
        continue;
      const std::vector<uint8_t> &data = globals[tensor.name];
      auto file = options.outputs.find(tensor.name);
      if (file != options.outputs.end()) {
        std::string error = dtensor::tooling::writeNpy(
            file->second, tensor.dtype, tensor.shape, data.data());
        if (!error.empty()) {
          report("--output " + tensor.name + ": " + error);
          writeFailed = true;
        }
      } else if (!options.quiet) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        size_t count = tensor.numElements();
        for (size_t i = 0; i < count; ++i) {
          double v =
              dtensor::tooling::elementAsDouble(data.data(), tensor.dtype, i);
          sum += v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        std::printf("output %s: %s min %.6g max %.6g mean %.6g\n",
                    tensor.name.c_str(), tensor.typeString().c_str(),
                    count ? lo : 0.0, count ? hi : 0.0,
                    count ? sum / count : 0.0);
      }
    }
  }

  bool checkFailed = false;
  if (options.check && rank == 0) {
    // The single-device program on this rank alone.
    dtensor_context *single = nullptr;
    dtensor_program *reference = nullptr;
    dtensor_status status = loadReference(options, &single, &reference);
    if (!status && !options.entry.empty())
      status = dtensor_program_select_entry(reference, options.entry.c_str());
    for (const TensorView &tensor : tensors) {
      if (status || tensor.role == DTENSOR_OUTPUT)
        continue;
      const std::vector<uint8_t> &data = tensor.role == DTENSOR_STATE
                                             ? initialState[tensor.name]
                                             : globals[tensor.name];
      status = dtensor_program_set(reference, tensor.name.c_str(),
                                   DTENSOR_GLOBAL, tensor.dtype,
                                   static_cast<int32_t>(tensor.shape.size()),
                                   tensor.shape.data(), data.data(),
                                   data.size());
    }
    // With state, as many steps as ran; the outputs of the last, and the
    // state after it, are compared.
    int steps = hasState ? options.warmup + options.iters : 1;
    for (int i = 0; i < steps && !status; ++i)
      status = dtensor_program_run(reference);
    for (const TensorView &tensor : tensors) {
      if (status || (tensor.role != DTENSOR_OUTPUT &&
                     tensor.role != DTENSOR_STATE))
        continue;
      std::vector<uint8_t> expected(tensor.bytes());
      status = dtensor_program_get(reference, tensor.name.c_str(),
                                   DTENSOR_GLOBAL, -1, expected.data(),
                                   expected.size());
      if (status)
        break;
      dtensor::tooling::Comparison comparison =
          dtensor::tooling::compareWithReference(
              tensor.dtype, expected.data(), globals[tensor.name].data(),
              tensor.numElements(), options.tolerance);
      std::printf("%s\n",
                  dtensor::tooling::describeComparison(tensor.name, comparison)
                      .c_str());
      checkFailed |= !comparison.ok;
    }
    if (status) {
      report(std::string("--check: ") + dtensor_last_error());
      checkFailed = true;
    }
    dtensor_program_destroy(reference);
    dtensor_context_destroy(single);
  }
  exitCode = anyFailed(writeFailed || checkFailed) ? 1 : 0;
  return finish(exitCode);
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::vector<std::string> forwarded;
  if (std::optional<int> status = parseArgs(argc, argv, options, forwarded))
    return *status;
  if (options.ranks && !underLauncher())
    return launch(options, forwarded);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  int code;
  if (options.ranks && options.ranks != worldSize) {
    report("-n " + std::to_string(options.ranks) + " but the launcher started " +
           std::to_string(worldSize) + " ranks");
    code = 1;
  } else {
    code = runRank(options);
  }
  MPI_Finalize();
  return code;
}
