//===- AttentionBackwardGeneric.cpp - Attention backward, Generic build ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loops of AttentionBackwardKernel.h with the build's default flags
// and -ffp-contract=off (runtime/lib/CMakeLists.txt): the kernel of CPUs
// without AVX2.
//
//===----------------------------------------------------------------------===//

#include "AttentionBackwardKernel.h"

namespace dtensor::rt::attention {

void backwardPiecesGeneric(const BackwardProblem<float> &problem,
                           const BackwardPlan<float> &plan, int64_t begin,
                           int64_t end) {
  backwardPieces(problem, plan, begin, end);
}

void backwardPiecesGeneric(const BackwardProblem<double> &problem,
                           const BackwardPlan<double> &plan, int64_t begin,
                           int64_t end) {
  backwardPieces(problem, plan, begin, end);
}

} // namespace dtensor::rt::attention
