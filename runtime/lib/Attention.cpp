//===- Attention.cpp - dtensor_rt_attention ------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks the queued views against each other and hands them to the fused
// CPU kernel (attention/FusedAttention.h), which reads them in place, on
// the runtime's shared worker pool (blas::sharedWorkerPool).
//
//===----------------------------------------------------------------------===//

#include "AbiCall.h"
#include "AttentionViews.h"
#include "Context.h"
#include "Export.h"

#include "Blas.h"
#include "FusedAttention.h"
#include "WorkerPool.h"

#include "dtensor/rt_abi.h"

#include <cstring>
#include <memory>

namespace dtensor::rt {

namespace {

constexpr const char *kOp = "attention";

std::string shapeError(const char *what, const StridedView &view,
                       const std::string &expected) {
  return rt::shapeError(kOp, what, view, expected);
}

template <typename T>
Status attend(AbiCall &call, int32_t flags, double scale) {
  bool hasMask = flags & DTENSOR_RT_ATTENTION_MASK;
  bool hasRows = flags & DTENSOR_RT_ATTENTION_ROWS;
  bool hasPositions = flags & DTENSOR_RT_ATTENTION_POSITIONS;
  bool hasLse = flags & DTENSOR_RT_ATTENTION_LOG_SUM_EXP;
  int64_t count = 4 + hasMask + hasRows + hasPositions + hasLse;
  std::vector<StridedView> &views = call.program.callViews;
  if (Status s = call.takeViews("attention", count, views))
    return s;
  size_t next = 4;
  int64_t maskIndex = hasMask ? next++ : -1;
  int64_t rowsIndex = hasRows ? next++ : -1;
  int64_t positionsIndex = hasPositions ? next++ : -1;
  int64_t lseIndex = hasLse ? next++ : -1;
  for (size_t i = 0; i < views.size(); ++i) {
    int64_t want = static_cast<int64_t>(i) == rowsIndex ||
                           static_cast<int64_t>(i) == positionsIndex
                       ? 1
                   : static_cast<int64_t>(i) == lseIndex ? 3
                                                         : 4;
    if (views[i].rank() != want)
      return runtimeError("attention: buffer " + std::to_string(i) +
                          " has rank " + std::to_string(views[i].rank()) +
                          ", expected " + std::to_string(want));
  }
  const StridedView &q = views[0], &k = views[1], &v = views[2],
                    &out = views[3];
  int64_t batch = q.sizes[0], heads = q.sizes[1], queries = q.sizes[2],
          features = q.sizes[3];
  int64_t keyBatch = k.sizes[0], kvHeads = k.sizes[1], keys = k.sizes[2];
  int64_t valueFeatures = v.sizes[3];
  if (k.sizes[3] != features || (!hasRows && keyBatch != batch) ||
      (kvHeads == 0 ? heads != 0 : heads % kvHeads != 0))
    return runtimeError(
        shapeError("key", k,
                   "[" + std::string(hasRows ? "Bk" : std::to_string(batch)) +
                       ", a divisor of " + std::to_string(heads) + ", S, " +
                       std::to_string(features) + "]"));
  if (v.sizes[0] != keyBatch || v.sizes[1] != kvHeads || v.sizes[2] != keys)
    return runtimeError(shapeError(
        "value", v, shapeText({keyBatch, kvHeads, keys}) + " and Ev"));
  if (out.sizes != Dims{batch, heads, queries, valueFeatures})
    return runtimeError(shapeError(
        "out", out, shapeText({batch, heads, queries, valueFeatures})));

  attention::Problem<T> p;
  p.batch = batch;
  p.heads = heads;
  p.kvHeads = kvHeads;
  p.queries = queries;
  p.keys = keys;
  p.features = features;
  p.valueFeatures = valueFeatures;
  p.keyBatch = keyBatch;
  p.query = reinterpret_cast<const T *>(q.data);
  p.key = reinterpret_cast<const T *>(k.data);
  p.value = reinterpret_cast<const T *>(v.data);
  p.out = reinterpret_cast<T *>(out.data);
  for (int dim = 0; dim < 4; ++dim) {
    p.queryStrides[dim] = q.strides[dim];
    p.keyStrides[dim] = k.strides[dim];
    p.valueStrides[dim] = v.strides[dim];
    p.outStrides[dim] = out.strides[dim];
  }
  if (hasMask) {
    const StridedView &mask = views[maskIndex];
    if (Status s = readMaskStrides(kOp, mask, {batch, heads, queries, keys},
                                   p.maskStrides))
      return s;
    p.mask = reinterpret_cast<const T *>(mask.data);
  }
  // Rows and positions are i64; read contiguously into copies that keep
  // their storage from step to step.
  thread_local std::vector<int64_t> rows, positions;
  if (hasRows) {
    if (Status s = readBatchIndices(call, kOp, "rows", rowsIndex, batch, rows))
      return s;
    p.rows = rows.data();
  }
  if (hasPositions) {
    if (Status s = readBatchIndices(call, kOp, "positions", positionsIndex,
                                    batch, positions))
      return s;
    p.positions = positions.data();
  }
  if (hasLse) {
    const StridedView &lse = views[lseIndex];
    if (lse.sizes != Dims{batch, heads, queries})
      return runtimeError(
          shapeError("log-sum-exp", lse, shapeText({batch, heads, queries})));
    p.logSumExp = reinterpret_cast<T *>(lse.data);
    for (int dim = 0; dim < 3; ++dim)
      p.logSumExpStrides[dim] = lse.strides[dim];
  }
  p.accumulate = flags & DTENSOR_RT_ATTENTION_ACCUMULATE;
  if (p.accumulate && !hasLse)
    return runtimeError(
        "attention: accumulating needs the log-sum-exp buffer (flag 16)");
  p.causal = flags & DTENSOR_RT_ATTENTION_CAUSAL;
  p.scale = static_cast<T>(scale);
  // The runtime's worker pool (threads = the context's, as BLAS and the
  // parallel loop nests): one set of threads per process.
  std::shared_ptr<WorkerPool> pool = blas::sharedWorkerPool();
  attention::run(p, pool.get());
  return Status::success();
}

} // namespace

} // namespace dtensor::rt

extern "C" DTENSOR_EXPORT void
dtensor_rt_attention(int32_t dtype, int32_t flags, double scale) {
  dtensor::rt::AbiCall::run(
      "attention", dtype, [&](dtensor::rt::AbiCall &call) {
        using namespace dtensor::rt;
        if (std::strcmp(call.program.backend->target(), "cpu") != 0)
          return runtimeError(std::string("attention: programs of target ") +
                              call.program.backend->target() +
                              " have no fused attention");
        if (flags & ~int32_t(63))
          return runtimeError("attention: unknown flags " +
                              std::to_string(flags));
        if (call.dtype == DType::F32)
          return attend<float>(call, flags, scale);
        if (call.dtype == DType::F64)
          return attend<double>(call, flags, scale);
        return runtimeError(std::string("attention: dtype ") +
                            dtypeName(call.dtype) + " is not f32 or f64");
      });
}
