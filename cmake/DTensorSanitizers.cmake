# Sanitized builds (docs/fuzzing.md).
#
# DTENSOR_SANITIZE: a list of sanitizers for every target of this build, as
# -fsanitize takes it ("address,undefined"). Errors are fatal: the first
# report ends the process with a non-zero status, so a test that triggers
# one fails. The preset "asan" builds the whole test suite this way.
#
# DTENSOR_FUZZ: the libFuzzer targets of fuzz/. Needs clang (clang-22 from
# Debian: the preset "fuzz"); every library is built with
# -fsanitize=fuzzer-no-link so that the fuzzers see its coverage, and only
# the fuzzers and the libraries they link are worth building (the target
# dtensor-fuzzers).
set(DTENSOR_SANITIZE "" CACHE STRING
  "Sanitizers for every target, as -fsanitize takes them (e.g. address,undefined); empty: none")
option(DTENSOR_FUZZ "Build the libFuzzer targets of fuzz/ (needs clang)" OFF)

if(DTENSOR_SANITIZE)
  # ASan on LLVM's and MLIR's (uninstrumented) shared libraries works: they
  # are only called. -fno-sanitize-recover: UBSan aborts as ASan does.
  add_compile_options(-fsanitize=${DTENSOR_SANITIZE} -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${DTENSOR_SANITIZE})
  message(STATUS "Sanitizers: ${DTENSOR_SANITIZE}")
endif()

if(DTENSOR_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DTENSOR_FUZZ needs clang (libFuzzer), not "
      "${CMAKE_CXX_COMPILER_ID}: configure with the preset \"fuzz\" "
      "(clang-22 and libclang-rt-22-dev from Debian)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
