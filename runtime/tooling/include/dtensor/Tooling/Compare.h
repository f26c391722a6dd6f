//===- Compare.h - An output against its reference --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What `dtensor-run --check` does with each output: compare the values the
// ranks computed with those of the artifact's single-device reference
// program, and say whether they agree.
//
// Floating-point outputs agree when the largest absolute error, relative to
// the largest finite reference magnitude (so that entries near zero do not
// dominate), is at most the tolerance; an element that is NaN on one side
// only, or an infinity the other side does not have, is a mismatch whatever
// the tolerance. Integer and bool outputs must be equal element by element.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_COMPARE_H
#define DTENSOR_TOOLING_COMPARE_H

#include "dtensor/runtime.h"

#include <cstddef>
#include <optional>
#include <string>

namespace dtensor::tooling {

/// The outcome of compareWithReference.
struct Comparison {
  bool floatingPoint = false;
  size_t count = 0;       // elements compared
  size_t mismatches = 0;  // elements not equal (NaN equals NaN)
  size_t nanMismatches = 0; // elements NaN on one side only
  double maxAbsError = 0; // largest |expected - actual| over the non-NaN ones
  double maxRelError = 0; // maxAbsError / largest finite |expected|
                          // (maxAbsError when that is 0)
  double tolerance = 0;   // the relative error accepted (floats only)
  bool ok = false;
};

/// The relative error --check accepts for `dtype` unless told otherwise:
/// 1e-5 for f32 and f64, 1e-2 for f16 and bf16 (0 for the others: they
/// must match exactly).
double defaultTolerance(dtensor_dtype dtype);

/// Compares `count` row-major elements of `dtype`: `actual` (the ranks'
/// result) with `expected` (the reference's). `tolerance`: the largest
/// relative error accepted for floating-point dtypes, defaultTolerance()
/// when not given; ignored for the others.
Comparison compareWithReference(dtensor_dtype dtype, const void *expected,
                                const void *actual, size_t count,
                                std::optional<double> tolerance = std::nullopt);

/// dtensor-run's line for output `name`:
///   check NAME: max abs error E, max rel error R (tolerance T): ok
///   check NAME: K of N elements differ: MISMATCH
/// (a floating-point one adds ", K element(s) NaN on one side only" before
/// the tolerance when there are some).
std::string describeComparison(const std::string &name,
                               const Comparison &comparison);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_COMPARE_H
