//===- dtensor-bench-ceilings.cpp - machine limits ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-bench-ceilings [--quick] [--gemm-size N] [--gemm-reps N]
//     [--stream-mib N] [--stream-reps N] [-o FILE]
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
// With --gemm-list it instead times a given list of products (a model
// step's matrix products alone, for scripts/bench.py) as the runtime
// computes them: through its matrix-product library (runtime/lib/Blas.h,
// OpenBLAS or its own kernels for products of a few rows).
//
// No MLIR: libc, threads, dlopen and that static library.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"

#include <algorithm>
#include <chrono>
#include <cpuid.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <strings.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// --- the CPU --------------------------------------------------------------

struct CpuFeatures {
  bool sse3 = false, avx = false, avx2 = false, fma = false;
  bool avx512 = false;     // F, DQ, BW, VL with the OS saving ZMM state
  bool avx512bf16 = false; // Cooper Lake's extension
  std::string model;
};

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

/// The family the dtensor runtime asks OpenBLAS for (runtime/lib/Blas.cpp,
/// detectCoreType: the same rules), or "auto" where it leaves the choice to
/// OpenBLAS.
std::string runtimeCore(const CpuFeatures &cpu) {
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
    std::printf("{\"error\": \"libopenblas.so.0 not found\"}\n");
    return false;
  }
  blas.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  auto setThreads =
      reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
  blas.coreName =
      reinterpret_cast<CoreNameFn>(dlsym(handle, "openblas_get_corename"));
  if (!blas.sgemm) {
    std::printf("{\"error\": \"no cblas_sgemm\"}\n");
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
  std::printf("{\"corename\": \"%s\", \"gflops\": %.3f, \"best_s\": %.6f}\n",
              coreName ? coreName() : "unknown", gflops, best);
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
  std::printf("{\"corename\": \"%s\", \"threads\": %d, \"products\": %zu, "
              "\"median_ms\": %.6f, \"best_ms\": %.6f, \"gflops\": %.3f}\n",
              blas.coreName ? blas.coreName() : "unknown", threads, list.size(),
              1e3 * median, 1e3 * times.front(), flops / median / 1e9);
  return 0;
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

/// The number after `"key": ` in a flat JSON object, or -1.
double jsonNumber(const std::string &text, const std::string &key) {
  size_t at = text.find("\"" + key + "\": ");
  if (at == std::string::npos)
    return -1;
  return std::atof(text.c_str() + at + key.size() + 4);
}

std::string jsonString(const std::string &text, const std::string &key) {
  size_t at = text.find("\"" + key + "\": \"");
  if (at == std::string::npos)
    return "";
  at += key.size() + 5;
  return text.substr(at, text.find('"', at) - at);
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

// --- output -----------------------------------------------------------------

struct Options {
  bool quick = false;
  int gemmSize = 2048;
  int gemmReps = 5;
  long streamMiB = 0; // 0: the larger of 256 MiB and twice the LLC
  int streamReps = 10;
  std::string output;
  std::vector<std::string> families; // empty: every supported one
};

const char *const kUsage =
    "usage: dtensor-bench-ceilings [--quick] [--gemm-size N] [--gemm-reps N]\n"
    "           [--stream-mib N] [--stream-reps N] [-o FILE]\n"
    "\n"
    "Measures the single-precision GEMM peak of OpenBLAS (each kernel family\n"
    "the CPU supports, 1 thread; the best one with all cores) and the\n"
    "streaming memory bandwidth (copy, triad, read; 1 thread and all cores),\n"
    "and prints them as JSON.\n"
    "\n"
    "  --quick          small sizes and few repetitions (for tests; the\n"
    "                   arrays then fit in cache: not a real bandwidth)\n"
    "  --gemm-size N    square GEMM size (default 2048)\n"
    "  --gemm-reps N    products timed per measurement, best kept (5)\n"
    "  --stream-mib N   MiB per stream array (default max(256, 2 x LLC))\n"
    "  --stream-reps N  passes per kernel, best kept (10)\n"
    "  --families LIST  only these OPENBLAS_CORETYPE families (comma-separated;\n"
    "                   default: every one the CPU supports, and auto)\n"
    "  -o FILE          write the JSON there (default: standard output)\n"
    "\n"
    "dtensor-bench-ceilings --gemm-list CORETYPE THREADS LIST REPS\n"
    "  times a list of products as one step runs them, one after the other:\n"
    "  LIST is BxMxNxKxT,... (B independent M x K by K x N products, T t when\n"
    "  the right operand is stored N x K, as a linear's weight, else n); the\n"
    "  median and best of REPS passes, as JSON. CORETYPE: an\n"
    "  OPENBLAS_CORETYPE or auto.\n";

bool parseArgs(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto number = [&](auto &into) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "dtensor-bench-ceilings: %s needs a value\n",
                     arg.c_str());
        return false;
      }
      char *end = nullptr;
      long value = std::strtol(argv[++i], &end, 10);
      if (*end || value < 1) {
        std::fprintf(stderr,
                     "dtensor-bench-ceilings: %s expects a positive number\n",
                     arg.c_str());
        return false;
      }
      into = value;
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--quick") {
      options.quick = true;
      options.gemmSize = 512;
      options.gemmReps = 3;
      options.streamMiB = 16;
      options.streamReps = 3;
    } else if (arg == "--gemm-size") {
      if (!number(options.gemmSize))
        return false;
    } else if (arg == "--gemm-reps") {
      if (!number(options.gemmReps))
        return false;
    } else if (arg == "--stream-mib") {
      if (!number(options.streamMiB))
        return false;
    } else if (arg == "--stream-reps") {
      if (!number(options.streamReps))
        return false;
    } else if (arg == "--families") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "dtensor-bench-ceilings: --families needs a "
                             "list\n");
        return false;
      }
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t end = std::min(list.find(',', start), list.size());
        if (end > start)
          options.families.push_back(list.substr(start, end - start));
        start = end + 1;
      }
    } else if (arg == "-o") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "dtensor-bench-ceilings: -o needs a file\n");
        return false;
      }
      options.output = argv[++i];
    } else {
      std::fprintf(stderr, "dtensor-bench-ceilings: unknown argument %s\n%s",
                   arg.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

std::string streamJson(const StreamResult &r) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"copy_gbps\": %.3f, \"triad_gbps\": %.3f, "
                "\"read_gbps\": %.3f}",
                r.copy, r.triad, r.read);
  return text;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 7 && std::string(argv[1]) == "--child-gemm")
    return childGemm(argv[2], std::atoi(argv[3]), std::atoi(argv[4]),
                     std::atoi(argv[5]), std::atof(argv[6]));
  if (argc == 6 && std::string(argv[1]) == "--gemm-list")
    return gemmList(argv[2], std::atoi(argv[3]), argv[4], std::atoi(argv[5]));
  Options options;
  if (!parseArgs(argc, argv, options))
    return 1;
  CpuFeatures cpu = detectCpu();
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cores = std::max(cores, 1);
  long llc = lastLevelCacheBytes();
  std::string size = std::to_string(options.gemmSize);
  std::string reps = std::to_string(options.gemmReps);

  // GEMM: each family alone, one thread, one after the other.
  std::string families;
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
    std::string result = finish(child);
    double gflops = result.empty() ? -1 : jsonNumber(result, "gflops");
    std::string corename = jsonString(result, "corename");
    // A family OpenBLAS does not know falls back to another: say so.
    bool honoured = core == "auto" || strcasecmp(corename.c_str(),
                                                 core.c_str()) == 0;
    char entry[256];
    std::snprintf(entry, sizeof(entry),
                  "%s\n      {\"coretype\": \"%s\", \"corename\": \"%s\", "
                  "\"ok\": %s, \"honoured\": %s, \"gflops\": %.3f}",
                  families.empty() ? "" : ",", core.c_str(), corename.c_str(),
                  gflops > 0 ? "true" : "false", honoured ? "true" : "false",
                  std::max(gflops, 0.0));
    families += entry;
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
  double allThreads = jsonNumber(finish(all), "gflops");
  std::fprintf(stderr, "ceilings: sgemm, %d concurrent 1-thread processes ...\n",
               cores);
  std::vector<Child> group;
  // Each keeps multiplying for at least a second, so that they overlap.
  for (int i = 0; i < cores; ++i)
    group.push_back(spawnSelf({"--child-gemm", bestCore, "1", size, reps,
                               options.quick ? "0.1" : "1.5"}));
  std::string concurrent;
  double concurrentMin = 1e30;
  for (Child &child : group) {
    double gflops = jsonNumber(finish(child), "gflops");
    char number[32];
    std::snprintf(number, sizeof(number), "%s%.3f",
                  concurrent.empty() ? "" : ", ", gflops);
    concurrent += number;
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

  char head[1024];
  std::snprintf(
      head, sizeof(head),
      "{\n  \"tool\": \"dtensor-bench-ceilings\",\n  \"quick\": %s,\n"
      "  \"cpu\": {\"model\": \"%s\", \"cores\": %d, \"llc_bytes\": %ld, "
      "\"l2_bytes\": %ld, \"avx2_fma\": %s, \"avx512\": %s},\n",
      options.quick ? "true" : "false", cpu.model.c_str(), cores, llc,
      std::max(sysconf(_SC_LEVEL2_CACHE_SIZE), 0L),
      cpu.avx2 && cpu.fma ? "true" : "false", cpu.avx512 ? "true" : "false");
  std::string json = head;
  char gemm[1024];
  std::snprintf(
      gemm, sizeof(gemm),
      "  \"gemm\": {\n    \"routine\": \"cblas_sgemm row-major NN, square\",\n"
      "    \"size\": %d, \"reps\": %d,\n    \"families\": [%s\n    ],\n"
      "    \"best_coretype\": \"%s\", \"runtime_coretype\": \"%s\",\n"
      "    \"peak_1thread_gflops\": %.3f,\n"
      "    \"all_threads\": %d, \"peak_all_threads_gflops\": %.3f,\n"
      "    \"concurrent_1thread_processes\": %d,\n"
      "    \"concurrent_per_process_gflops\": [%s],\n"
      "    \"concurrent_min_gflops\": %.3f\n  },\n",
      options.gemmSize, options.gemmReps, families.c_str(), bestCore.c_str(),
      runtimeCore(cpu).c_str(), bestSingle, cores, allThreads, cores,
      concurrent.c_str(), concurrentMin);
  json += gemm;
  char stream[1024];
  std::snprintf(
      stream, sizeof(stream),
      "  \"stream\": {\n    \"array_bytes\": %zu, \"arrays\": 3, \"reps\": %d,\n"
      "    \"bytes_counted\": \"read + written (STREAM convention): copy 2, "
      "triad 3, read 1 array(s)\",\n"
      "    \"write_allocate_counted\": false,\n"
      "    \"threads_1\": %s,\n    \"all_threads\": %d,\n"
      "    \"threads_all\": %s\n  }\n}\n",
      n * sizeof(float), options.streamReps, streamJson(one).c_str(), cores,
      streamJson(every).c_str());
  json += stream;

  if (options.output.empty()) {
    std::fputs(json.c_str(), stdout);
    return 0;
  }
  FILE *file = std::fopen(options.output.c_str(), "w");
  if (!file || std::fputs(json.c_str(), file) < 0 || std::fclose(file) != 0) {
    std::perror(("dtensor-bench-ceilings: " + options.output).c_str());
    return 1;
  }
  return 0;
}
