//===- NaiveRuntime.h - The runtime ABI for tests, done naively -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests that load compiled programs without the real runtime (no MPI, no
// OpenBLAS) link this: it defines the dtensor_rt_* functions a program
// without collectives calls -- push_buffer, matmul (a naive product, which
// also checks the call), the step allocator and the step seed (set by the
// test) -- and records the matmul calls. The test binary must export them
// (ENABLE_EXPORTS), since programs are dlopen'ed and resolve them against it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TEST_UNIT_SUPPORT_NAIVERUNTIME_H
#define DTENSOR_TEST_UNIT_SUPPORT_NAIVERUNTIME_H

#include <cstdint>
#include <vector>

namespace dtensor::test {

/// The beta of each dtensor_rt_matmul call since the last reset.
const std::vector<int32_t> &getMatmulBetas();

/// Forgets the queued buffers and the recorded matmul calls; the step seed
/// goes back to 0.
void resetNaiveRuntime();

/// What dtensor_rt_step_seed returns from now on.
void setNaiveStepSeed(uint64_t seed);

} // namespace dtensor::test

#endif // DTENSOR_TEST_UNIT_SUPPORT_NAIVERUNTIME_H
