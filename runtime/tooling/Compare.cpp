//===- Compare.cpp - An output against its reference ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/Compare.h"

#include "dtensor/Tooling/ElementTypes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtensor::tooling {

double defaultTolerance(dtensor_dtype dtype) {
  switch (dtype) {
  case DTENSOR_F32:
  case DTENSOR_F64:
    return 1e-5;
  case DTENSOR_F16:
  case DTENSOR_BF16:
    return 1e-2;
  default:
    return 0;
  }
}

Comparison compareWithReference(dtensor_dtype dtype, const void *expected,
                                const void *actual, size_t count,
                                std::optional<double> tolerance) {
  Comparison result;
  result.floatingPoint = isFloatingPoint(dtype);
  result.count = count;
  double maxReference = 0;
  for (size_t i = 0; i < count; ++i) {
    double want = elementAsDouble(expected, dtype, i);
    double got = elementAsDouble(actual, dtype, i);
    if (std::isnan(want) != std::isnan(got)) {
      ++result.mismatches;
      ++result.nanMismatches;
      continue;
    }
    if (std::isnan(want))
      continue;
    double error = std::fabs(want - got);
    if (std::isinf(want) || std::isinf(got))
      error = want == got ? 0 : INFINITY;
    result.maxAbsError = std::max(result.maxAbsError, error);
    if (std::isfinite(want))
      maxReference = std::max(maxReference, std::fabs(want));
    result.mismatches += error != 0;
  }
  if (!result.floatingPoint) {
    result.ok = result.mismatches == 0;
    return result;
  }
  result.tolerance = tolerance.value_or(defaultTolerance(dtype));
  // Relative to the largest finite reference magnitude, so that entries
  // near zero do not dominate (infinities are compared exactly above: an
  // infinite reference must not make every finite error look small).
  result.maxRelError = maxReference > 0 ? result.maxAbsError / maxReference
                                        : result.maxAbsError;
  result.ok = result.nanMismatches == 0 &&
              result.maxRelError <= result.tolerance &&
              !std::isnan(result.maxRelError);
  return result;
}

std::string describeComparison(const std::string &name,
                               const Comparison &comparison) {
  const char *verdict = comparison.ok ? "ok" : "MISMATCH";
  char text[256];
  if (!comparison.floatingPoint) {
    std::snprintf(text, sizeof(text), "%zu of %zu elements differ: %s",
                  comparison.mismatches, comparison.count, verdict);
    return "check " + name + ": " + text;
  }
  std::string nan;
  if (comparison.nanMismatches)
    nan = ", " + std::to_string(comparison.nanMismatches) + " element" +
          (comparison.nanMismatches == 1 ? "" : "s") +
          " NaN on one side only";
  std::snprintf(text, sizeof(text), "max abs error %.3g, max rel error %.3g",
                comparison.maxAbsError, comparison.maxRelError);
  char rest[64];
  std::snprintf(rest, sizeof(rest), " (tolerance %.3g): %s",
                comparison.tolerance, verdict);
  return "check " + name + ": " + text + nan + rest;
}

} // namespace dtensor::tooling
