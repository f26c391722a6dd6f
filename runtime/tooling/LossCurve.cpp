//===- LossCurve.cpp - A training run's curves as an SVG picture ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/LossCurve.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>

namespace dtensor::tooling {

namespace {

constexpr double kWidth = 640, kHeight = 400;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

/// XML-escapes `text` for an element's content or an attribute.
std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::string lossCurveSvg(const std::string &title,
                         const std::vector<CurveSeries> &series) {
  double xMin = std::numeric_limits<double>::infinity(), xMax = -xMin;
  double yMin = xMin, yMax = -xMin;
  for (const CurveSeries &s : series)
    for (auto [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y)) {
        xMin = std::min(xMin, x);
        xMax = std::max(xMax, x);
        yMin = std::min(yMin, y);
        yMax = std::max(yMax, y);
      }
  if (!(xMin <= xMax)) {
    xMin = 0;
    xMax = 1;
    yMin = 0;
    yMax = 1;
  }
  if (xMax == xMin)
    xMax = xMin + 1;
  if (yMax == yMin) {
    yMin -= 0.5;
    yMax += 0.5;
  }
  const double plotWidth = kWidth - kLeft - kRight;
  const double plotHeight = kHeight - kTop - kBottom;
  auto px = [&](double x) {
    return kLeft + (x - xMin) / (xMax - xMin) * plotWidth;
  };
  auto py = [&](double y) {
    return kTop + (yMax - y) / (yMax - yMin) * plotHeight;
  };

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    number(kWidth) + "\" height=\"" + number(kHeight) +
                    "\" viewBox=\"0 0 " + number(kWidth) + " " +
                    number(kHeight) +
                    "\" font-family=\"sans-serif\" "
                    "font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + number(kWidth / 2) +
         "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
         escape(title) + "</text>\n";
  // Axes, ticks and their labels.
  svg += "<g stroke=\"#444\" fill=\"none\">\n<rect x=\"" + number(kLeft) +
         "\" y=\"" + number(kTop) + "\" width=\"" + number(plotWidth) +
         "\" height=\"" + number(plotHeight) + "\"/>\n</g>\n";
  for (int i = 0; i <= 4; ++i) {
    double x = xMin + (xMax - xMin) * i / 4, y = yMin + (yMax - yMin) * i / 4;
    svg += "<line x1=\"" + number(px(x)) + "\" y1=\"" +
           number(kTop + plotHeight) + "\" x2=\"" + number(px(x)) + "\" y2=\"" +
           number(kTop + plotHeight + 5) + "\" stroke=\"#444\"/>\n<text x=\"" +
           number(px(x)) + "\" y=\"" + number(kTop + plotHeight + 18) +
           "\" text-anchor=\"middle\">" + number(x) + "</text>\n";
    svg += "<line x1=\"" + number(kLeft - 5) + "\" y1=\"" + number(py(y)) +
           "\" x2=\"" + number(kLeft) + "\" y2=\"" + number(py(y)) +
           "\" stroke=\"#444\"/>\n<text x=\"" + number(kLeft - 8) + "\" y=\"" +
           number(py(y) + 4) + "\" text-anchor=\"end\">" + number(y) +
           "</text>\n";
  }
  svg += "<text x=\"" + number(kLeft + plotWidth / 2) + "\" y=\"" +
         number(kHeight - 10) + "\" text-anchor=\"middle\">step</text>\n";
  // The series, and their legend at the top right.
  for (size_t i = 0; i < series.size(); ++i) {
    const CurveSeries &s = series[i];
    std::string points;
    for (auto [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y))
        points +=
            (points.empty() ? "" : " ") + number(px(x)) + "," + number(py(y));
    svg += "<polyline class=\"series\" data-name=\"" + escape(s.name) +
           "\" fill=\"none\" stroke=\"" + escape(s.color) +
           "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    double legendY = kTop + 16 + 16 * double(i);
    svg += "<line x1=\"" + number(kWidth - kRight - 110) + "\" y1=\"" +
           number(legendY - 4) + "\" x2=\"" + number(kWidth - kRight - 90) +
           "\" y2=\"" + number(legendY - 4) + "\" stroke=\"" + escape(s.color) +
           "\" stroke-width=\"2\"/>\n<text x=\"" +
           number(kWidth - kRight - 85) + "\" y=\"" + number(legendY) + "\">" +
           escape(s.name) + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

std::string writeTextFile(const std::string &path, const std::string &text) {
  const std::string temporary =
      path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "w");
  if (!file)
    return "cannot create " + temporary + ": " + std::strerror(errno);
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  int saved = written ? 0 : errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    saved = errno;
  }
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    if (written)
      saved = errno;
    std::remove(temporary.c_str());
    return "cannot write " + path + ": " + std::strerror(saved);
  }
  return "";
}

} // namespace dtensor::tooling
