//===- OpenBlasLoaderTest.cpp - OpenBLAS loaded without touching the host -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime is embedded in other processes: loading its OpenBLAS must
// leave the host's environment as it was, and a preset OPENBLAS_CORETYPE
// must not choose the runtime's kernels. The tests run in order in one
// process; the first one loads OpenBLAS.
#include "Blas.h"
#include "OpenBlasLoader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>
#include <vector>

extern char **environ;

using namespace dtensor::rt::blas;

namespace {

std::vector<std::string> environmentCopy() {
  std::vector<std::string> entries;
  for (char **entry = environ; *entry; ++entry)
    entries.emplace_back(*entry);
  return entries;
}

TEST(OpenBlasLoaderTest, LeavesTheHostEnvironmentAlone) {
  ASSERT_EQ(setenv("OPENBLAS_CORETYPE", "Nehalem", 1), 0);
  ASSERT_EQ(unsetenv("DTENSOR_BLAS_CORETYPE"), 0);
  char **before = environ;
  std::vector<std::string> entriesBefore = environmentCopy();

  // The first product loads OpenBLAS.
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 0, 1, 1, 1}, c(4, -1);
  sgemm(false, false, 2, 2, 3, a.data(), 3, b.data(), 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{4, 5, 10, 11}));

  EXPECT_EQ(environ, before);
  EXPECT_EQ(environmentCopy(), entriesBefore);
  ASSERT_NE(std::getenv("OPENBLAS_CORETYPE"), nullptr);
  EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Nehalem");
  EXPECT_EQ(std::getenv("DTENSOR_BLAS_CORETYPE"), nullptr);

  const OpenBlasLibrary &library = openBlasLibrary();
  if (!usesOpenBlas())
    GTEST_SKIP() << "no OpenBLAS on this machine";
#if defined(__SANITIZE_ADDRESS__)
  // ASan serves the main namespace's C library only: the shared copy.
  EXPECT_FALSE(library.isolated);
  EXPECT_EQ(library.sharedReason, "a sanitizer build");
  return;
#endif
  ASSERT_TRUE(library.isolated) << library.sharedReason;
  EXPECT_EQ(library.choice.source, "cpuid");
  EXPECT_EQ(library.choice.family, detectCoreType());
  // The preset did not choose the kernels; the CPU's family did.
  std::string cpuFamily = detectCoreType();
  if (!cpuFamily.empty())
    EXPECT_EQ(strcasecmp(coreName().c_str(), cpuFamily.c_str()), 0)
        << "OpenBLAS runs " << coreName() << ", the CPU supports "
        << cpuFamily;
  EXPECT_NE(describeKernels().find("private copy"), std::string::npos)
      << describeKernels();
}

TEST(OpenBlasLoaderTest, ChoosesFromTheOverrideOrTheCpu) {
  ASSERT_EQ(unsetenv("DTENSOR_BLAS_CORETYPE"), 0);
  EXPECT_EQ(chooseKernelFamily().source, "cpuid");
  EXPECT_EQ(chooseKernelFamily().family, detectCoreType());
  ASSERT_EQ(setenv("DTENSOR_BLAS_CORETYPE", "Zen", 1), 0);
  EXPECT_EQ(chooseKernelFamily().source, "DTENSOR_BLAS_CORETYPE");
  EXPECT_EQ(chooseKernelFamily().family, "Zen");
  for (const char *automatic : {"auto", "AUTO", ""}) {
    ASSERT_EQ(setenv("DTENSOR_BLAS_CORETYPE", automatic, 1), 0);
    EXPECT_EQ(chooseKernelFamily().source, "cpuid") << automatic;
  }
  ASSERT_EQ(unsetenv("DTENSOR_BLAS_CORETYPE"), 0);
}

} // namespace
