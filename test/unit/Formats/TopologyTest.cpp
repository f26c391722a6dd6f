//===- TopologyTest.cpp - Tests for topology files ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Topology.h"

#include <gtest/gtest.h>

namespace {

using namespace dtensor::rt;

const char *kTwoClasses = R"({
  "links": {
    "nvlink": {"latency_us": 2, "bandwidth_gbps": 300},
    "ib": {"latency_us": 6.5, "bandwidth_gbps": 25}
  },
  "intra_host": "nvlink",
  "inter_host": "ib",
  "comment": "made up"
})";

/// The error of parsing `text` ("" when it parses).
std::string parseError(const std::string &text) {
  Topology topology;
  return parseTopology(text, "topo.json", topology);
}

TEST(TopologyTest, ParsesClassesAndDefaults) {
  Topology topology;
  ASSERT_EQ(parseTopology(kTwoClasses, "topo.json", topology), "");
  ASSERT_EQ(topology.links.size(), 2u);
  const LinkClass *ib = topology.findLink("ib");
  ASSERT_NE(ib, nullptr);
  EXPECT_DOUBLE_EQ(ib->latencyUs, 6.5);
  EXPECT_DOUBLE_EQ(ib->bandwidthGBps, 25);
  EXPECT_EQ(topology.intraHost, "nvlink");
  EXPECT_EQ(topology.interHost, "ib");
  EXPECT_EQ(topology.comment, "made up");
  EXPECT_EQ(topology.findLink("tcp"), nullptr);
}

TEST(TopologyTest, EncodingReadsBack) {
  Topology topology;
  ASSERT_EQ(parseTopology(kTwoClasses, "a.json", topology), "");
  topology.meshDims = {{"0", "nvlink"}, {"dp", "ib"}};
  Topology again;
  ASSERT_EQ(parseTopology(encodeTopology(topology), "b.json", again), "");
  ASSERT_EQ(again.links.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again.links[i].name, topology.links[i].name);
    EXPECT_DOUBLE_EQ(again.links[i].latencyUs, topology.links[i].latencyUs);
    EXPECT_DOUBLE_EQ(again.links[i].bandwidthGBps,
                     topology.links[i].bandwidthGBps);
  }
  EXPECT_EQ(again.meshDims, topology.meshDims);
  EXPECT_EQ(again.intraHost, "nvlink");
  EXPECT_EQ(again.comment, "made up");
}

TEST(TopologyTest, OneClassIsEveryLink) {
  Topology topology;
  ASSERT_EQ(parseTopology(
                R"({"links": {"shm": {"latency_us": 1, "bandwidth_gbps": 5}}})",
                "t.json", topology),
            "");
  std::vector<LinkClass> links;
  ASSERT_EQ(resolveMeshDimLinks(topology, "t.json", {2, 2}, {}, links), "");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].name, "shm");
  EXPECT_EQ(links[1].name, "shm");
}

TEST(TopologyTest, ErrorsNameTheirJsonPath) {
  EXPECT_EQ(parseError("{"), "topo.json: not valid JSON");
  EXPECT_EQ(parseError("[]"), "topo.json: expected an object, got []");
  EXPECT_EQ(parseError("{}"), "topo.json: missing key \"links\"");
  EXPECT_EQ(parseError(R"({"links": {}})"),
            "topo.json: links: expected at least one link class");
  EXPECT_EQ(parseError(R"({"links": {"ib": {"latency_us": 1}}})"),
            "topo.json: links.ib: missing key \"bandwidth_gbps\"");
  EXPECT_EQ(
      parseError(
          R"({"links": {"ib": {"latency_us": 1, "bandwidth_gbps": 0}}})"),
      "topo.json: links.ib.bandwidth_gbps: expected a positive number, got 0");
  EXPECT_EQ(
      parseError(
          R"({"links": {"ib": {"latency_us": -1, "bandwidth_gbps": 1}}})"),
      "topo.json: links.ib.latency_us: expected a non-negative number, got "
      "-1");
  EXPECT_EQ(
      parseError(
          R"({"links": {"i b": {"latency_us": "1", "bandwidth_gbps": 1}}})"),
      "topo.json: links[\"i b\"].latency_us: expected a non-negative number, "
      "got \"1\"");
  EXPECT_EQ(parseError(R"({"links": {"ib": {"latency_us": 1,
      "bandwidth_gbps": 1, "mtu": 9000}}})"),
            "topo.json: links.ib.mtu: unknown key; expected one of "
            "bandwidth_gbps, latency_us");
  EXPECT_EQ(parseError(R"({"links": {"ib": {"latency_us": 1,
      "bandwidth_gbps": 1}}, "inter_host": "eth"})"),
            "topo.json: inter_host: no link class \"eth\" in \"links\"");
  EXPECT_EQ(parseError(R"({"links": {"ib": {"latency_us": 1,
      "bandwidth_gbps": 1}}, "mesh_dims": {"tp": 1}})"),
            "topo.json: mesh_dims.tp: expected a string, got 1");
  EXPECT_EQ(parseError(R"({"links": {"ib": {"latency_us": 1,
      "bandwidth_gbps": 1}}, "hosts": 2})"),
            "topo.json: hosts: unknown key; expected one of comment, "
            "compute_gflops, inter_host, intra_host, links, mesh_dims");
}

TEST(TopologyTest, ComputeRateIsOptionalAndPositive) {
  Topology topology;
  ASSERT_EQ(parseTopology(kTwoClasses, "t.json", topology), "");
  EXPECT_EQ(topology.computeGflops, 0.0);
  const std::string rated = R"({"links": {"ib": {"latency_us": 1,
      "bandwidth_gbps": 1}}, "compute_gflops": 37.5})";
  ASSERT_EQ(parseTopology(rated, "t.json", topology), "");
  EXPECT_DOUBLE_EQ(topology.computeGflops, 37.5);
  Topology again;
  ASSERT_EQ(parseTopology(encodeTopology(topology), "b.json", again), "");
  EXPECT_DOUBLE_EQ(again.computeGflops, 37.5);
  // Without a rate the file says nothing of compute.
  topology.computeGflops = 0.0;
  EXPECT_EQ(encodeTopology(topology).find("compute_gflops"), std::string::npos);
  const std::string links =
      R"({"links": {"ib": {"latency_us": 1, "bandwidth_gbps": 1}}, )";
  EXPECT_EQ(parseError(links + R"("compute_gflops": 0})"),
            "topo.json: compute_gflops: expected a positive number, got 0");
  EXPECT_EQ(parseError(links + R"("compute_gflops": -3})"),
            "topo.json: compute_gflops: expected a positive number, got -3");
  EXPECT_EQ(parseError(links + R"("compute_gflops": "fast"})"),
            "topo.json: compute_gflops: expected a positive number, got "
            "\"fast\"");
}

TEST(TopologyTest, ResolvesLastDimInsideAHost) {
  Topology topology;
  ASSERT_EQ(parseTopology(kTwoClasses, "t.json", topology), "");
  std::vector<LinkClass> links;
  ASSERT_EQ(resolveMeshDimLinks(topology, "t.json", {2, 4, 2}, {}, links), "");
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].name, "ib");
  EXPECT_EQ(links[1].name, "ib");
  EXPECT_EQ(links[2].name, "nvlink");
}

TEST(TopologyTest, MeshDimsByNameOrIndex) {
  Topology topology;
  ASSERT_EQ(parseTopology(kTwoClasses, "t.json", topology), "");
  topology.meshDims = {{"tp", "ib"}, {"0", "nvlink"}};
  std::vector<LinkClass> links;
  ASSERT_EQ(
      resolveMeshDimLinks(topology, "t.json", {2, 2}, {"dp", "tp"}, links), "");
  EXPECT_EQ(links[0].name, "nvlink");
  EXPECT_EQ(links[1].name, "ib");

  topology.meshDims = {{"pp", "ib"}};
  EXPECT_EQ(
      resolveMeshDimLinks(topology, "t.json", {2, 2}, {"dp", "tp"}, links),
      "t.json: mesh_dims.pp: the mesh has no dim \"pp\"; its dims are dp (0), "
      "tp (1)");
  topology.meshDims = {{"2", "ib"}};
  EXPECT_EQ(resolveMeshDimLinks(topology, "t.json", {2, 2}, {}, links),
            "t.json: mesh_dims[\"2\"]: the mesh has no dim \"2\"; its dims "
            "are 0, 1");
  topology.meshDims = {{"dp", "ib"}, {"0", "nvlink"}};
  EXPECT_EQ(
      resolveMeshDimLinks(topology, "t.json", {2, 2}, {"dp", "tp"}, links),
      "t.json: mesh_dims[\"0\"]: mesh dim 0 ('dp') is given a class twice");
}

TEST(TopologyTest, ADimWithoutAClassIsAnError) {
  Topology topology;
  ASSERT_EQ(parseTopology(R"({"links": {
      "a": {"latency_us": 1, "bandwidth_gbps": 1},
      "b": {"latency_us": 1, "bandwidth_gbps": 2}}, "intra_host": "a"})",
                          "t.json", topology),
            "");
  std::vector<LinkClass> links;
  EXPECT_EQ(resolveMeshDimLinks(topology, "t.json", {4}, {}, links), "");
  EXPECT_EQ(
      resolveMeshDimLinks(topology, "t.json", {2, 2}, {"dp", "tp"}, links),
      "t.json: mesh dim 0 ('dp') has no link class: name it in "
      "\"mesh_dims\" or set \"inter_host\"");
}

} // namespace
