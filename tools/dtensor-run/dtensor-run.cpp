//===- dtensor-run.cpp - run an artifact on MPI ranks -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run model.dtc -n 4 [--input x=x.npy | --random-inputs SEED]
//     [--weights w.safetensors] [--seed N] [--output y=y.npy] [--check]
//     [--iters N]
//
// With -n, starts itself under `mpirun`; without, it is one rank of an
// external launcher (mpirun, Slurm) or a world of one. Everything goes
// through the runtime's C API; MPI is used directly only to agree on
// failures of this tool's own steps (reading files) and on the --check
// verdict, so that every rank exits with the same status.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Formats/DType.h"
#include "dtensor/Formats/Npy.h"

#include "dtensor/runtime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using dtensor::rt::DType;

namespace {

const char *const kUsage =
    "usage: dtensor-run ARTIFACT [-n RANKS] [options]\n"
    "\n"
    "Runs a compiled dtensor artifact on every rank.\n"
    "\n"
    "  -n RANKS                 start RANKS processes with mpirun (otherwise\n"
    "                           run as one rank of an external launcher)\n"
    "  --input NAME=FILE.npy    global value of input NAME (repeatable)\n"
    "  --random-inputs SEED     random normal values for the inputs and\n"
    "                           weights given no file or initializer, from\n"
    "                           SEED\n"
    "  --weights FILE           safetensors file of global weights\n"
    "  --seed N                 seed of the weights' initializers, for those\n"
    "                           given no file (default 0)\n"
    "  --output NAME=FILE.npy   write global output NAME (repeatable)\n"
    "  --check                  compare the outputs with the artifact's\n"
    "                           single-device reference program\n"
    "  --tolerance X            largest relative error --check accepts\n"
    "                           (default 1e-5; 1e-2 for f16/bf16)\n"
    "  --iters N                steps to run and time (default 1)\n"
    "  --warmup N               untimed steps first (default 0)\n"
    "  --threads N              BLAS threads per rank (default: cores/ranks)\n"
    "  --mpirun PATH            launcher for -n (default: mpirun)\n"
    "  -q, --quiet              print errors only\n"
    "  -h, --help               this text\n";

struct Options {
  std::string artifact;
  int ranks = 0;
  std::map<std::string, std::string> inputs;
  std::optional<uint64_t> randomSeed;
  std::string weights;
  uint64_t seed = 0;
  std::map<std::string, std::string> outputs;
  bool check = false;
  std::optional<double> tolerance;
  int iters = 1;
  int warmup = 0;
  int threads = 0;
  std::string mpirun = "mpirun";
  bool quiet = false;
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

bool parseNameFile(const std::string &text, const char *flag,
                   std::map<std::string, std::string> &into) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 ||
      equals + 1 == text.size()) {
    std::fprintf(stderr, "dtensor-run: %s expects NAME=FILE, not '%s'\n", flag,
                 text.c_str());
    return false;
  }
  into[text.substr(0, equals)] = text.substr(equals + 1);
  return true;
}

template <typename T>
bool parseNumber(const std::string &text, const char *flag, T &value) {
  char *end = nullptr;
  errno = 0;
  if constexpr (std::is_floating_point_v<T>)
    value = std::strtod(text.c_str(), &end);
  else
    value = static_cast<T>(std::strtoll(text.c_str(), &end, 10));
  if (text.empty() || *end || errno || value < 0) {
    std::fprintf(stderr, "dtensor-run: %s expects a non-negative number, not "
                 "'%s'\n", flag, text.c_str());
    return false;
  }
  return true;
}

/// Parses the command line; `forwarded` gets the arguments for the ranks
/// when -n starts them.
bool parseArgs(int argc, char **argv, Options &options,
               std::vector<std::string> &forwarded) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &into) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "dtensor-run: %s needs a value\n", arg.c_str());
        return false;
      }
      into = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "-n") {
      if (!value(text) || !parseNumber(text, "-n", options.ranks))
        return false;
      if (options.ranks < 1) {
        std::fprintf(stderr, "dtensor-run: -n must be at least 1\n");
        return false;
      }
      continue;
    }
    if (arg == "--mpirun") {
      if (!value(options.mpirun))
        return false;
      continue;
    }
    forwarded.push_back(arg);
    if (arg == "--input" || arg == "--output") {
      if (!value(text) ||
          !parseNameFile(text, arg.c_str(),
                         arg == "--input" ? options.inputs : options.outputs))
        return false;
    } else if (arg == "--random-inputs") {
      uint64_t seed = 0;
      if (!value(text) || !parseNumber(text, "--random-inputs", seed))
        return false;
      options.randomSeed = seed;
    } else if (arg == "--seed") {
      if (!value(text) || !parseNumber(text, "--seed", options.seed))
        return false;
    } else if (arg == "--weights") {
      if (!value(options.weights))
        return false;
    } else if (arg == "--check") {
      options.check = true;
    } else if (arg == "--tolerance") {
      double tolerance = 0;
      if (!value(text) || !parseNumber(text, "--tolerance", tolerance))
        return false;
      options.tolerance = tolerance;
    } else if (arg == "--iters" || arg == "--warmup" || arg == "--threads") {
      int number = 0;
      if (!value(text) || !parseNumber(text, arg.c_str(), number))
        return false;
      (arg == "--iters" ? options.iters
                        : arg == "--warmup" ? options.warmup
                                            : options.threads) = number;
    } else if (arg == "-q" || arg == "--quiet") {
      options.quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "dtensor-run: unknown option %s\n%s", arg.c_str(),
                   kUsage);
      return false;
    } else if (options.artifact.empty()) {
      options.artifact = arg;
    } else {
      std::fprintf(stderr, "dtensor-run: more than one artifact given\n");
      return false;
    }
    if (forwarded.back() != argv[i])
      forwarded.push_back(argv[i]);
  }
  if (options.artifact.empty()) {
    std::fputs(kUsage, stderr);
    return false;
  }
  if (options.iters < 1) {
    std::fprintf(stderr, "dtensor-run: --iters must be at least 1\n");
    return false;
  }
  return true;
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

  size_t numElements() const {
    size_t count = 1;
    for (int64_t size : shape)
      count *= static_cast<size_t>(size);
    return count;
  }
  size_t bytes() const { return numElements() * dtensor_dtype_size(dtype); }
  std::string typeString() const {
    std::string text = dtensor::rt::dtypeName(static_cast<DType>(dtype));
    text += "[";
    for (size_t i = 0; i < shape.size(); ++i)
      text += (i ? "x" : "") + std::to_string(shape[i]);
    return text + "]";
  }
};

std::vector<TensorView> listTensors(dtensor_program *program) {
  int32_t count = 0;
  dtensor_program_num_tensors(program, &count);
  std::vector<TensorView> tensors;
  for (int32_t i = 0; i < count; ++i) {
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, i, &info);
    tensors.push_back({info.name, info.role, info.dtype,
                       std::vector<int64_t>(info.global_shape,
                                            info.global_shape + info.ndim)});
  }
  return tensors;
}

/// Reads an element of any dtype as double (for statistics and --check).
double elementAt(const std::vector<uint8_t> &data, dtensor_dtype dtype,
                 size_t index) {
  const uint8_t *p = data.data() + index * dtensor_dtype_size(dtype);
  switch (dtype) {
  case DTENSOR_F32: { float v; std::memcpy(&v, p, 4); return v; }
  case DTENSOR_F64: { double v; std::memcpy(&v, p, 8); return v; }
  case DTENSOR_F16: { uint16_t v; std::memcpy(&v, p, 2); return dtensor::rt::halfToFloat(v); }
  case DTENSOR_BF16: { uint16_t v; std::memcpy(&v, p, 2); return dtensor::rt::bf16ToFloat(v); }
  case DTENSOR_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case DTENSOR_I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
  case DTENSOR_I8: return static_cast<int8_t>(*p);
  case DTENSOR_BOOL: return *p != 0;
  }
  return 0;
}

bool isFloat(dtensor_dtype dtype) {
  return dtype == DTENSOR_F32 || dtype == DTENSOR_F64 ||
         dtype == DTENSOR_F16 || dtype == DTENSOR_BF16;
}

/// Runs the whole job on this rank; returns the exit status.
int runRank(const Options &options) {
  auto fail = [&](dtensor_status status) {
    report(dtensor_last_error(), status);
    return 1;
  };

  // Files first, before any collective call: a rank that cannot read its
  // input must not leave the others waiting in the runtime.
  std::map<std::string, dtensor::rt::NpyArray> inputArrays;
  bool readFailed = false;
  for (const auto &[name, path] : options.inputs) {
    std::string error = dtensor::rt::readNpy(path, inputArrays[name]);
    if (!error.empty()) {
      report("--input " + name + ": " + error);
      readFailed = true;
    }
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
  int exitCode = 0;
  auto finish = [&](int code) {
    dtensor_program_destroy(program);
    dtensor_context_destroy(context);
    return code;
  };

  std::vector<TensorView> tensors = listTensors(program);
  // Names the user gave must exist (every rank sees the same manifest).
  for (const auto *given : {&options.inputs, &options.outputs})
    for (const auto &entry : *given) {
      auto it = std::find_if(tensors.begin(), tensors.end(),
                             [&](const TensorView &t) {
                               return t.name == entry.first;
                             });
      bool wantOutput = given == &options.outputs;
      if (it == tensors.end() ||
          (it->role == DTENSOR_OUTPUT) != wantOutput) {
        std::string known;
        for (const TensorView &t : tensors)
          if ((t.role == DTENSOR_OUTPUT) == wantOutput)
            known += (known.empty() ? "" : ", ") + t.name;
        report(std::string(wantOutput ? "--output" : "--input") + ": the "
               "program has no " + (wantOutput ? "output" : "input") + " '" +
               entry.first + "' (it has: " + known + ")");
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
    dtensor_program_has_init(program, static_cast<int32_t>(index), &hasInit);
    if (tensor.role == DTENSOR_OUTPUT ||
        (tensor.role == DTENSOR_WEIGHT &&
         (!options.weights.empty() || hasInit)))
      continue;
    auto file = inputArrays.find(tensor.name);
    if (file != inputArrays.end()) {
      const dtensor::rt::NpyArray &array = file->second;
      if (dtensor_status status = dtensor_program_set(
              program, tensor.name.c_str(), DTENSOR_GLOBAL,
              static_cast<dtensor_dtype>(array.dtype),
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
                                                  "=FILE.npy") +
             " or --random-inputs SEED");
      return finish(1);
    }
    if (dtensor_status status = dtensor_program_fill(
            program, tensor.name.c_str(),
            isFloat(tensor.dtype) ? DTENSOR_RANDN : DTENSOR_ZEROS, 0.0,
            *options.randomSeed * 1000003u + index))
      return finish(fail(status));
  }

  // Steps.
  for (int i = 0; i < options.warmup; ++i)
    if (dtensor_status status = dtensor_program_run(program))
      return finish(fail(status));
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

  // Global values on rank 0: the outputs, and for --check also the inputs
  // and weights the reference program needs.
  std::map<std::string, std::vector<uint8_t>> globals;
  for (const TensorView &tensor : tensors) {
    if (tensor.role != DTENSOR_OUTPUT && !options.check)
      continue;
    std::vector<uint8_t> &data = globals[tensor.name];
    if (rank == 0)
      data.resize(tensor.bytes());
    if (dtensor_status status = dtensor_program_get(
            program, tensor.name.c_str(), DTENSOR_GLOBAL, 0,
            rank == 0 ? data.data() : nullptr, rank == 0 ? data.size() : 0))
      return finish(fail(status));
  }

  bool writeFailed = false;
  if (rank == 0) {
    for (const TensorView &tensor : tensors) {
      if (tensor.role != DTENSOR_OUTPUT)
        continue;
      const std::vector<uint8_t> &data = globals[tensor.name];
      auto file = options.outputs.find(tensor.name);
      if (file != options.outputs.end()) {
        std::string error = dtensor::rt::writeNpy(
            file->second, static_cast<DType>(tensor.dtype), tensor.shape,
            data.data());
        if (!error.empty()) {
          report("--output " + tensor.name + ": " + error);
          writeFailed = true;
        }
      } else if (!options.quiet) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        size_t count = tensor.numElements();
        for (size_t i = 0; i < count; ++i) {
          double v = elementAt(data, tensor.dtype, i);
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
    MPI_Comm self = MPI_COMM_SELF;
    dtensor_context_options selfOptions{sizeof(dtensor_context_options), &self,
                                        options.threads};
    dtensor_load_options loadOptions{sizeof(dtensor_load_options), 1};
    dtensor_context *single = nullptr;
    dtensor_program *reference = nullptr;
    dtensor_status status = dtensor_context_create(&selfOptions, &single);
    if (!status)
      status = dtensor_program_load(single, options.artifact.c_str(),
                                    &loadOptions, &reference);
    for (const TensorView &tensor : tensors) {
      if (status || tensor.role == DTENSOR_OUTPUT)
        continue;
      const std::vector<uint8_t> &data = globals[tensor.name];
      status = dtensor_program_set(reference, tensor.name.c_str(),
                                   DTENSOR_GLOBAL, tensor.dtype,
                                   static_cast<int32_t>(tensor.shape.size()),
                                   tensor.shape.data(), data.data(),
                                   data.size());
    }
    if (!status)
      status = dtensor_program_run(reference);
    for (const TensorView &tensor : tensors) {
      if (status || tensor.role != DTENSOR_OUTPUT)
        continue;
      std::vector<uint8_t> expected(tensor.bytes());
      status = dtensor_program_get(reference, tensor.name.c_str(),
                                   DTENSOR_GLOBAL, -1, expected.data(),
                                   expected.size());
      if (status)
        break;
      const std::vector<uint8_t> &actual = globals[tensor.name];
      double maxAbs = 0, maxRef = 0;
      size_t mismatches = 0, count = tensor.numElements();
      for (size_t i = 0; i < count; ++i) {
        double want = elementAt(expected, tensor.dtype, i);
        double got = elementAt(actual, tensor.dtype, i);
        if (std::isnan(want) != std::isnan(got)) {
          ++mismatches;
          continue;
        }
        if (std::isnan(want))
          continue;
        double error = std::fabs(want - got);
        if (std::isinf(want) || std::isinf(got))
          error = want == got ? 0 : INFINITY;
        maxAbs = std::max(maxAbs, error);
        maxRef = std::max(maxRef, std::fabs(want));
        mismatches += error != 0;
      }
      bool ok;
      if (isFloat(tensor.dtype)) {
        double tolerance = options.tolerance.value_or(
            tensor.dtype == DTENSOR_F32 || tensor.dtype == DTENSOR_F64 ? 1e-5
                                                                       : 1e-2);
        // Relative to the largest reference magnitude, so that entries
        // near zero do not dominate.
        double maxRel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
        ok = maxRel <= tolerance && !std::isnan(maxRel);
        std::printf("check %s: max abs error %.3g, max rel error %.3g "
                    "(tolerance %.3g): %s\n",
                    tensor.name.c_str(), maxAbs, maxRel, tolerance,
                    ok ? "ok" : "MISMATCH");
      } else {
        ok = mismatches == 0;
        std::printf("check %s: %zu of %zu elements differ: %s\n",
                    tensor.name.c_str(), mismatches, count,
                    ok ? "ok" : "MISMATCH");
      }
      checkFailed |= !ok;
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
  if (!parseArgs(argc, argv, options, forwarded))
    return 2;
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
