//===- OpenBlasLoader.h - OpenBLAS with the kernels we pick ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenBLAS picks its kernel family once, when it is loaded: from
// OPENBLAS_CORETYPE if the environment has it, else from its own CPU
// detection, which takes some virtual machines for old CPUs. Environments
// preset OPENBLAS_CORETYPE=Haswell (seen on AVX-512 machines, where that
// family runs GEMMs 1.7x slower), and an embedded runtime must neither obey
// a setting meant for someone else's OpenBLAS nor change the host's
// environment to steer its own.
//
// So the runtime loads a private copy of OpenBLAS into a link-map namespace
// of its own (dlmopen), with that namespace's own C library, whose
// environment is a copy of the host's in which OPENBLAS_CORETYPE is the
// family we chose: the best the CPU supports (cpuid), or
// DTENSOR_BLAS_CORETYPE when set. The host's environment, and any OpenBLAS
// the host loaded itself (NumPy's), are untouched. Where a namespace cannot
// be made (ASan builds, a C library without dlmopen), OpenBLAS is loaded
// shared and picks from the host's environment; the description says so.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BLAS_OPENBLASLOADER_H
#define DTENSOR_RUNTIME_BLAS_OPENBLASLOADER_H

#include <string>

namespace dtensor::rt::blas {

/// OpenBLAS's entry points the runtime calls, with CBLAS's int enums.
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double *,
                         int, const double *, int, double, double *, int);
using SgemvFn = void (*)(int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
using DgemvFn = void (*)(int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);
using SetThreadsFn = void (*)(int);
using CoreNameFn = char *(*)();

/// The kernel family asked of OpenBLAS, and where the choice came from.
struct KernelFamilyChoice {
  /// An OPENBLAS_CORETYPE value ("SkylakeX"), or "" to let OpenBLAS detect.
  std::string family;
  /// "DTENSOR_BLAS_CORETYPE" or "cpuid".
  std::string source;
};

/// The family for this process: DTENSOR_BLAS_CORETYPE when set and not
/// "auto", else the best family the CPU supports (detectCoreType()).
KernelFamilyChoice chooseKernelFamily();

/// The OPENBLAS_CORETYPE family this CPU supports ("SkylakeX" with AVX-512
/// F/DQ/BW/VL enabled by the OS, "Haswell" with AVX2 and FMA), or "" when
/// neither.
std::string detectCoreType();

struct OpenBlasLibrary {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SgemvFn sgemv = nullptr;
  DgemvFn dgemv = nullptr;
  SetThreadsFn setThreads = nullptr;
  CoreNameFn coreName = nullptr;
  KernelFamilyChoice choice;
  /// Loaded into a namespace of its own (the choice applies); false when
  /// shared with the host (OpenBLAS read the host's environment).
  bool isolated = false;
  /// Why the namespace could not be made, when !isolated.
  std::string sharedReason;
};

/// Loads OpenBLAS on first call (thread-safe). sgemm and dgemm are null
/// when no OpenBLAS was found (said once on stderr).
const OpenBlasLibrary &openBlasLibrary();

/// One line on the matrix kernels in use, for -v and reports, e.g.
/// "OpenBLAS core SkylakeX (family SkylakeX from cpuid; private copy)".
std::string describeKernels();

} // namespace dtensor::rt::blas

#endif // DTENSOR_RUNTIME_BLAS_OPENBLASLOADER_H
