//===- HttpServer.h - The endpoints on rank 0 -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cpp-httplib on its own threads. Handlers validate, queue and wait; they
// never call MPI or the runtime (the main thread does that alone).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_HTTPSERVER_H
#define DTENSOR_EXAMPLES_SERVER_HTTPSERVER_H

#include "Options.h"
#include "ServerState.h"

#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
} // namespace httplib

namespace dtensor::server {

class HttpServer {
public:
  HttpServer(const Options &options, ServerState &state);
  ~HttpServer();
  HttpServer(const HttpServer &) = delete;
  HttpServer &operator=(const HttpServer &) = delete;

  /// Binds --host:--port; false with `error` if that fails.
  bool bind(std::string &error);
  int port() const { return port_; }

  /// Serves on a thread of its own until stop().
  void start();
  /// Stops accepting and waits until the handlers have written their
  /// answers. Safe to call from any thread, more than once.
  void stop();

private:
  void routes();

  const Options &options_;
  ServerState &state_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex stopMutex_;
  bool stopped_ = false;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_HTTPSERVER_H
