//===- LinkCalibration.h - Latency and bandwidth of links -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-bench-ceilings --calibrate-topology: the alpha (latency) and beta
// (bandwidth) of this machine's links between two processes, measured by
// ping-pong, for a topology file (docs/topology.md):
//
// - shared memory: two processes (this one and a forked child) bounce a
//   message through a shared mapping, each copying it in and out;
// - TCP: a message and its echo over a TCP connection (TCP_NODELAY), to a
//   forked child on the loopback interface, or to `--tcp-peer HOST:PORT`,
//   a `dtensor-bench-ceilings --tcp-echo PORT` in another network namespace
//   (scripts/netns-hosts.sh: another "host").
//
// One way of a round trip of s bytes is t(s) = alpha + s / beta; alpha is
// the fastest one-way time of the smallest message, beta the largest
// message's size over its fastest one-way time minus alpha.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLS_DTENSOR_BENCH_CEILINGS_LINKCALIBRATION_H
#define DTENSOR_TOOLS_DTENSOR_BENCH_CEILINGS_LINKCALIBRATION_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::bench {

/// What to measure.
struct CalibrationOptions {
  /// Message sizes, from `minBytes` up to `maxBytes` by factors of 4.
  size_t minBytes = 8;
  size_t maxBytes = 8 << 20;
  /// Round trips timed per size (fewer for large messages: about 64 MiB
  /// moved per size at most, and at least 5), after a few untimed ones.
  int reps = 1000;
  /// "" for a child on the loopback interface, else "HOST:PORT" of a
  /// --tcp-echo server.
  std::string tcpPeer;
};

/// One message size and its fastest one-way time.
struct PingPongPoint {
  size_t bytes = 0;
  double oneWayUs = 0.0;
};

/// A link's measurements and the alpha-beta fit.
struct LinkMeasurement {
  /// Where it was measured ("shared memory between two processes", "TCP
  /// over 127.0.0.1", "TCP to 10.213.0.2:7000").
  std::string how;
  std::vector<PingPongPoint> points;
  double latencyUs = 0.0;
  double bandwidthGBps = 0.0;
};

/// Ping-pong through shared memory with a forked child. "" or the error.
std::string measureSharedMemory(const CalibrationOptions &options,
                                LinkMeasurement &result);

/// Ping-pong over TCP: with options.tcpPeer, to that echo server; else to a
/// forked child serving on 127.0.0.1. "" or the error.
std::string measureTcp(const CalibrationOptions &options,
                       LinkMeasurement &result);

/// Serves one connection on `port` (all interfaces): echoes each message
/// back until the peer closes. Returns the exit status (0 when the peer
/// closed cleanly).
int serveTcpEcho(int port);

} // namespace dtensor::bench

#endif // DTENSOR_TOOLS_DTENSOR_BENCH_CEILINGS_LINKCALIBRATION_H
