//===- FusedAttentionGeneric.cpp - Attention, Generic build ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loops of FusedAttentionKernel.h with the build's default flags and
// -ffp-contract=off: the kernel of CPUs without AVX2.
//
//===----------------------------------------------------------------------===//

#include "FusedAttentionKernel.h"

namespace dtensor::rt::attention {

void computePiecesGeneric(const Problem<float> &problem, int64_t blockSize,
                          int64_t begin, int64_t end) {
  computePieces(problem, blockSize, begin, end);
}

void computePiecesGeneric(const Problem<double> &problem, int64_t blockSize,
                          int64_t begin, int64_t end) {
  computePieces(problem, blockSize, begin, end);
}

} // namespace dtensor::rt::attention
