//===- dtensor-run.cpp - run an artifact on MPI ranks -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run model.dtc -n 4 [--input x=x.npy | --random-inputs SEED]
//     [--weights w.safetensors] [--seed N] [--output y=y.npy] [--check]
//     [--iters N] [--input-local x=x.{rank}.npy]
//     [--output-local y=y.{rank}.npy]
// dtensor-run model.dtc -n 2 --generate N --prompt ids.npy [--prompt ...]
//     [--check]
//
// With -n, starts itself under `mpirun` (on the hosts of --hostfile, if
// given); without, it is one rank of an
// external launcher (mpirun, Slurm) or a world of one. Everything goes
// through the runtime's C API; MPI is used directly only to agree on
// failures of this tool's own steps (reading files) and on the --check
// verdict, so that every rank exits with the same status. The work on each
// rank is the tooling library's run session (dtensor/Tooling/RunSession.h);
// this file parses the command line, starts the ranks and gives the session
// its MPI (MpiRanks) and the --trace and --comm-trace reports.
//
//===----------------------------------------------------------------------===//

#include "Traces.h"

#include "dtensor/Tooling/CommTrace.h"
#include "dtensor/Tooling/CommandLine.h"
#include "dtensor/Tooling/FlagValues.h"
#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/RunSession.h"

#include "dtensor/runtime.h"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
  /// What each rank runs: the run session's settings.
  dtensor::tooling::RunOptions run;
  int ranks = 0;
  /// --trace: the Chrome trace file of the timed steps ("": none).
  std::string trace;
  /// --comm-trace: "text" or "json" ("": none), written to commTraceFile
  /// ("-": standard output).
  std::string commTrace;
  std::string commTraceFile = "-";
  std::string mpirun = "mpirun";
  /// --hostfile: passed to the launcher for -n ("": none).
  std::string hostfile;
};

/// The ranks of MPI_COMM_WORLD, for the run session.
class MpiRanks : public dtensor::tooling::RunRanks {
public:
  MpiRanks(int rank, int worldSize)
      : RunRanks("dtensor-run", rank, worldSize) {}

  bool anyFailed(bool failed) override {
    int local = failed, any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  void *selfCommunicator() override { return &self; }

private:
  MPI_Comm self = MPI_COMM_SELF;
};

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
  app.add_option("--weights", options.run.weights,
                 "safetensors file of global weights")
      ->type_name("FILE");
  app.add_option("--seed", options.run.seed,
                 "seed of the weights' initializers, for those\n"
                 "given no file, and of the program's random\n"
                 "ops (default 0)")
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
  CLI::Option *commTrace =
      app.add_option("--comm-trace", options.commTrace,
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
  app.add_option("--entry", options.run.entry,
                 "the entry point to run, of an artifact with\n"
                 "several (default: its first); state persists\n"
                 "across its steps (--warmup, --iters)")
      ->type_name("NAME");
  app.add_flag("--check", options.run.check,
               "compare the outputs with the artifact's\n"
               "single-device reference program");
  CLI::Option *toleranceOption =
      app.add_option("--tolerance", tolerance,
                     "largest relative error --check accepts\n"
                     "(default 1e-5; 1e-2 for f16/bf16)")
          ->type_name("X")
          ->transform(dtensor::tooling::numberAtLeast(0));
  app.add_option("--iters", options.run.iters,
                 "steps to run and time (default 1)")
      ->type_name("N")
      ->transform(integerAtLeast(1, kIntMax));
  app.add_option("--warmup", options.run.warmup,
                 "untimed steps first (default 0)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax));
  app.add_flag("--per-step", options.run.perStep,
               "feed each step its own inputs: every --input\n"
               "file holds one value per step, stacked on a\n"
               "leading dim of --warmup + --iters, and every\n"
               "--output file gets one value per step, stacked\n"
               "likewise (a training loop's batches and losses)");
  CLI::Option *data =
      app.add_option("--data", options.run.data,
                     "train from token files (.npy of any integer\n"
                     "dtype, llm.c .bin shards; repeatable, read\n"
                     "as one stream): step s feeds batch\n"
                     "--data-start + s of [batch, seq] windows to\n"
                     "--data-tokens and their next tokens to\n"
                     "--data-targets, each rank its shard; implies\n"
                     "--per-step and prints a line per step")
          ->type_name("FILE")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->allow_extra_args(false);
  CLI::Option *dataTokens =
      app.add_option("--data-tokens", options.run.dataTokens,
                     "the input --data's tokens feed (default tokens)")
          ->type_name("NAME");
  CLI::Option *dataTargets =
      app.add_option("--data-targets", options.run.dataTargets,
                     "the input their next tokens feed (default\n"
                     "targets)")
          ->type_name("NAME");
  uint64_t dataSeed = 0;
  CLI::Option *dataSeedOption =
      app.add_option("--data-seed", dataSeed,
                     "visit the --data windows in an order drawn\n"
                     "from SEED, a new one each epoch (default: in\n"
                     "the files' order)")
          ->type_name("SEED");
  CLI::Option *dataStart =
      app.add_option("--data-start", options.run.dataStart,
                     "the batch step 0 reads (default 0; a resumed\n"
                     "run's next batch)")
          ->type_name("B");
  CLI::Option *evalData =
      app.add_option("--eval-data", options.run.evalData,
                     "evaluation token files (as --data's): every\n"
                     "--eval-every steps and after the last, the\n"
                     "mean loss of --eval-entry over the first\n"
                     "--eval-batches batches (repeatable)")
          ->type_name("FILE")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->allow_extra_args(false);
  CLI::Option *evalEntry =
      app.add_option("--eval-entry", options.run.evalEntry,
                     "the entry --eval-data feeds (default eval_step)")
          ->type_name("NAME");
  CLI::Option *evalEvery =
      app.add_option("--eval-every", options.run.evalEvery,
                     "evaluate every K steps (default: after the\n"
                     "last only)")
          ->type_name("K")
          ->transform(integerAtLeast(1, kIntMax));
  CLI::Option *evalBatches =
      app.add_option("--eval-batches", options.run.evalBatches,
                     "batches each evaluation averages (default 1)")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  app.add_option("--log", options.run.log,
                 "with --per-step or --data: write one JSON line\n"
                 "per step (step, batch, ms, tokens/s, and each\n"
                 "scalar output: loss, grad_norm, lr)")
      ->type_name("FILE.jsonl");
  app.add_option("--plot", options.run.plot,
                 "with --per-step or --data: after the steps,\n"
                 "draw the loss against the step (an SVG file)")
      ->type_name("FILE.svg");
  app.add_option("--save-weights", options.run.saveWeights,
                 "after the steps, write the weights and the\n"
                 "parameters the steps trained to a safetensors\n"
                 "file (--weights loads it, on any mesh)")
      ->type_name("FILE");
  app.add_option("--threads", options.run.threads,
                 "BLAS threads per rank (default: cores/ranks)")
      ->type_name("N")
      ->transform(integerAtLeast(0, kIntMax));
  CLI::Option *mpirun = app.add_option("--mpirun", options.mpirun,
                                       "launcher for -n (default: mpirun)")
                            ->type_name("PATH");
  CLI::Option *hostfile =
      app.add_option("--hostfile", options.hostfile,
                     "with -n: the launcher's hostfile (ranks fill\n"
                     "each host's slots in order: docs/runtime.md,\n"
                     "several hosts)")
          ->type_name("FILE")
          ->check(CLI::ExistingFile);
  CLI::Option *generate =
      app.add_option("--generate", options.run.generate,
                     "greedy generation of N tokens after each\n"
                     "--prompt with the artifact's KV-cache entries\n"
                     "(docs/runtime.md), printing the ids; with\n"
                     "--check also on the single-device reference")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  app.add_option("--prompt", options.run.prompts,
                 "token ids (a 1-D .npy of i32 or i64) to\n"
                 "generate after, each in its own cache slot\n"
                 "and decoded together (repeatable)")
      ->type_name("FILE.npy")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  CLI::Option *quiet =
      app.add_flag("-q,--quiet", options.run.quiet, "print errors only");
  app.add_flag("-v,--verbose", options.run.verbose,
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
  options.run.artifact = artifacts.front();
  for (const std::string &input : inputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(input);
    options.run.inputs[name] = file;
  }
  for (const std::string &output : outputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(output);
    options.run.outputs[name] = file;
  }
  for (const std::string &input : localInputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(input);
    if (options.run.inputs.count(name)) {
      cli.error("input '" + name +
                "' is given by both --input and "
                "--input-local");
      return 2;
    }
    options.run.localInputs[name] = file;
  }
  for (const std::string &output : localOutputs) {
    auto [name, file] = dtensor::tooling::splitNameValue(output);
    options.run.localOutputs[name] = file;
  }
  if (*randomInputs)
    options.run.randomSeed = randomSeed;
  if (*toleranceOption)
    options.run.tolerance = tolerance;
  if (bool(*generate) == options.run.prompts.empty()) {
    cli.error(*generate ? "--generate needs at least one --prompt"
                        : "--prompt needs --generate");
    return 2;
  }
  if (bool(*generate) &&
      (!options.run.inputs.empty() || !options.run.localInputs.empty() ||
       !options.run.outputs.empty() || !options.run.localOutputs.empty())) {
    cli.error("--generate makes its own inputs and prints its tokens: it "
              "takes no --input, --input-local, --output or --output-local");
    return 2;
  }
  for (CLI::Option *needsData :
       {dataTokens, dataTargets, dataSeedOption, dataStart})
    if (*needsData && !*data) {
      cli.error(needsData->get_name() + " needs --data");
      return 2;
    }
  if (*dataSeedOption)
    options.run.dataSeed = dataSeed;
  for (CLI::Option *needsEval : {evalEntry, evalEvery, evalBatches})
    if (*needsEval && !*evalData) {
      cli.error(needsEval->get_name() + " needs --eval-data");
      return 2;
    }
  if (*evalData && !*data) {
    cli.error("--eval-data needs --data (it evaluates a run fed by it)");
    return 2;
  }
  if (*data) {
    for (const std::string &name :
         {options.run.dataTokens, options.run.dataTargets})
      if (options.run.inputs.count(name) ||
          options.run.localInputs.count(name)) {
        cli.error(
            "input '" + name + "' is fed by --data and given by " +
            (options.run.inputs.count(name) ? "--input" : "--input-local"));
        return 2;
      }
    options.run.perStep = true;
  }
  if (!options.run.perStep &&
      (!options.run.log.empty() || !options.run.plot.empty())) {
    cli.error(std::string(options.run.log.empty() ? "--plot" : "--log") +
              " needs --per-step or --data");
    return 2;
  }
  if (options.run.perStep &&
      (options.run.check || *generate || !options.run.localInputs.empty() ||
       !options.run.localOutputs.empty())) {
    cli.error("--per-step reads global --input files and writes global "
              "--output files: it takes no --check, --generate, "
              "--input-local or --output-local");
    return 2;
  }
  // A bare --comm-trace is the text table.
  if (*commTrace && options.commTrace.empty())
    options.commTrace = "text";
  if (*hostfile && !*ranks) {
    cli.error("--hostfile needs -n (an external launcher takes its own)");
    return 2;
  }
  forwarded = cli.arguments({ranks, mpirun, hostfile});
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
  // Ranks by slot: host 0's slots first, so consecutive ranks (a mesh's
  // inner dim) share a host.
  if (!options.hostfile.empty()) {
    command.push_back("--hostfile");
    command.push_back(options.hostfile);
    command.push_back("--map-by");
    command.push_back("slot");
  }
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

/// Writes `text` to `path` (standard output for "-"); false after a
/// message naming `flag` when it cannot.
bool writeText(const std::string &text, const std::string &path,
               const char *flag, const MpiRanks &ranks) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  std::FILE *file = std::fopen(path.c_str(), "w");
  bool ok =
      file && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (file)
    ok = std::fclose(file) == 0 && ok;
  if (!ok)
    ranks.report(std::string(flag) + ": cannot write " + path + ": " +
                 std::strerror(errno));
  return ok;
}

/// Writes the traced steps' --trace timeline and --comm-trace report on
/// rank 0, from every rank's events. False (after a message) when rank 0
/// cannot write a file.
bool writeTraces(dtensor_program *program, const Options &options,
                 const MpiRanks &ranks) {
  int worldSize = ranks.worldSize();
  std::vector<TraceEvent> events =
      gatherTrace(program, ranks.rank(), worldSize);
  if (ranks.rank() != 0)
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
                    options.trace, "--trace", ranks);
  if (!options.commTrace.empty()) {
    std::vector<dtensor::tooling::TracedCall> calls;
    for (const TraceEvent &event : events)
      if (isCollectiveKind(event.kind))
        calls.push_back({event.rank, event.site, traceEventName(event.kind),
                         event.group, event.bytesSent,
                         event.end - event.start});
    dtensor::tooling::CommTrace trace = dtensor::tooling::buildCommTrace(
        sites, calls, worldSize, options.run.iters);
    std::string text =
        options.commTrace == "json"
            ? dtensor::tooling::commTraceJson(trace).dump(1) + "\n"
            : dtensor::tooling::formatCommTraceText(trace);
    ok &= writeText(text, options.commTraceFile, "--comm-trace-file", ranks);
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::vector<std::string> forwarded;
  if (std::optional<int> status = parseArgs(argc, argv, options, forwarded))
    return *status;
  if (options.ranks && !underLauncher())
    return launch(options, forwarded);

  int provided = 0, rank = 0, worldSize = 1;
  // Serialized: the runtime runs asynchronous collectives on a thread of
  // its own (docs/runtime.md).
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  int code;
  {
    MpiRanks ranks(rank, worldSize);
    if (options.ranks && options.ranks != worldSize) {
      ranks.report("-n " + std::to_string(options.ranks) +
                   " but the launcher started " + std::to_string(worldSize) +
                   " ranks");
      code = 1;
    } else {
      dtensor::tooling::RunTracing tracing;
      tracing.enabled = !options.trace.empty() || !options.commTrace.empty();
      tracing.writeReports = [&](dtensor_program *program) {
        return writeTraces(program, options, ranks);
      };
      code = dtensor::tooling::runSession(options.run, ranks, tracing);
    }
  }
  MPI_Finalize();
  return code;
}
