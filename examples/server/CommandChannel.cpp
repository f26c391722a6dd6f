//===- CommandChannel.cpp - Rank 0 tells the others what to do ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CommandChannel.h"

#include <algorithm>
#include <chrono>
#include <sched.h>
#include <thread>

namespace dtensor::server {

namespace {

constexpr size_t kHeader = 5; // kind, step, flags, slot, count

std::string mpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(call) + " failed: " + std::string(text, length);
}

} // namespace

CommandChannel::CommandChannel(size_t tokenCount)
    : buffer_(kHeader + tokenCount, 0) {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  // Errors come back as codes: the server answers and exits rather than
  // having MPI abort it mid-answer.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

CommandChannel::~CommandChannel() {
  if (comm_ != MPI_COMM_NULL)
    MPI_Comm_free(&comm_);
}

bool CommandChannel::send(const Command &command,
                          const std::vector<int64_t> &tokens,
                          std::string &error) {
  buffer_[0] = command.kind;
  buffer_[1] = command.step;
  buffer_[2] = command.fetchLogits ? 1 : 0;
  buffer_[3] = command.slot;
  buffer_[4] = command.count;
  std::fill(buffer_.begin() + kHeader, buffer_.end(), 0);
  std::copy_n(tokens.begin(), std::min(tokens.size(), buffer_.size() - kHeader),
              buffer_.begin() + kHeader);
  // Non-blocking on every rank: a blocking and a non-blocking broadcast do
  // not match in MPI.
  MPI_Request request;
  int code = MPI_Ibcast(buffer_.data(), static_cast<int>(buffer_.size()),
                        MPI_INT64_T, 0, comm_, &request);
  if (code == MPI_SUCCESS)
    code = MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    error = mpiError("MPI_Ibcast", code);
    return false;
  }
  return true;
}

bool CommandChannel::receive(Command &command, std::vector<int64_t> &tokens,
                             std::string &error) {
  MPI_Request request;
  int code = MPI_Ibcast(buffer_.data(), static_cast<int>(buffer_.size()),
                        MPI_INT64_T, 0, comm_, &request);
  // Poll: briefly without sleeping (the next step usually follows at
  // once), then with sleeps growing to 1 ms.
  auto spinUntil =
      std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  std::chrono::microseconds nap(50);
  int done = 0;
  while (code == MPI_SUCCESS) {
    code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS || done)
      break;
    if (std::chrono::steady_clock::now() < spinUntil) {
      sched_yield();
      continue;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
  if (code != MPI_SUCCESS) {
    error = mpiError("MPI_Ibcast", code);
    return false;
  }
  command.kind = static_cast<Command::Kind>(buffer_[0]);
  command.step = buffer_[1];
  command.fetchLogits = buffer_[2] != 0;
  command.slot = buffer_[3];
  command.count = buffer_[4];
  tokens.assign(buffer_.begin() + kHeader, buffer_.end());
  if (command.kind != Command::Step && command.kind != Command::Shutdown &&
      command.kind != Command::Prefill && command.kind != Command::Decode) {
    error = "unknown command " + std::to_string(buffer_[0]) + " from rank 0";
    return false;
  }
  return true;
}

} // namespace dtensor::server
