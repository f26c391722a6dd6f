//===- AttentionBackward.cpp - dtensor_rt_attention_backward --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks the queued views of an attention's gradient against each other and
// hands them to the CPU kernel (attention/AttentionBackward.h), which reads
// and writes them in place, on the runtime's shared worker pool.
//
//===----------------------------------------------------------------------===//

#include "AbiCall.h"
#include "AttentionViews.h"
#include "Context.h"
#include "Export.h"

#include "AttentionBackward.h"
#include "Blas.h"
#include "WorkerPool.h"

#include "dtensor/rt_abi.h"

#include <cstring>
#include <memory>

namespace dtensor::rt {

namespace {

constexpr const char *kOp = "attention backward";

Status badShape(const char *what, const StridedView &view,
                const std::string &expected) {
  return runtimeError(shapeError(kOp, what, view, expected));
}

template <typename T>
Status attendBackward(AbiCall &call, int32_t flags, double scale) {
  bool hasMask = flags & DTENSOR_RT_ATTENTION_MASK;
  bool hasPositions = flags & DTENSOR_RT_ATTENTION_POSITIONS;
  int64_t count = 9 + hasMask + hasPositions;
  std::vector<StridedView> &views = call.program.callViews;
  if (Status s = call.takeViews("attention backward", count, views))
    return s;
  size_t next = 6;
  int64_t maskIndex = hasMask ? next++ : -1;
  int64_t positionsIndex = hasPositions ? next++ : -1;
  size_t gradients = next;
  for (size_t i = 0; i < views.size(); ++i) {
    int64_t want = static_cast<int64_t>(i) == positionsIndex ? 1
                   : i == 5                                  ? 3
                                                             : 4;
    if (views[i].rank() != want)
      return runtimeError("attention backward: buffer " + std::to_string(i) +
                          " has rank " + std::to_string(views[i].rank()) +
                          ", expected " + std::to_string(want));
  }
  const StridedView &q = views[0], &k = views[1], &v = views[2],
                    &out = views[3], &dOut = views[4], &lse = views[5];
  const StridedView &dQ = views[gradients], &dK = views[gradients + 1],
                    &dV = views[gradients + 2];
  int64_t batch = q.sizes[0], heads = q.sizes[1], queries = q.sizes[2],
          features = q.sizes[3];
  int64_t kvHeads = k.sizes[1], keys = k.sizes[2];
  int64_t valueFeatures = v.sizes[3];
  if (k.sizes[0] != batch || k.sizes[3] != features ||
      (kvHeads == 0 ? heads != 0 : heads % kvHeads != 0))
    return badShape("key", k,
                    "[" + std::to_string(batch) + ", a divisor of " +
                        std::to_string(heads) + ", S, " +
                        std::to_string(features) + "]");
  if (v.sizes[0] != batch || v.sizes[1] != kvHeads || v.sizes[2] != keys)
    return badShape("value", v, shapeText({batch, kvHeads, keys}) + " and Ev");
  Dims outShape{batch, heads, queries, valueFeatures};
  if (out.sizes != outShape)
    return badShape("out", out,
                    shapeText({batch, heads, queries, valueFeatures}));
  if (dOut.sizes != outShape)
    return badShape("d_out", dOut,
                    shapeText({batch, heads, queries, valueFeatures}));
  if (lse.sizes != Dims{batch, heads, queries})
    return badShape("log-sum-exp", lse, shapeText({batch, heads, queries}));
  if (dQ.sizes != q.sizes)
    return badShape("d_query", dQ, q.shapeString());
  if (dK.sizes != k.sizes)
    return badShape("d_key", dK, k.shapeString());
  if (dV.sizes != v.sizes)
    return badShape("d_value", dV, v.shapeString());

  attention::BackwardProblem<T> p;
  p.batch = batch;
  p.heads = heads;
  p.kvHeads = kvHeads;
  p.queries = queries;
  p.keys = keys;
  p.features = features;
  p.valueFeatures = valueFeatures;
  p.query = reinterpret_cast<const T *>(q.data);
  p.key = reinterpret_cast<const T *>(k.data);
  p.value = reinterpret_cast<const T *>(v.data);
  p.out = reinterpret_cast<const T *>(out.data);
  p.dOut = reinterpret_cast<const T *>(dOut.data);
  p.logSumExp = reinterpret_cast<const T *>(lse.data);
  p.dQuery = reinterpret_cast<T *>(dQ.data);
  p.dKey = reinterpret_cast<T *>(dK.data);
  p.dValue = reinterpret_cast<T *>(dV.data);
  for (int dim = 0; dim < 4; ++dim) {
    p.queryStrides[dim] = q.strides[dim];
    p.keyStrides[dim] = k.strides[dim];
    p.valueStrides[dim] = v.strides[dim];
    p.outStrides[dim] = out.strides[dim];
    p.dOutStrides[dim] = dOut.strides[dim];
    p.dQueryStrides[dim] = dQ.strides[dim];
    p.dKeyStrides[dim] = dK.strides[dim];
    p.dValueStrides[dim] = dV.strides[dim];
  }
  for (int dim = 0; dim < 3; ++dim)
    p.logSumExpStrides[dim] = lse.strides[dim];
  if (hasMask) {
    const StridedView &mask = views[maskIndex];
    if (Status s = readMaskStrides(kOp, mask, {batch, heads, queries, keys},
                                   p.maskStrides))
      return s;
    p.mask = reinterpret_cast<const T *>(mask.data);
  }
  // Positions are i64; read contiguously into a copy that keeps its storage
  // from step to step.
  thread_local std::vector<int64_t> positions;
  if (hasPositions) {
    if (Status s = readBatchIndices(call, kOp, "positions", positionsIndex,
                                    batch, positions))
      return s;
    p.positions = positions.data();
  }
  p.causal = flags & DTENSOR_RT_ATTENTION_CAUSAL;
  p.scale = static_cast<T>(scale);
  std::shared_ptr<WorkerPool> pool = blas::sharedWorkerPool();
  attention::runBackward(p, pool.get());
  return Status::success();
}

} // namespace

} // namespace dtensor::rt

extern "C" DTENSOR_EXPORT void
dtensor_rt_attention_backward(int32_t dtype, int32_t flags, double scale) {
  dtensor::rt::AbiCall::run(
      "attention backward", dtype, [&](dtensor::rt::AbiCall &call) {
        using namespace dtensor::rt;
        if (std::strcmp(call.program.backend->target(), "cpu") != 0)
          return runtimeError(
              std::string("attention backward: programs of target ") +
              call.program.backend->target() + " have no fused attention");
        const int32_t accepted = DTENSOR_RT_ATTENTION_CAUSAL |
                                 DTENSOR_RT_ATTENTION_MASK |
                                 DTENSOR_RT_ATTENTION_POSITIONS;
        if (flags & ~accepted)
          return runtimeError(
              "attention backward: flags " + std::to_string(flags) +
              " outside CAUSAL, MASK and POSITIONS (1, 2, 8): rows, "
              "accumulation and the log-sum-exp output are forward-only");
        if (call.dtype == DType::F32)
          return attendBackward<float>(call, flags, scale);
        if (call.dtype == DType::F64)
          return attendBackward<double>(call, flags, scale);
        return runtimeError(std::string("attention backward: dtype ") +
                            dtypeName(call.dtype) + " is not f32 or f64");
      });
}
