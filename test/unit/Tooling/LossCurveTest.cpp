//===- LossCurveTest.cpp - The SVG picture of a run's curves --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/LossCurve.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dtensor::tooling;
using namespace dtensor::rt::test;

TEST(LossCurveTest, OnePolylinePerSeriesOfItsFinitePoints) {
  std::string svg = lossCurveSvg(
      "loss <train> & eval",
      {{"train", "#1f77b4", {{1, 5.0}, {2, 4.0}, {3, NAN}, {4, 2.0}}},
       {"eval", "#ff7f0e", {{2, 4.5}}}});
  EXPECT_TRUE(contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(contains(svg, "loss &lt;train&gt; &amp; eval"));
  // The x axis spans steps 1 to 4, the y axis 2 to 5: step 1 at the left
  // edge (x 70), loss 5 at the top (y 40), step 4 loss 2 at the bottom right.
  EXPECT_TRUE(contains(svg,
                       "data-name=\"train\" fill=\"none\" stroke=\"#1f77b4\" "
                       "stroke-width=\"1.5\" points=\"70,40 253.3,143.3 "
                       "620,350\""));
  EXPECT_TRUE(contains(svg, "data-name=\"eval\""));
  EXPECT_TRUE(contains(svg, "</svg>"));
}

TEST(LossCurveTest, AnEmptyPlotHasItsAxes) {
  std::string svg = lossCurveSvg("nothing", {{"loss", "black", {}}});
  EXPECT_TRUE(contains(svg, "points=\"\""));
  EXPECT_TRUE(contains(svg, ">step</text>"));
}

TEST(LossCurveTest, WritesThroughATemporaryFile) {
  TempDir dir;
  EXPECT_EQ(writeTextFile(dir.file("a.svg"), "<svg/>"), "");
  EXPECT_EQ(readBytes(dir.file("a.svg")), "<svg/>");
  EXPECT_TRUE(
      contains(writeTextFile(dir.file("missing/a.svg"), "x"), "cannot create"));
}
