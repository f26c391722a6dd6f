//===- AttentionLogits.cpp - the masked, scaled scores of attention -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionLogits.h"

#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;

AffineMap dtensor::detail::batchedMap(MLIRContext *context, unsigned numLoops,
                                      ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results{getAffineDimExpr(0, context),
                                  getAffineDimExpr(1, context)};
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(numLoops, 0, results, context);
}

Value dtensor::detail::createAttentionLogits(OpBuilder &b, Location loc,
                                             Value scores, Value mask,
                                             Value positions, double scale,
                                             bool causal, Type compute) {
  constexpr int64_t kRank = 4;
  constexpr unsigned l = 2, s = 3;
  MLIRContext *context = b.getContext();
  ArrayRef<int64_t> scoresShape =
      cast<RankedTensorType>(scores.getType()).getShape();
  AffineMap identity = identityMap(context, kRank);
  SmallVector<Value> inputs{scores};
  SmallVector<AffineMap> maps{identity};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(getBroadcastMap(
        context, cast<RankedTensorType>(mask.getType()).getShape(),
        scoresShape));
  }
  if (positions) {
    inputs.push_back(positions);
    maps.push_back(AffineMap::get(kRank, 0, getAffineDimExpr(0, context)));
  }
  bool hasMask = mask != nullptr, hasPositions = positions != nullptr;
  return createMap(
      b, loc, scoresShape, compute, inputs, maps,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value result = arith::MulFOp::create(
            nested, bodyLoc, args[0],
            floatConstant(nested, bodyLoc, compute, scale));
        if (hasMask) {
          Value added = extend(nested, bodyLoc, args[1]);
          if (added.getType() != compute)
            added = convertElement(nested, bodyLoc, added, compute);
          result = arith::AddFOp::create(nested, bodyLoc, result, added);
        }
        if (causal) {
          Value row = linalg::IndexOp::create(nested, bodyLoc, l);
          Value column = linalg::IndexOp::create(nested, bodyLoc, s);
          Value above;
          if (hasPositions) {
            // Key j is masked iff j > positions[b] + i, in i64: a negative
            // position masks the query's whole row.
            Type i64 = nested.getI64Type();
            Value start = args[hasMask ? 2 : 1];
            if (start.getType() != i64)
              start = arith::ExtSIOp::create(nested, bodyLoc, i64, start);
            Value position = arith::AddIOp::create(
                nested, bodyLoc, start,
                arith::IndexCastOp::create(nested, bodyLoc, i64, row));
            above = arith::CmpIOp::create(
                nested, bodyLoc, arith::CmpIPredicate::sgt,
                arith::IndexCastOp::create(nested, bodyLoc, i64, column),
                position);
          } else {
            above = arith::CmpIOp::create(
                nested, bodyLoc, arith::CmpIPredicate::ugt, column, row);
          }
          Value minusInf = arith::ConstantOp::create(
              nested, bodyLoc, getNeutral(compute, Combiner::Max));
          result =
              arith::SelectOp::create(nested, bodyLoc, above, minusInf, result);
        }
        return SmallVector<Value>{result};
      });
}
