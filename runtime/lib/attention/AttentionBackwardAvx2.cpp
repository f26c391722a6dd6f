//===- AttentionBackwardAvx2.cpp - Attention backward, Avx2 build ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loops of AttentionBackwardKernel.h compiled with -mavx2 -mfma
// -ffp-contract=off (runtime/lib/CMakeLists.txt); called only when the CPU
// supports them (attention::runBackward).
//
//===----------------------------------------------------------------------===//

#include "AttentionBackwardKernel.h"

namespace dtensor::rt::attention {

void backwardPiecesAvx2(const BackwardProblem<float> &problem,
                        const BackwardPlan<float> &plan, int64_t begin,
                        int64_t end) {
  backwardPieces(problem, plan, begin, end);
}

void backwardPiecesAvx2(const BackwardProblem<double> &problem,
                        const BackwardPlan<double> &plan, int64_t begin,
                        int64_t end) {
  backwardPieces(problem, plan, begin, end);
}

} // namespace dtensor::rt::attention
