//===- CommTraceTest.cpp - the collectives a job ran, per module ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/CommTrace.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

/// Two sites in two modules of one parent, and one without a module.
std::vector<TraceSite> threeSites() {
  return {{"all_reduce", "sum", "layers.0.attn.wo", "p.json:1:1", 100},
          {"all_reduce", "sum", "layers.0.mlp.w2", "p.json:2:1", 200},
          {"all_gather", "", "", "p.json:3:1", -1}};
}

/// Every rank runs every site once in each of `steps` steps.
std::vector<TracedCall> everySiteOnce(int ranks, int steps) {
  std::vector<TracedCall> calls;
  for (int step = 0; step < steps; ++step)
    for (int rank = 0; rank < ranks; ++rank) {
      calls.push_back({rank, 0, "all_reduce", 0, 100, 10.0});
      calls.push_back({rank, 1, "all_reduce", 0, 200, 20.0});
      calls.push_back({rank, 2, "all_gather", 0, 64 + rank, 5.0});
    }
  return calls;
}

const CommTraceRow *rowOf(const CommTrace &trace, const std::string &module) {
  for (const CommTraceRow &row : trace.rows)
    if (row.module == module)
      return &row;
  return nullptr;
}

} // namespace

TEST(CommTrace, MatchingRunPerStepPerRank) {
  CommTrace trace = buildCommTrace(threeSites(), everySiteOnce(2, 3), 2, 3);
  ASSERT_EQ(trace.rows.size(), 3u);
  EXPECT_TRUE(trace.hasSites);
  const CommTraceRow &wo = trace.rows[0];
  EXPECT_EQ(wo.module, "layers.0.attn.wo");
  EXPECT_EQ(wo.compiledCalls, 1);
  EXPECT_EQ(wo.compiledBytes, 100);
  EXPECT_EQ(wo.calls, (std::vector<double>{1, 1}));
  EXPECT_EQ(wo.bytes, (std::vector<double>{100, 100}));
  EXPECT_DOUBLE_EQ(wo.micros[1], 10.0);
  EXPECT_EQ(wo.groups, (std::vector<int64_t>{0}));
  EXPECT_TRUE(wo.matchesReport);
  // Unknown compile-time bytes are not compared.
  EXPECT_EQ(trace.rows[2].compiledBytes, -1);
  EXPECT_EQ(trace.rows[2].bytes, (std::vector<double>{64, 65}));
  EXPECT_TRUE(trace.rows[2].matchesReport);
  std::string text = formatCommTraceText(trace);
  EXPECT_EQ(text.find('!'), std::string::npos) << text;
  EXPECT_NE(text.find("layers.0.attn.wo  all_reduce  sum        0       1      1"
                      "         100         100       10"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<unnamed>"), std::string::npos);
}

TEST(CommTrace, DifferencesAreFlagged) {
  // Rank 1 skips site 1 in step 0 and runs site 0 twice instead: the row
  // sums of site 0's row differ, and site 1 is not run once per step.
  std::vector<TracedCall> calls = everySiteOnce(2, 2);
  for (TracedCall &call : calls)
    if (call.rank == 1 && call.site == 1) {
      call.site = 0;
      call.kind = "all_reduce";
      call.bytesSent = 100;
      break;
    }
  CommTrace trace = buildCommTrace(threeSites(), calls, 2, 2);
  EXPECT_FALSE(rowOf(trace, "layers.0.attn.wo")->matchesReport);
  EXPECT_FALSE(rowOf(trace, "layers.0.mlp.w2")->matchesReport);
  EXPECT_TRUE(rowOf(trace, "")->matchesReport);
  std::string text = formatCommTraceText(trace);
  EXPECT_NE(text.find("! differs from the compile-time report"),
            std::string::npos)
      << text;

  // Bytes that differ from the report's are flagged too.
  calls = everySiteOnce(2, 1);
  calls[0].bytesSent = 99;
  trace = buildCommTrace(threeSites(), calls, 2, 1);
  EXPECT_FALSE(trace.rows[0].matchesReport);
  EXPECT_TRUE(trace.rows[1].matchesReport);

  // A call without a site, in an artifact that has sites.
  calls = everySiteOnce(1, 1);
  calls.push_back({0, -1, "broadcast", 1, 8, 1.0});
  trace = buildCommTrace(threeSites(), calls, 1, 1);
  const CommTraceRow *orphan = rowOf(trace, "<no site>");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->kind, "broadcast");
  EXPECT_FALSE(orphan->matchesReport);
}

TEST(CommTrace, ArtifactsWithoutSitesCompareNothing) {
  std::vector<TracedCall> calls = {{0, -1, "all_reduce", 0, 100, 1.0},
                                   {1, -1, "all_reduce", 0, 100, 1.0}};
  CommTrace trace = buildCommTrace({}, calls, 2, 1);
  EXPECT_FALSE(trace.hasSites);
  ASSERT_EQ(trace.rows.size(), 1u);
  EXPECT_TRUE(trace.rows[0].matchesReport);
  std::string text = formatCommTraceText(trace);
  EXPECT_NE(text.find("the artifact has no collective sites"),
            std::string::npos);
  EXPECT_EQ(text.find('!'), std::string::npos) << text;
}

TEST(CommTrace, JsonIsAModuleTreeWithTotals) {
  CommTrace trace = buildCommTrace(threeSites(), everySiteOnce(2, 1), 2, 1);
  nlohmann::json root = commTraceJson(trace);
  EXPECT_EQ(root["ranks"], 2);
  EXPECT_EQ(root["steps"], 1);
  EXPECT_EQ(root["matches_report"], true);
  const nlohmann::json &global = root["module"];
  EXPECT_EQ(global["fqn"], "");
  // The root holds the site without a module, and layers.
  ASSERT_EQ(global["collectives"].size(), 1u);
  EXPECT_EQ(global["collectives"][0]["kind"], "all_gather");
  EXPECT_EQ(global["collectives"][0]["reduction"], nullptr);
  EXPECT_EQ(global["total"]["calls"], 3.0);
  EXPECT_EQ(global["total"]["compiled_bytes_sent"], nullptr);
  ASSERT_EQ(global["children"].size(), 1u);
  const nlohmann::json &layers = global["children"][0];
  EXPECT_EQ(layers["fqn"], "layers");
  EXPECT_TRUE(layers["collectives"].empty());
  const nlohmann::json &layer0 = layers["children"][0];
  EXPECT_EQ(layer0["fqn"], "layers.0");
  EXPECT_EQ(layer0["total"]["calls"], 2.0);
  EXPECT_EQ(layer0["total"]["bytes_sent"], 300.0);
  EXPECT_EQ(layer0["total"]["compiled_bytes_sent"], 300);
  ASSERT_EQ(layer0["children"].size(), 2u);
  EXPECT_EQ(layer0["children"][0]["fqn"], "layers.0.attn");
  const nlohmann::json &wo = layer0["children"][0]["children"][0];
  EXPECT_EQ(wo["fqn"], "layers.0.attn.wo");
  EXPECT_EQ(wo["collectives"][0]["compiled_calls"], 1);
  EXPECT_EQ(wo["collectives"][0]["per_rank"][1]["time_us"], 10.0);
  EXPECT_EQ(wo["collectives"][0]["matches_report"], true);
}
