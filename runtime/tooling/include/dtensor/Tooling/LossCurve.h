//===- LossCurve.h - A training run's curves as an SVG picture --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run --plot: the loss (and any other series) against the step, as
// a self-contained SVG file that a browser shows: axes with their ranges,
// five ticks each, one polyline per series and a legend. SVG is text, so no
// library is needed to write it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_LOSSCURVE_H
#define DTENSOR_TOOLING_LOSSCURVE_H

#include <string>
#include <utility>
#include <vector>

namespace dtensor::tooling {

/// One named series of (step, value) points, drawn in `color`.
struct CurveSeries {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
};

/// The SVG document of `series` under `title`. Non-finite values are left
/// out; an empty plot still has its axes.
std::string lossCurveSvg(const std::string &title,
                         const std::vector<CurveSeries> &series);

/// Writes `text` to `path` through a temporary file renamed over it, so
/// that a failure never leaves half a picture. "" or the error.
std::string writeTextFile(const std::string &path, const std::string &text);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_LOSSCURVE_H
