//===- OpenBlasLoader.cpp - OpenBLAS, loaded with the kernels we pick -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpenBlasLoader.h"

#include <cpuid.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <strings.h>
#include <vector>

extern char **environ;

namespace dtensor::rt::blas {

namespace {

// ASan intercepts the C library of the main namespace only; a second copy
// of it would allocate behind ASan's back.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr const char *kCoreTypeVariable = "OPENBLAS_CORETYPE";
constexpr const char *kOverrideVariable = "DTENSOR_BLAS_CORETYPE";
constexpr const char *kLibraryNames[] = {
    "libopenblas.so.0",
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"};

uint64_t readXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

/// The environment the private namespace sees: the host's, with
/// OPENBLAS_CORETYPE replaced by `family` (removed when it is empty). Kept
/// for the life of the process, as the namespace's C library points at it.
char **privateEnvironment(const std::string &family) {
  static std::vector<std::string> owned;
  static std::vector<char *> entries;
  size_t nameLength = std::strlen(kCoreTypeVariable);
  for (char **entry = environ; entry && *entry; ++entry) {
    bool isCoreType = std::strncmp(*entry, kCoreTypeVariable, nameLength) == 0 &&
                      (*entry)[nameLength] == '=';
    if (!isCoreType)
      owned.emplace_back(*entry);
  }
  if (!family.empty())
    owned.push_back(std::string(kCoreTypeVariable) + "=" + family);
  for (std::string &entry : owned)
    entries.push_back(entry.data());
  entries.push_back(nullptr);
  return entries.data();
}

/// Opens OpenBLAS into a new namespace whose C library's environment asks
/// for `family`. Null, with `reason`, when that cannot be done.
void *openIsolated(const std::string &family, std::string &reason) {
  if (kSanitized) {
    reason = "a sanitizer build";
    return nullptr;
  }
  void *libc = dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!libc) {
    const char *error = dlerror();
    reason = std::string("no link-map namespace: ") + (error ? error : "?");
    return nullptr;
  }
  Lmid_t namespaceId;
  auto **namespaceEnviron = static_cast<char ***>(dlsym(libc, "environ"));
  if (dlinfo(libc, RTLD_DI_LMID, &namespaceId) != 0 || !namespaceEnviron) {
    reason = "the namespace's C library has no environ";
    dlclose(libc);
    return nullptr;
  }
  *namespaceEnviron = privateEnvironment(family);
  for (const char *name : kLibraryNames)
    if (void *handle = dlmopen(namespaceId, name, RTLD_NOW | RTLD_LOCAL))
      return handle;
  reason = "OpenBLAS did not load into a namespace";
  return nullptr;
}

void *openShared() {
  for (const char *name : kLibraryNames)
    if (void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return handle;
  return nullptr;
}

template <typename Fn> Fn symbol(void *handle, const char *name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

bool verbose() {
  const char *value = std::getenv("DTENSOR_VERBOSE");
  return value && std::strcmp(value, "1") == 0;
}

/// describeKernels() of a loaded `library`.
std::string describe(const OpenBlasLibrary &library) {
  if (!library.sgemm)
    return "matrix products: built-in fallback (OpenBLAS not found)";
  std::string core = library.coreName ? library.coreName() : "unknown";
  std::string text = "OpenBLAS core " + core + " (";
  if (library.isolated) {
    text += library.choice.family.empty()
                ? "no family from cpuid: OpenBLAS detected the CPU"
                : "family " + library.choice.family + " from " +
                      library.choice.source;
    text += "; private copy";
  } else {
    const char *preset = std::getenv(kCoreTypeVariable);
    text += "shared copy (" + library.sharedReason + "): " +
            (preset ? std::string(kCoreTypeVariable) + "=" + preset +
                          " from the environment"
                    : std::string("OpenBLAS detected the CPU"));
  }
  return text + ")";
}

} // namespace

std::string detectCoreType() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return "";
  bool osxsave = ecx & (1u << 27), avx = ecx & (1u << 28),
       fma = ecx & (1u << 12);
  if (!osxsave || !avx)
    return "";
  uint64_t xcr0 = readXcr0();
  bool osAvx = (xcr0 & 0x6) == 0x6;      // XMM and YMM state
  bool osAvx512 = (xcr0 & 0xe6) == 0xe6; // plus opmask, ZMM state
  if (!osAvx || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return "";
  bool avx2 = ebx & (1u << 5);
  bool avx512 = (ebx & (1u << 16)) && (ebx & (1u << 17)) &&
                (ebx & (1u << 30)) && (ebx & (1u << 31)); // F, DQ, BW, VL
  if (avx512 && osAvx512)
    return "SkylakeX";
  if (avx2 && fma)
    return "Haswell";
  return "";
}

KernelFamilyChoice chooseKernelFamily() {
  const char *forced = std::getenv(kOverrideVariable);
  if (forced && *forced && strcasecmp(forced, "auto") != 0)
    return {forced, kOverrideVariable};
  return {detectCoreType(), "cpuid"};
}

const OpenBlasLibrary &openBlasLibrary() {
  static OpenBlasLibrary library;
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    library.choice = chooseKernelFamily();
    void *handle = openIsolated(library.choice.family, library.sharedReason);
    library.isolated = handle != nullptr;
    if (!handle)
      handle = openShared();
    if (handle) {
      library.sgemm = symbol<SgemmFn>(handle, "cblas_sgemm");
      library.dgemm = symbol<DgemmFn>(handle, "cblas_dgemm");
      library.sgemv = symbol<SgemvFn>(handle, "cblas_sgemv");
      library.dgemv = symbol<DgemvFn>(handle, "cblas_dgemv");
      library.setThreads =
          symbol<SetThreadsFn>(handle, "openblas_set_num_threads");
      library.coreName = symbol<CoreNameFn>(handle, "openblas_get_corename");
    }
    if (!library.sgemm || !library.dgemm) {
      library.sgemm = nullptr;
      library.dgemm = nullptr;
      std::fprintf(stderr, "dtensor runtime: OpenBLAS (libopenblas.so.0) not "
                           "found; matrix products use a slower built-in "
                           "kernel\n");
      return;
    }
    std::string core = library.coreName ? library.coreName() : "";
    const std::string &family = library.choice.family;
    if (library.isolated && library.choice.source == kOverrideVariable &&
        strcasecmp(core.c_str(), family.c_str()) != 0)
      std::fprintf(stderr,
                   "dtensor runtime: %s=%s: OpenBLAS has no such kernel "
                   "family and chose %s\n",
                   kOverrideVariable, family.c_str(),
                   core.empty() ? "its own" : core.c_str());
    if (verbose())
      std::fprintf(stderr, "dtensor runtime: %s\n", describe(library).c_str());
  });
  return library;
}

std::string describeKernels() { return describe(openBlasLibrary()); }

} // namespace dtensor::rt::blas
