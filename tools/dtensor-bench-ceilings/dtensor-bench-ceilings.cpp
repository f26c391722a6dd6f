//===- dtensor-bench-ceilings.cpp - machine limits ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-bench-ceilings [--quick] [--gemm-size N] [--gemm-reps N]
//     [--stream-mib N] [--stream-reps N] [-o FILE]
// dtensor-bench-ceilings --calibrate-topology FILE [--quick]
//     [--tcp-peer HOST:PORT] [-o FILE]
// dtensor-bench-ceilings --tcp-echo PORT
//
// Measures the two ceilings the benchmarks (scripts/bench.sh) compare the
// compiled programs with, and prints them as JSON:
//
// - GEMM peak: single-precision GEMM (cblas_sgemm, row-major, square N x N,
//   alpha 1, beta 0) in Debian's OpenBLAS, the library the runtime uses.
//   OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded, so each kernel
//   family the CPU supports is measured in a child process of its own (this
//   program started again with --child-gemm), with 1 thread; "auto" is the
//   family OpenBLAS picks by itself (--families measures only some: a quick
//   probe of the peak). The best family is then measured with
//   all cores as threads (one process), and as one 1-thread process per core
//   running at the same time (the per-rank peak of a run with one rank per
//   core). Each figure is the best of several products (--gemm-reps, fewer
//   when they take more than about 3 s): 2 N^3 / time.
//
// - Streaming memory bandwidth: STREAM-like kernels over arrays much larger
//   than the last-level cache (by default each array is the larger of
//   256 MiB and twice the LLC), with 1 thread and with one thread per core,
//   best of several passes. Bytes are counted as STREAM does: what the
//   kernel reads plus what it writes (copy: 2 arrays, triad: 3, read: 1);
//   the read-for-ownership traffic of plain stores (write-allocate) is not
//   counted.
//
// With --calibrate-topology it instead measures the latency and bandwidth
// of this machine's links between two processes (shared memory, and TCP
// over the loopback interface or to a --tcp-echo peer in another network
// namespace) by ping-pong, and one rank's compute rate (the runtime's
// sgemm on one thread), and writes them as a topology file
// (LinkCalibration.h, docs/topology.md).
//
// With --gemm-list it instead times a given list of products (a model
// step's matrix products alone, for python/dtensor_bench) as the runtime
// computes them: through its matrix-product library (runtime/lib/Blas.h,
// OpenBLAS or its own kernels for products of a few rows).
//
// Everything it prints, and what it reads back from its children, is JSON
// written and parsed with nlohmann/json: a CPU name or a list of kernel
// families of any length stays well-formed. The testing aids
// --test-cpu-model and --test-cpu-features stand in for the CPU's answers
// (test/Tools/dtensor-bench-ceilings).
//
// No MLIR: libc, threads, dlopen, that static library, nlohmann/json and
// the tools' command line (runtime/tooling).
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "LinkCalibration.h"
#include "OpenBlasLoader.h"

#include "dtensor/Formats/Topology.h"
#include "dtensor/Tooling/CommandLine.h"
#include "dtensor/Tooling/FlagValues.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cpuid.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <optional>
#include <string>
#include <strings.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/// Keys in the order they are set, as the output has always shown them.
using Json = nlohmann::ordered_json;

/// Prints `value` on standard output, one line (a child's answer).
void printJson(const Json &value) {
  std::printf("%s\n",
              value.dump(-1, ' ', false, Json::error_handler_t::replace)
                  .c_str());
}

/// `value` rounded to `digits` decimals: what the output shows of a
/// measurement (3 for GFLOP/s and GB/s).
double rounded(double value, int digits = 3) {
  double scale = std::pow(10.0, digits);
  return std::isfinite(value) ? std::round(value * scale) / scale : value;
}

// --- the CPU --------------------------------------------------------------

struct CpuFeatures {
  bool sse3 = false, avx = false, avx2 = false, fma = false;
  bool avx512 = false;     // F, DQ, BW, VL with the OS saving ZMM state
  bool avx512bf16 = false; // Cooper Lake's extension
  std::string model;
  bool simulated = false;  // a testing aid replaced CPUID's answers
};

/// The names --test-cpu-features takes, with the flag each sets.
const std::pair<const char *, bool CpuFeatures::*> kFeatureNames[] = {
    {"sse3", &CpuFeatures::sse3},     {"avx", &CpuFeatures::avx},
    {"avx2", &CpuFeatures::avx2},     {"fma", &CpuFeatures::fma},
    {"avx512", &CpuFeatures::avx512}, {"avx512bf16", &CpuFeatures::avx512bf16}};

uint64_t readXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures detectCpu() {
  CpuFeatures cpu;
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    cpu.sse3 = ecx & 1u;
    bool osxsave = ecx & (1u << 27);
    bool osAvx = osxsave && (readXcr0() & 0x6) == 0x6;
    bool osAvx512 = osxsave && (readXcr0() & 0xe6) == 0xe6;
    cpu.avx = osAvx && (ecx & (1u << 28));
    cpu.fma = cpu.avx && (ecx & (1u << 12));
    if (cpu.avx && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
      cpu.avx2 = ebx & (1u << 5);
      cpu.avx512 = osAvx512 && (ebx & (1u << 16)) && (ebx & (1u << 17)) &&
                   (ebx & (1u << 30)) && (ebx & (1u << 31));
      if (cpu.avx512 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
        cpu.avx512bf16 = eax & (1u << 5);
    }
  }
  // The brand string, CPUID leaves 0x80000002..4.
  char brand[49] = {};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    unsigned regs[4];
    if (!__get_cpuid(0x80000002 + leaf, &regs[0], &regs[1], &regs[2],
                     &regs[3]))
      break;
    std::memcpy(brand + 16 * leaf, regs, 16);
  }
  cpu.model = brand;
  cpu.model.erase(0, cpu.model.find_first_not_of(' '));
  return cpu;
}

/// The OpenBLAS kernel families (OPENBLAS_CORETYPE names) this CPU can run,
/// best first, then "auto": whatever OpenBLAS picks by itself.
std::vector<std::string> candidateCores(const CpuFeatures &cpu) {
  std::vector<std::string> cores;
  if (cpu.avx512bf16)
    cores.push_back("Cooperlake");
  if (cpu.avx512)
    cores.push_back("SkylakeX");
  if (cpu.avx2 && cpu.fma)
    cores.push_back("Haswell");
  if (cpu.avx)
    cores.push_back("Sandybridge");
  if (cpu.sse3)
    cores.push_back("Prescott");
  cores.push_back("auto");
  return cores;
}

/// The family the dtensor runtime asks OpenBLAS for (OpenBlasLoader.h):
/// DTENSOR_BLAS_CORETYPE when set, else the CPU's best (the rules of
/// detectCoreType, on `cpu`'s features, which --test-cpu-features may
/// simulate), or "auto" where it leaves the choice to OpenBLAS. A preset
/// OPENBLAS_CORETYPE does not count: the runtime's private copy of OpenBLAS
/// never sees it.
std::string runtimeCore(const CpuFeatures &cpu) {
  dtensor::rt::blas::KernelFamilyChoice choice =
      dtensor::rt::blas::chooseKernelFamily();
  if (choice.source != "cpuid")
    return choice.family;
  if (cpu.avx512)
    return "SkylakeX";
  if (cpu.avx2 && cpu.fma)
    return "Haswell";
  return "auto";
}

long lastLevelCacheBytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long bytes = sysconf(name);
    if (bytes > 0)
      return bytes;
  }
  return 0;
}

// --- GEMM (child process) -------------------------------------------------

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
using SetThreadsFn = void (*)(int);
using CoreNameFn = char *(*)();

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct OpenBlas {
  SgemmFn sgemm = nullptr;
  CoreNameFn coreName = nullptr;
};

/// Loads OpenBLAS (the runtime's library paths) with
/// OPENBLAS_CORETYPE=core (unless "auto"), `threads` threads. OpenBLAS
/// reads the variable when it loads: once per process.
bool loadOpenBlas(const std::string &core, int threads, OpenBlas &blas) {
  if (core != "auto")
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  else
    unsetenv("OPENBLAS_CORETYPE");
  void *handle = nullptr;
  for (const char *name :
       {"libopenblas.so.0",
        "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"})
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!handle) {
    printJson({{"error", "libopenblas.so.0 not found"}});
    return false;
  }
  blas.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  auto setThreads =
      reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
  blas.coreName =
      reinterpret_cast<CoreNameFn>(dlsym(handle, "openblas_get_corename"));
  if (!blas.sgemm) {
    printJson({{"error", "no cblas_sgemm"}});
    return false;
  }
  if (setThreads)
    setThreads(threads);
  return true;
}

/// Runs in a child: times sgemm N x N x N and prints one JSON object.
/// `minSeconds`: keep repeating past `reps` until this much time has passed
/// (so that processes started together overlap for the whole measurement).
int childGemm(const std::string &core, int threads, int n, int reps,
              double minSeconds) {
  OpenBlas blas;
  if (!loadOpenBlas(core, threads, blas))
    return 1;
  auto sgemm = blas.sgemm;
  auto coreName = blas.coreName;
  size_t count = static_cast<size_t>(n) * n;
  std::vector<float> a(count), b(count), c(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>((i * 7 + 3) % 17) / 17.0f - 0.5f;
    b[i] = static_cast<float>((i * 5 + 1) % 13) / 13.0f - 0.5f;
  }
  auto product = [&] {
    sgemm(101, 111, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
          c.data(), n); // row-major, no transposes
  };
  product(); // warm-up: thread start, page faults
  // `reps` products, but no more than about 3 s of them once two are done
  // (slow families), and as many as `minSeconds` needs.
  double best = 1e30, start = seconds();
  auto more = [&](int rep) {
    double elapsed = seconds() - start;
    return (rep < reps && (rep < 2 || elapsed < 3.0)) || elapsed < minSeconds;
  };
  for (int rep = 0; more(rep); ++rep) {
    double t0 = seconds();
    product();
    best = std::min(best, seconds() - t0);
  }
  double gflops = 2.0 * n * double(n) * n / best / 1e9;
  Json result;
  result["corename"] = coreName ? coreName() : "unknown";
  result["gflops"] = rounded(gflops);
  result["best_s"] = rounded(best, 6);
  printJson(result);
  return 0;
}

// --- a list of products (--gemm-list) -----------------------------------------

/// One product of a list: `batch` independent row-major products
/// C[m x n] = A[m x k] x op(B), op(B) = B^T of a [n x k] B when `transB`
/// (a linear layer's weight) else B [k x n]; each with its own buffers.
struct ListedGemm {
  long batch, m, n, k;
  bool transB;
  std::vector<float> a, b, c;
};

/// Parses "BxMxNxKxT,..." (T: t for B^T, n for B), e.g. "1x256x8192x2048xt".
bool parseGemmList(const std::string &text, std::vector<ListedGemm> &list) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    ListedGemm g;
    char trans = 0;
    if (std::sscanf(item.c_str(), "%ldx%ldx%ldx%ldx%c", &g.batch, &g.m, &g.n,
                    &g.k, &trans) != 5 ||
        (trans != 't' && trans != 'n') || g.batch < 1 || g.m < 1 ||
        g.n < 1 || g.k < 1) {
      std::fprintf(stderr, "dtensor-bench-ceilings: bad product '%s' "
                   "(expected BxMxNxKxT, T t or n)\n", item.c_str());
      return false;
    }
    g.transB = trans == 't';
    list.push_back(std::move(g));
    start = end + 1;
  }
  return !list.empty();
}

/// Times the products of `list` one after the other, as a step of a model
/// runs them, and prints the median and best of `reps` passes (after one
/// untimed) as JSON.
int gemmList(const std::string &core, int threads, const std::string &text,
             int reps) {
  std::vector<ListedGemm> list;
  if (!parseGemmList(text, list))
    return 1;
  // OpenBLAS loaded here first, with the kernel family asked for; the
  // runtime's library then opens the same one.
  OpenBlas blas;
  if (!loadOpenBlas(core, threads, blas))
    return 1;
  dtensor::rt::blas::setThreads(threads);
  double flops = 0;
  for (ListedGemm &g : list) {
    g.a.assign(g.batch * g.m * g.k, 0.5f);
    g.b.assign(g.batch * g.k * g.n, 0.25f);
    g.c.assign(g.batch * g.m * g.n, 0.0f);
    flops += 2.0 * g.batch * g.m * g.n * g.k;
  }
  auto pass = [&] {
    for (ListedGemm &g : list)
      for (long i = 0; i < g.batch; ++i)
        dtensor::rt::blas::sgemm(
            false, g.transB, g.m, g.n, g.k, g.a.data() + i * g.m * g.k, g.k,
            g.b.data() + i * g.k * g.n, g.transB ? g.k : g.n, 0.0f,
            g.c.data() + i * g.m * g.n, g.n);
  };
  pass();
  std::vector<double> times;
  for (int rep = 0; rep < reps; ++rep) {
    double t0 = seconds();
    pass();
    times.push_back(seconds() - t0);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  Json result;
  result["corename"] = blas.coreName ? blas.coreName() : "unknown";
  result["threads"] = threads;
  result["products"] = list.size();
  result["median_ms"] = rounded(1e3 * median, 6);
  result["best_ms"] = rounded(1e3 * times.front(), 6);
  result["gflops"] = rounded(flops / median / 1e9);
  printJson(result);
  return 0;
}

// --- the compute rate of one rank (--calibrate-topology) ---------------------

/// The side of the square products the compute rate is measured on: the
/// size of a small transformer's layer products (llama_tiny's are 64 to 256
/// wide), large enough that the rate is the kernel's and not a call's.
constexpr int kComputeGemmSize = 256;

/// One rank's arithmetic rate in GFLOP/s, as the compiled programs compute
/// their products: the runtime's matrix-product library (runtime/lib/Blas.h)
/// on one thread (a rank's share of the cores when ranks fill them), f32,
/// square kComputeGemmSize products, the fastest of those run during at
/// least `minSeconds`: 2 n^3 / time.
double measureComputeGflops(double minSeconds) {
  const int64_t n = kComputeGemmSize;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  dtensor::rt::blas::setThreads(1);
  auto product = [&] {
    dtensor::rt::blas::sgemm(false, false, n, n, n, a.data(), n, b.data(), n,
                             0.0f, c.data(), n);
  };
  product(); // loads OpenBLAS and warms the caches
  double best = 1e30;
  for (double start = seconds(); seconds() - start < minSeconds;) {
    double t0 = seconds();
    product();
    best = std::min(best, seconds() - t0);
  }
  return 2.0 * n * n * n / best / 1e9;
}

// --- child processes --------------------------------------------------------

struct Child {
  pid_t pid = -1;
  int out = -1; // read end of its stdout
};

/// Starts this program again with `args`; its stdout comes back on a pipe.
Child spawnSelf(const std::vector<std::string> &args) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("dtensor-bench-ceilings: pipe");
    std::exit(1);
  }
  Child child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<std::string> argv = {"/proc/self/exe"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char *> raw;
    for (std::string &arg : argv)
      raw.push_back(arg.data());
    raw.push_back(nullptr);
    execv("/proc/self/exe", raw.data());
    _exit(127);
  }
  close(fds[1]);
  child.out = fds[0];
  return child;
}

/// Waits for a child; returns its output, or "" when it failed (a crash,
/// e.g. SIGILL for kernels the CPU cannot run, or a non-zero status).
std::string finish(Child &child) {
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = read(child.out, buffer, sizeof(buffer))) > 0)
    text.append(buffer, got);
  close(child.out);
  int status = 0;
  waitpid(child.pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// A child's answer: the JSON object it printed, or an empty object when
/// it failed or printed anything else.
Json childResult(Child &child) {
  Json result = Json::parse(finish(child), nullptr, /*allow_exceptions=*/false);
  return result.is_object() ? result : Json::object();
}

/// The number `key` of a child's answer, or -1.
double numberOf(const Json &result, const char *key) {
  auto it = result.find(key);
  return it != result.end() && it->is_number() ? it->get<double>() : -1;
}

/// The string `key` of a child's answer, or "".
std::string stringOf(const Json &result, const char *key) {
  auto it = result.find(key);
  return it != result.end() && it->is_string() ? it->get<std::string>() : "";
}

// --- streaming bandwidth ------------------------------------------------------

struct StreamResult {
  double copy = 0, triad = 0, read = 0; // GB/s (1e9 bytes per second)
};

/// Runs `body(begin, end)` on `threads` threads over [0, n), each thread
/// always getting the same slice (so first-touch placement matches).
template <typename Body>
void parallelFor(int threads, size_t n, Body body) {
  std::vector<std::thread> pool;
  size_t chunk = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    size_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([=] { body(t, begin, end); });
  }
  for (std::thread &thread : pool)
    thread.join();
}

StreamResult measureStream(float *a, float *b, float *c, size_t n, int threads,
                           int reps) {
  StreamResult result;
  const double bytes = static_cast<double>(n) * sizeof(float);
  std::vector<double> sums(threads);
  auto best = [&](auto kernel, double counted) {
    double fastest = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
      double t0 = seconds();
      parallelFor(threads, n, kernel);
      fastest = std::min(fastest, seconds() - t0);
    }
    return counted / fastest / 1e9;
  };
  result.copy = best(
      [=](int, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i)
          c[i] = a[i];
      },
      2 * bytes);
  const float scalar = 3.0f;
  result.triad = best(
      [=](int, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i)
          a[i] = b[i] + scalar * c[i];
      },
      3 * bytes);
  double *sumSlots = sums.data();
  result.read = best(
      [=](int t, size_t lo, size_t hi) {
        // 32 partial sums (eight SSE registers): the additions must not be
        // one dependence chain, or their latency, not memory, is the limit.
        float s[32] = {};
        size_t i = lo;
        for (; i + 32 <= hi; i += 32)
          for (int j = 0; j < 32; ++j)
            s[j] += a[i + j];
        for (; i < hi; ++i)
          s[0] += a[i];
        double total = 0;
        for (float v : s)
          total += v;
        sumSlots[t] = total; // keeps the loads alive
      },
      bytes);
  volatile double sink = 0;
  for (double s : sums)
    sink = sink + s;
  return result;
}

// --- the command line -------------------------------------------------------

struct Options {
  bool quick = false;
  int gemmSize = 2048;
  int gemmReps = 5;
  long streamMiB = 0; // 0: the larger of 256 MiB and twice the LLC
  int streamReps = 10;
  std::string output;
  std::vector<std::string> families; // empty: every supported one
  // --gemm-list CORETYPE THREADS LIST REPS: time a list of products instead.
  std::vector<std::string> gemmList;
  // --child-gemm CORETYPE THREADS N REPS MIN_SECONDS: one family's product,
  // in a child process this program starts.
  std::vector<std::string> childGemm;
  // --calibrate-topology FILE: measure the links, write a topology file.
  std::string calibrateTopology;
  std::string tcpPeer;
  // --tcp-echo PORT: the peer of --tcp-peer.
  int tcpEcho = 0;
  // Testing aids: stand in for what CPUID says.
  std::optional<std::string> testCpuModel;
  std::optional<std::string> testCpuFeatures;
};

/// Parses the command line; std::nullopt to go on, else the exit status
/// (0 after --help, 1 after a mistake).
std::optional<int> parseArgs(int argc, char **argv, Options &options) {
  using dtensor::tooling::integerAtLeast;
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  dtensor::tooling::CommandLine cli(
      "dtensor-bench-ceilings",
      "usage: dtensor-bench-ceilings [--quick] [--gemm-size N] "
      "[--gemm-reps N]\n"
      "           [--stream-mib N] [--stream-reps N] [-o FILE]\n"
      "       dtensor-bench-ceilings --gemm-list CORETYPE THREADS LIST REPS\n"
      "       dtensor-bench-ceilings --calibrate-topology FILE [--quick] "
      "[--tcp-peer HOST:PORT]\n"
      "       dtensor-bench-ceilings --tcp-echo PORT",
      "Measures the single-precision GEMM peak of OpenBLAS (each kernel "
      "family\n"
      "the CPU supports, 1 thread; the best one with all cores) and the\n"
      "streaming memory bandwidth (copy, triad, read; 1 thread and all "
      "cores),\n"
      "and prints them as JSON.");
  CLI::App &app = cli.app();
  CLI::Option *quick = app.add_flag(
      "--quick", options.quick,
      "small sizes and few repetitions (for tests; the\n"
      "arrays then fit in cache: not a real bandwidth):\n"
      "the defaults become --gemm-size 512 --gemm-reps 3\n"
      "--stream-mib 16 --stream-reps 3");
  CLI::Option *gemmSize =
      app.add_option("--gemm-size", options.gemmSize,
                     "square GEMM size (default 2048)")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  CLI::Option *gemmReps =
      app.add_option("--gemm-reps", options.gemmReps,
                     "products timed per measurement, best kept (5)")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  CLI::Option *streamMiB =
      app.add_option("--stream-mib", options.streamMiB,
                     "MiB per stream array (default max(256, 2 x LLC))")
          ->type_name("N")
          ->transform(integerAtLeast(1, std::numeric_limits<long>::max()));
  CLI::Option *streamReps =
      app.add_option("--stream-reps", options.streamReps,
                     "passes per kernel, best kept (10)")
          ->type_name("N")
          ->transform(integerAtLeast(1, kIntMax));
  std::string families;
  CLI::Option *familiesOption =
      app.add_option("--families", families,
                     "only these OPENBLAS_CORETYPE families (comma-\n"
                     "separated; default: every one the CPU supports,\n"
                     "and auto)")
          ->type_name("LIST");
  CLI::Option *output =
      app.add_option("-o", options.output,
                     "write the JSON there (default: standard output)")
          ->type_name("FILE");
  CLI::Option *gemmList =
      app.add_option("--gemm-list", options.gemmList,
                     "time a list of products as one step runs them,\n"
                     "one after the other, with THREADS threads and\n"
                     "the OPENBLAS_CORETYPE CORETYPE (or auto): LIST\n"
                     "is BxMxNxKxT,... (B independent M x K by K x N\n"
                     "products, T t when the right operand is stored\n"
                     "N x K, as a linear's weight, else n); prints the\n"
                     "median and best of REPS passes as JSON")
          ->type_name("CORETYPE THREADS LIST REPS")
          ->expected(4)
          ->transform(integerAtLeast(1, kIntMax).application_index(1))
          ->transform(integerAtLeast(1, kIntMax).application_index(3));
  CLI::Option *calibrate =
      app.add_option("--calibrate-topology", options.calibrateTopology,
                     "instead measure the latency and bandwidth of\n"
                     "shared memory and TCP between two processes\n"
                     "(ping-pong, 8 B to 8 MiB; --quick: to 2 MiB)\n"
                     "and the compute rate of one rank (sgemm\n"
                     "256x256x256 f32, 1 thread), and write them to\n"
                     "FILE as a topology file\n"
                     "(docs/topology.md); prints the measurements as\n"
                     "JSON")
          ->type_name("FILE");
  CLI::Option *tcpPeer =
      app.add_option("--tcp-peer", options.tcpPeer,
                     "with --calibrate-topology: measure TCP against\n"
                     "the --tcp-echo server at HOST:PORT (another\n"
                     "host or network namespace) rather than a child\n"
                     "on 127.0.0.1")
          ->type_name("HOST:PORT");
  CLI::Option *tcpEcho =
      app.add_option("--tcp-echo", options.tcpEcho,
                     "serve one --tcp-peer connection on PORT: echo\n"
                     "each message until it closes")
          ->type_name("PORT")
          ->transform(integerAtLeast(1, 65535));
  // How the program runs one family's product in a child of its own.
  CLI::Option *childGemm =
      app.add_option("--child-gemm", options.childGemm,
                     "CORETYPE THREADS N REPS MIN_SECONDS: one product, "
                     "as a child")
          ->expected(5)
          ->transform(integerAtLeast(1, kIntMax).application_index(1))
          ->transform(integerAtLeast(1, kIntMax).application_index(2))
          ->transform(integerAtLeast(1, kIntMax).application_index(3))
          ->transform(dtensor::tooling::numberAtLeast(0).application_index(4))
          ->group("");
  cli.addHelp();
  CLI::Option *testModel =
      app.add_option("--test-cpu-model", options.testCpuModel,
                     "report NAME as the CPU's model (any text:\n"
                     "quotes, backslashes, any length)")
          ->type_name("NAME")
          ->group("Testing aids (stand in for what CPUID says)");
  CLI::Option *testFeatures =
      app.add_option("--test-cpu-features", options.testCpuFeatures,
                     "the CPU's instruction sets, comma-separated\n"
                     "among sse3, avx, avx2, fma, avx512, avx512bf16\n"
                     "(all six: every kernel family; one the CPU\n"
                     "cannot run fails in its child, \"ok\": false)")
          ->type_name("LIST")
          ->group("Testing aids (stand in for what CPUID says)");
  for (CLI::Option *other : {quick, gemmSize, gemmReps, streamMiB, streamReps,
                             familiesOption, output, testModel, testFeatures})
    for (CLI::Option *mode : {gemmList, childGemm})
      mode->excludes(other);
  gemmList->excludes(childGemm);
  for (CLI::Option *other :
       {gemmSize, gemmReps, streamMiB, streamReps, familiesOption, testModel,
        testFeatures, gemmList, childGemm})
    calibrate->excludes(other);
  for (CLI::Option *other : {quick, gemmSize, gemmReps, streamMiB, streamReps,
                             familiesOption, output, testModel, testFeatures,
                             gemmList, childGemm, calibrate, tcpPeer})
    tcpEcho->excludes(other);
  tcpPeer->needs(calibrate);

  if (std::optional<int> status = cli.parse(argc, argv, 1))
    return status;
  if (*gemmList && options.gemmList.size() != 4) {
    cli.error("--gemm-list expects CORETYPE THREADS LIST REPS");
    return 1;
  }
  if (*childGemm && options.childGemm.size() != 5) {
    cli.error("--child-gemm expects CORETYPE THREADS N REPS MIN_SECONDS");
    return 1;
  }
  // --quick changes the defaults; sizes given on the command line stay.
  if (options.quick) {
    if (!*gemmSize)
      options.gemmSize = 512;
    if (!*gemmReps)
      options.gemmReps = 3;
    if (!*streamMiB)
      options.streamMiB = 16;
    if (!*streamReps)
      options.streamReps = 3;
  }
  options.families = dtensor::tooling::splitList(families);
  if (*familiesOption && options.families.empty()) {
    cli.error("--families: expects a comma-separated list of "
              "OPENBLAS_CORETYPE names, not '" + families + "'");
    return 1;
  }
  if (options.testCpuFeatures)
    for (const std::string &name :
         dtensor::tooling::splitList(*options.testCpuFeatures))
      if (std::none_of(
              std::begin(kFeatureNames), std::end(kFeatureNames),
              [&](const auto &known) { return name == known.first; })) {
        cli.error("--test-cpu-features: unknown instruction set '" + name +
                  "' (known: sse3, avx, avx2, fma, avx512, avx512bf16)");
        return 1;
      }
  return std::nullopt;
}

/// The testing aids' CPU: CPUID's answers replaced by the options'.
void simulateCpu(const Options &options, CpuFeatures &cpu) {
  if (options.testCpuModel) {
    cpu.model = *options.testCpuModel;
    cpu.simulated = true;
  }
  if (options.testCpuFeatures) {
    std::vector<std::string> names =
        dtensor::tooling::splitList(*options.testCpuFeatures);
    for (const auto &[name, flag] : kFeatureNames)
      cpu.*flag = std::find(names.begin(), names.end(), name) != names.end();
    cpu.simulated = true;
  }
}

// --- output -----------------------------------------------------------------

Json streamJson(const StreamResult &r) {
  Json result;
  result["copy_gbps"] = rounded(r.copy);
  result["triad_gbps"] = rounded(r.triad);
  result["read_gbps"] = rounded(r.read);
  return result;
}

/// `json` on standard output, or in `path`; false (with a message) when it
/// cannot be written.
bool writeJson(const Json &json, const std::string &path) {
  std::string text =
      json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file || std::fputs(text.c_str(), file) < 0 || std::fclose(file) != 0) {
    std::perror(("dtensor-bench-ceilings: " + path).c_str());
    return false;
  }
  return true;
}

/// --calibrate-topology: measures the links, writes the topology file and
/// prints the measurements.
int calibrateTopology(const Options &options) {
  dtensor::bench::CalibrationOptions calibration;
  if (options.quick) {
    calibration.maxBytes = 2 << 20;
    calibration.reps = 50;
  }
  calibration.tcpPeer = options.tcpPeer;
  dtensor::bench::LinkMeasurement shm, tcp;
  std::fprintf(stderr, "calibrate: sgemm %dx%d, 1 thread ...\n",
               kComputeGemmSize, kComputeGemmSize);
  double computeGflops = measureComputeGflops(options.quick ? 0.05 : 0.5);
  std::string computeHow =
      "sgemm " + std::to_string(kComputeGemmSize) + "x" +
      std::to_string(kComputeGemmSize) + "x" +
      std::to_string(kComputeGemmSize) + " f32 on 1 thread (" +
      dtensor::rt::blas::coreName() + "), the fastest product";
  std::fprintf(stderr, "calibrate: shared memory ...\n");
  std::string error = dtensor::bench::measureSharedMemory(calibration, shm);
  if (error.empty()) {
    std::fprintf(stderr, "calibrate: TCP ...\n");
    error = dtensor::bench::measureTcp(calibration, tcp);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "dtensor-bench-ceilings: %s\n", error.c_str());
    return 1;
  }
  dtensor::rt::Topology topology;
  topology.links = {
      {"shared_memory", rounded(shm.latencyUs), rounded(shm.bandwidthGBps)},
      {"tcp", rounded(tcp.latencyUs), rounded(tcp.bandwidthGBps)}};
  topology.intraHost = "shared_memory";
  topology.interHost = "tcp";
  topology.computeGflops = rounded(computeGflops);
  topology.comment = "measured by dtensor-bench-ceilings --calibrate-topology"
                     " (ping-pong, " +
                     std::to_string(shm.points.front().bytes) + " B to " +
                     std::to_string(shm.points.back().bytes) +
                     " B): shared_memory is " + shm.how + ", tcp is " +
                     tcp.how + "; compute_gflops is " + computeHow;
  std::string text = dtensor::rt::encodeTopology(topology);
  FILE *file = std::fopen(options.calibrateTopology.c_str(), "w");
  if (!file || std::fputs(text.c_str(), file) < 0 || std::fclose(file) != 0) {
    std::perror(
        ("dtensor-bench-ceilings: " + options.calibrateTopology).c_str());
    return 1;
  }
  Json json;
  json["tool"] = "dtensor-bench-ceilings";
  json["mode"] = "calibrate-topology";
  json["quick"] = options.quick;
  json["topology_file"] = options.calibrateTopology;
  Json &compute = json["compute"];
  compute["how"] = computeHow;
  compute["gflops"] = rounded(computeGflops);
  Json &links = json["links"];
  for (const auto &[name, measured] :
       {std::pair<const char *, const dtensor::bench::LinkMeasurement *>{
            "shared_memory", &shm},
        {"tcp", &tcp}}) {
    Json link;
    link["how"] = measured->how;
    link["latency_us"] = rounded(measured->latencyUs);
    link["bandwidth_gbps"] = rounded(measured->bandwidthGBps);
    Json points = Json::array();
    for (const dtensor::bench::PingPongPoint &point : measured->points)
      points.push_back(
          {{"bytes", point.bytes}, {"one_way_us", rounded(point.oneWayUs)}});
    link["one_way"] = std::move(points);
    links[name] = std::move(link);
  }
  return writeJson(json, options.output) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::optional<int> status = parseArgs(argc, argv, options))
    return *status;
  if (options.tcpEcho)
    return dtensor::bench::serveTcpEcho(options.tcpEcho);
  if (!options.calibrateTopology.empty())
    return calibrateTopology(options);
  if (!options.childGemm.empty()) {
    const std::vector<std::string> &a = options.childGemm;
    return childGemm(a[0], std::stoi(a[1]), std::stoi(a[2]), std::stoi(a[3]),
                     std::stod(a[4]));
  }
  if (!options.gemmList.empty()) {
    const std::vector<std::string> &a = options.gemmList;
    return gemmList(a[0], std::stoi(a[1]), a[2], std::stoi(a[3]));
  }
  CpuFeatures cpu = detectCpu();
  simulateCpu(options, cpu);
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cores = std::max(cores, 1);
  long llc = lastLevelCacheBytes();
  std::string size = std::to_string(options.gemmSize);
  std::string reps = std::to_string(options.gemmReps);

  // GEMM: each family alone, one thread, one after the other.
  Json families = Json::array();
  std::string bestCore;
  double bestSingle = 0;
  std::vector<std::string> toMeasure = candidateCores(cpu);
  if (!options.families.empty()) {
    // Only the families asked for, among those this CPU supports.
    std::vector<std::string> kept;
    for (const std::string &core : toMeasure)
      for (const std::string &wanted : options.families)
        if (strcasecmp(core.c_str(), wanted.c_str()) == 0)
          kept.push_back(core);
    if (kept.empty()) {
      std::fprintf(stderr, "dtensor-bench-ceilings: --families: none of them "
                           "runs on this CPU\n");
      return 1;
    }
    toMeasure = kept;
  }
  for (const std::string &core : toMeasure) {
    std::fprintf(stderr, "ceilings: sgemm %sx%s, 1 thread, %s ...\n",
                 size.c_str(), size.c_str(), core.c_str());
    Child child = spawnSelf({"--child-gemm", core, "1", size, reps, "0"});
    Json result = childResult(child);
    double gflops = numberOf(result, "gflops");
    std::string corename = stringOf(result, "corename");
    // A family OpenBLAS does not know falls back to another: say so.
    bool honoured = core == "auto" || strcasecmp(corename.c_str(),
                                                 core.c_str()) == 0;
    Json family;
    family["coretype"] = core;
    family["corename"] = corename;
    family["ok"] = gflops > 0;
    family["honoured"] = honoured;
    family["gflops"] = rounded(std::max(gflops, 0.0));
    families.push_back(family);
    if (gflops > bestSingle && honoured) {
      bestSingle = gflops;
      bestCore = core;
    }
  }
  if (bestCore.empty()) {
    std::fprintf(stderr, "dtensor-bench-ceilings: no OpenBLAS sgemm ran\n");
    return 1;
  }

  // The best family with every core: one process of `cores` threads, and
  // `cores` 1-thread processes at the same time (one per rank).
  std::fprintf(stderr, "ceilings: sgemm, %d threads, %s ...\n", cores,
               bestCore.c_str());
  Child all = spawnSelf({"--child-gemm", bestCore, std::to_string(cores), size,
                         reps, "0"});
  double allThreads = numberOf(childResult(all), "gflops");
  std::fprintf(stderr, "ceilings: sgemm, %d concurrent 1-thread processes ...\n",
               cores);
  std::vector<Child> group;
  // Each keeps multiplying for at least a second, so that they overlap.
  for (int i = 0; i < cores; ++i)
    group.push_back(spawnSelf({"--child-gemm", bestCore, "1", size, reps,
                               options.quick ? "0.1" : "1.5"}));
  Json concurrent = Json::array();
  double concurrentMin = 1e30;
  for (Child &child : group) {
    double gflops = numberOf(childResult(child), "gflops");
    concurrent.push_back(rounded(gflops));
    concurrentMin = std::min(concurrentMin, gflops);
  }

  // Streaming bandwidth.
  long mib = options.streamMiB;
  if (mib == 0)
    mib = std::max<long>(256, 2 * llc / (1 << 20));
  size_t n = static_cast<size_t>(mib) * (1 << 20) / sizeof(float);
  std::fprintf(stderr, "ceilings: stream, 3 arrays of %ld MiB ...\n", mib);
  float *a = static_cast<float *>(std::aligned_alloc(64, n * sizeof(float)));
  float *b = static_cast<float *>(std::aligned_alloc(64, n * sizeof(float)));
  float *c = static_cast<float *>(std::aligned_alloc(64, n * sizeof(float)));
  if (!a || !b || !c) {
    std::fprintf(stderr, "dtensor-bench-ceilings: out of memory\n");
    return 1;
  }
  // First touch with all threads, in the slices the kernels use.
  parallelFor(cores, n, [=](int, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      a[i] = 1.0f;
      b[i] = 2.0f;
      c[i] = 0.5f;
    }
  });
  StreamResult one = measureStream(a, b, c, n, 1, options.streamReps);
  StreamResult every = measureStream(a, b, c, n, cores, options.streamReps);
  std::free(a);
  std::free(b);
  std::free(c);

  Json json;
  json["tool"] = "dtensor-bench-ceilings";
  json["quick"] = options.quick;
  Json &cpuJson = json["cpu"];
  cpuJson["model"] = cpu.model;
  cpuJson["cores"] = cores;
  cpuJson["llc_bytes"] = llc;
  cpuJson["l2_bytes"] = std::max(sysconf(_SC_LEVEL2_CACHE_SIZE), 0L);
  cpuJson["avx2_fma"] = cpu.avx2 && cpu.fma;
  cpuJson["avx512"] = cpu.avx512;
  cpuJson["simulated"] = cpu.simulated;
  Json &gemm = json["gemm"];
  gemm["routine"] = "cblas_sgemm row-major NN, square";
  gemm["size"] = options.gemmSize;
  gemm["reps"] = options.gemmReps;
  gemm["families"] = families;
  gemm["best_coretype"] = bestCore;
  gemm["runtime_coretype"] = runtimeCore(cpu);
  const char *preset = std::getenv("OPENBLAS_CORETYPE");
  gemm["openblas_coretype_env"] =
      preset && *preset ? Json(preset) : Json(nullptr);
  gemm["peak_1thread_gflops"] = rounded(bestSingle);
  gemm["all_threads"] = cores;
  gemm["peak_all_threads_gflops"] = rounded(allThreads);
  gemm["concurrent_1thread_processes"] = cores;
  gemm["concurrent_per_process_gflops"] = concurrent;
  gemm["concurrent_min_gflops"] = rounded(concurrentMin);
  Json &stream = json["stream"];
  stream["array_bytes"] = n * sizeof(float);
  stream["arrays"] = 3;
  stream["reps"] = options.streamReps;
  stream["bytes_counted"] = "read + written (STREAM convention): copy 2, "
                            "triad 3, read 1 array(s)";
  stream["write_allocate_counted"] = false;
  stream["threads_1"] = streamJson(one);
  stream["all_threads"] = cores;
  stream["threads_all"] = streamJson(every);
  return writeJson(json, options.output) ? 0 : 1;
}
