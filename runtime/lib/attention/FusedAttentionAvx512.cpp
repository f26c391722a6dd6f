//===- FusedAttentionAvx512.cpp - Attention, Avx512 build -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loops of FusedAttentionKernel.h compiled with -mavx512f -mfma
// -ffp-contract=off (runtime/lib/CMakeLists.txt); called only when the CPU
// supports them (skinny::detectIsa).
//
//===----------------------------------------------------------------------===//

#include "FusedAttentionKernel.h"

namespace dtensor::rt::attention {

void computePiecesAvx512(const Problem<float> &problem, int64_t blockSize,
                         int64_t begin, int64_t end) {
  computePieces(problem, blockSize, begin, end);
}

void computePiecesAvx512(const Problem<double> &problem, int64_t blockSize,
                         int64_t begin, int64_t end) {
  computePieces(problem, blockSize, begin, end);
}

} // namespace dtensor::rt::attention
