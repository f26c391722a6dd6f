//===- BackwardMark.h - Which ops differentiation built ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --dtensor-differentiate marks the location of each op of the backward it
// appends, and of the op that gives each weight its gradient, so that later
// stages can say so (propagation's `explain`: "computing the gradient of
// 'fc2.weight'"). The mark is a FusedLoc around the op's own location whose
// metadata is {dtensor.backward} or {dtensor.backward = "<weight>"}: the
// position diagnostics show and the module a model plan's op names stay
// those of the forward op the backward op differentiates.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_AUTODIFF_BACKWARDMARK_H
#define DTENSOR_AUTODIFF_BACKWARDMARK_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace dtensor::autodiff {

/// `loc` marked as the location of an op of the backward; with `weight`,
/// of the op whose result is that weight's gradient. A mark already there
/// is replaced.
mlir::Location markBackward(mlir::Location loc, llvm::StringRef weight = {});

/// What the mark of a location says.
struct BackwardMark {
  /// The op belongs to the backward.
  bool backward = false;
  /// The weight whose gradient the op gives; "" when none.
  std::string gradientOf;
};

/// The mark of `loc`; a location without one is not of the backward.
BackwardMark getBackwardMark(mlir::Location loc);

/// `loc` without its mark.
mlir::Location getUnmarkedLoc(mlir::Location loc);

} // namespace dtensor::autodiff

#endif // DTENSOR_AUTODIFF_BACKWARDMARK_H
