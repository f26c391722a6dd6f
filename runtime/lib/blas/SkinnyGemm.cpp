//===- SkinnyGemm.cpp - Products of a few rows by a weight ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "SkinnyGemm.h"

#include "OpenBlasLoader.h"
#include "WorkerPool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>

namespace dtensor::rt::skinny {

namespace {

/// W smaller than this is computed by the caller alone: a worker's share
/// would take less time than handing it over.
constexpr int64_t kParallelBytes = 512 * 1024;

/// Products of 2 or more rows with fewer multiply-adds than this stay with
/// OpenBLAS: its small-matrix kernels (no packing) were 15-25% faster on
/// them, one thread, AVX-512 (m=8 x 64 x 64: 1.4 us against 1.8), and 2.5x
/// slower just above (m=8 x 256 x 256: 41 us against 16).
constexpr int64_t kSmallProduct = int64_t(1) << 18;

/// Pieces per thread, so that a thread slowed by other load leaves its rest
/// to the others.
constexpr int64_t kPiecesPerThread = 4;

bool enabled() {
  static const bool on = [] {
    const char *value = std::getenv("DTENSOR_SKINNY_GEMM");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return on;
}

/// The instruction set of an OPENBLAS_CORETYPE family's kernels: OpenBLAS's
/// AVX-512 families and its AVX2 ones; older families get none of ours.
Isa isaOfFamily(const std::string &family) {
  for (const char *name : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (strcasecmp(family.c_str(), name) == 0)
      return Isa::Avx512;
  for (const char *name : {"Haswell", "Zen"})
    if (strcasecmp(family.c_str(), name) == 0)
      return Isa::Avx2;
  return Isa::None;
}

} // namespace

Isa detectIsa() {
  // The CPU's best family, capped by a DTENSOR_BLAS_CORETYPE that asks for
  // an older one, as OpenBLAS's kernels are.
  static const Isa isa = [] {
    std::string cpu = blas::detectCoreType();
    Isa best = cpu == "SkylakeX"  ? Isa::Avx512
               : cpu == "Haswell" ? Isa::Avx2
                                  : Isa::None;
    blas::KernelFamilyChoice choice = blas::chooseKernelFamily();
    if (choice.source == "cpuid")
      return best;
    Isa asked = isaOfFamily(choice.family);
    return asked < best ? asked : best;
  }();
  return isa;
}

void computeColumns(Isa isa, const Problem &problem, int64_t begin,
                    int64_t end) {
  if (isa == Isa::Avx512)
    computeColumnsAvx512(problem, begin, end);
  else if (isa == Isa::Avx2)
    computeColumnsAvx2(problem, begin, end);
}

bool multiply(const Problem &problem, WorkerPool *pool) {
  Isa isa = detectIsa();
  if (isa == Isa::None || !enabled() || problem.m < 1 || problem.m > kMaxRows ||
      problem.n < 1 || problem.k < 1)
    return false;
  if (problem.m > 1 && problem.m * problem.n * problem.k <= kSmallProduct)
    return false;
  int64_t wBytes = problem.n * problem.k * static_cast<int64_t>(sizeof(float));
  int threads = pool ? pool->threads() : 1;
  if (threads == 1 || wBytes < kParallelBytes) {
    computeColumns(isa, problem, 0, problem.n);
    return true;
  }
  // Contiguous ranges of columns, multiples of 8 (every kernel's block).
  int64_t pieces =
      std::min<int64_t>(threads * kPiecesPerThread, (problem.n + 7) / 8);
  int64_t width = (problem.n + pieces - 1) / pieces;
  width = (width + 7) / 8 * 8;
  pieces = (problem.n + width - 1) / width;
  pool->parallelFor(pieces, [&](int64_t piece) {
    int64_t begin = piece * width;
    computeColumns(isa, problem, begin, std::min(problem.n, begin + width));
  });
  return true;
}

} // namespace dtensor::rt::skinny
