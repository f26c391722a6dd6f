//===- AttentionViews.h - Checks of the attention calls' views --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What dtensor_rt_attention and dtensor_rt_attention_backward check and
// read alike: shapes in messages, a mask that broadcasts to the scores, and
// a per-batch-row i64 tensor (rows, positions) read into a copy.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTIONVIEWS_H
#define DTENSOR_RUNTIME_ATTENTIONVIEWS_H

#include "AbiCall.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace dtensor::rt {

/// "[2, 4, 8]".
std::string shapeText(std::initializer_list<int64_t> sizes);

/// "<op>: <what> has shape [..], expected <expected>".
std::string shapeError(const char *op, const char *what,
                       const StridedView &view, const std::string &expected);

/// Checks that `mask` broadcasts to the scores `logical` ([B, H, L, S]) and
/// sets its strides (0 along broadcast dims).
Status readMaskStrides(const char *op, const StridedView &mask,
                       const int64_t (&logical)[4], int64_t (&strides)[4]);

/// Queued buffer `index` of `call`, a [batch] i64 tensor, copied into
/// `into` (whose storage is kept from step to step by the caller).
Status readBatchIndices(const AbiCall &call, const char *op, const char *what,
                        size_t index, int64_t batch,
                        std::vector<int64_t> &into);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_ATTENTIONVIEWS_H
