//===- LinkCalibration.cpp - Ping-pong over shared memory and TCP ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "LinkCalibration.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <new>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace dtensor::bench {

namespace {

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The sizes measured: minBytes, 4 minBytes, ..., up to maxBytes.
std::vector<size_t> messageSizes(const CalibrationOptions &options) {
  std::vector<size_t> sizes;
  for (size_t bytes = options.minBytes; bytes <= options.maxBytes; bytes *= 4)
    sizes.push_back(bytes);
  return sizes;
}

/// Round trips timed for `bytes`: about 64 MiB moved at most, at least 5.
int repsFor(const CalibrationOptions &options, size_t bytes) {
  size_t bound = (size_t(64) << 20) / std::max<size_t>(bytes, 1);
  return static_cast<int>(
      std::max<size_t>(5, std::min<size_t>(options.reps, bound)));
}

/// The alpha-beta fit of `result.points` (see the header). "" or an error.
std::string fit(LinkMeasurement &result) {
  if (result.points.size() < 2)
    return "calibration needs at least two message sizes";
  const PingPongPoint &smallest = result.points.front();
  const PingPongPoint &largest = result.points.back();
  result.latencyUs = smallest.oneWayUs;
  double transferUs = largest.oneWayUs - result.latencyUs;
  if (transferUs <= 0)
    return result.how + ": the largest message (" +
           std::to_string(largest.bytes) +
           " bytes) was not slower than the smallest; measure larger ones";
  // bytes per microsecond / 1e3 = GB/s.
  result.bandwidthGBps = static_cast<double>(largest.bytes) / transferUs / 1e3;
  return "";
}

/// Waits until `flag` holds `value`: spins a while, then yields the CPU
/// (the two processes may share one core).
void waitFor(const std::atomic<uint64_t> &flag, uint64_t value) {
  for (int spins = 0; flag.load(std::memory_order_acquire) != value; ++spins)
    if (spins > 2000)
      sched_yield();
}

/// The shared mapping: the round's number each way, the message size, then
/// one buffer each way.
struct SharedHeader {
  alignas(64) std::atomic<uint64_t> ping{0};
  alignas(64) std::atomic<uint64_t> pong{0};
  alignas(64) size_t bytes = 0;
};
constexpr size_t kHeaderBytes = 4096;

// --- TCP --------------------------------------------------------------------

bool writeAll(int fd, const char *data, size_t size) {
  while (size) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Reads exactly `size` bytes; 1 when done, 0 on a clean end of stream
/// before any byte, -1 on an error.
int readAll(int fd, char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::recv(fd, data + done, size - done, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0 && done == 0)
      return 0;
    if (n <= 0)
      return -1;
    done += static_cast<size_t>(n);
  }
  return 1;
}

void noDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// Echoes each message (an 8-byte size, then that many bytes) of the
/// connection `fd` until the peer closes it. 0 on a clean close.
int echo(int fd) {
  std::vector<char> buffer;
  for (;;) {
    uint64_t size = 0;
    int got = readAll(fd, reinterpret_cast<char *>(&size), sizeof(size));
    if (got == 0)
      return 0;
    if (got < 0 || size > (uint64_t(1) << 32))
      return 1;
    buffer.resize(size);
    if (readAll(fd, buffer.data(), size) != 1 ||
        !writeAll(fd, buffer.data(), size))
      return 1;
  }
}

/// A connected socket to `host`:`port`, retrying for 10 s while the server
/// starts; -1 with `error` set when none.
int connectTo(const std::string &host, const std::string &port,
              std::string &error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *list = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list)) {
    error = "cannot resolve " + host + ":" + port + ": " + gai_strerror(rc);
    return -1;
  }
  double deadline = nowUs() + 10e6;
  int fd = -1;
  while (fd < 0) {
    for (addrinfo *a = list; a && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        error = "cannot connect to " + host + ":" + port + ": " +
                std::strerror(errno);
        ::close(fd);
        fd = -1;
      }
    }
    if (fd < 0 && nowUs() > deadline)
      break;
    if (fd < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  freeaddrinfo(list);
  if (fd >= 0)
    noDelay(fd);
  return fd;
}

/// Ping-pong over the connected socket `fd` with an echo server.
std::string pingPongTcp(int fd, const CalibrationOptions &options,
                        LinkMeasurement &result) {
  std::vector<char> out(sizeof(uint64_t) + options.maxBytes, 1);
  std::vector<char> in(options.maxBytes);
  for (size_t bytes : messageSizes(options)) {
    uint64_t header = bytes;
    std::memcpy(out.data(), &header, sizeof(header));
    double best = 1e300;
    int reps = repsFor(options, bytes);
    for (int rep = -3; rep < reps; ++rep) {
      double start = nowUs();
      if (!writeAll(fd, out.data(), sizeof(header) + bytes) ||
          readAll(fd, in.data(), bytes) != 1)
        return result.how + ": the connection failed: " + std::strerror(errno);
      double roundTrip = nowUs() - start;
      if (rep >= 0)
        best = std::min(best, roundTrip);
    }
    result.points.push_back({bytes, best / 2});
  }
  return "";
}

} // namespace

std::string measureSharedMemory(const CalibrationOptions &options,
                                LinkMeasurement &result) {
  result = LinkMeasurement();
  result.how = "shared memory between two processes";
  size_t mapped = kHeaderBytes + 2 * options.maxBytes;
  void *memory = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return std::string("cannot map shared memory: ") + std::strerror(errno);
  auto *header = new (memory) SharedHeader();
  char *toChild = static_cast<char *>(memory) + kHeaderBytes;
  char *toParent = toChild + options.maxBytes;
  pid_t child = fork();
  if (child < 0) {
    munmap(memory, mapped);
    return std::string("cannot fork: ") + std::strerror(errno);
  }
  if (child == 0) {
    // Copy each message out of the mapping and the answer back in, as a
    // receiver and a sender through shared memory do.
    std::vector<char> own(options.maxBytes);
    for (uint64_t round = 1;; ++round) {
      waitFor(header->ping, round);
      size_t bytes = header->bytes;
      if (bytes == 0)
        _exit(0);
      std::memcpy(own.data(), toChild, bytes);
      std::memcpy(toParent, own.data(), bytes);
      header->pong.store(round, std::memory_order_release);
    }
  }
  std::vector<char> message(options.maxBytes, 1), answer(options.maxBytes);
  uint64_t round = 0;
  for (size_t bytes : messageSizes(options)) {
    double best = 1e300;
    int reps = repsFor(options, bytes);
    for (int rep = -3; rep < reps; ++rep) {
      double start = nowUs();
      std::memcpy(toChild, message.data(), bytes);
      header->bytes = bytes;
      header->ping.store(++round, std::memory_order_release);
      waitFor(header->pong, round);
      std::memcpy(answer.data(), toParent, bytes);
      double roundTrip = nowUs() - start;
      if (rep >= 0)
        best = std::min(best, roundTrip);
    }
    result.points.push_back({bytes, best / 2});
  }
  header->bytes = 0;
  header->ping.store(++round, std::memory_order_release);
  int status = 0;
  waitpid(child, &status, 0);
  munmap(memory, mapped);
  return fit(result);
}

std::string measureTcp(const CalibrationOptions &options,
                       LinkMeasurement &result) {
  result = LinkMeasurement();
  std::string error;
  if (!options.tcpPeer.empty()) {
    size_t colon = options.tcpPeer.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return "--tcp-peer: expected HOST:PORT, got \"" + options.tcpPeer + "\"";
    result.how = "TCP to " + options.tcpPeer;
    int fd = connectTo(options.tcpPeer.substr(0, colon),
                       options.tcpPeer.substr(colon + 1), error);
    if (fd < 0)
      return error;
    error = pingPongTcp(fd, options, result);
    ::close(fd);
    return error.empty() ? fit(result) : error;
  }
  // A child serves on the loopback interface, on a port the system picks.
  result.how = "TCP over 127.0.0.1 (loopback)";
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr *>(&address), length) != 0 ||
      ::listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length))
    return std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
  pid_t child = fork();
  if (child < 0)
    return std::string("cannot fork: ") + std::strerror(errno);
  if (child == 0) {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0)
      _exit(1);
    noDelay(fd);
    _exit(echo(fd));
  }
  ::close(listener);
  int fd =
      connectTo("127.0.0.1", std::to_string(ntohs(address.sin_port)), error);
  if (fd >= 0) {
    error = pingPongTcp(fd, options, result);
    ::close(fd);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return error.empty() ? fit(result) : error;
}

int serveTcpEcho(int port) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr *>(&address),
             sizeof(address)) != 0 ||
      ::listen(listener, 1) != 0) {
    std::perror("dtensor-bench-ceilings: --tcp-echo");
    return 1;
  }
  int fd = ::accept(listener, nullptr, nullptr);
  ::close(listener);
  if (fd < 0) {
    std::perror("dtensor-bench-ceilings: --tcp-echo: accept");
    return 1;
  }
  noDelay(fd);
  int status = echo(fd);
  ::close(fd);
  return status;
}

} // namespace dtensor::bench
