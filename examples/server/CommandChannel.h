//===- CommandChannel.h - Rank 0 tells the others what to do ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One broadcast per step on a communicator of the server's own (a duplicate
// of MPI_COMM_WORLD, so it never mixes with the runtime's messages): the
// command, the step number, whether to fetch logits, a slot and a count, and
// the command's tokens (a batch's, a prompt, or a decode step's rows).
// Waiting ranks poll a non-blocking broadcast and sleep in between: a
// blocking one would spin a core for as long as the server is idle.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_COMMANDCHANNEL_H
#define DTENSOR_EXAMPLES_SERVER_COMMANDCHANNEL_H

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::server {

struct Command {
  /// Step: a recompute step of the whole [batch, seqLen] tokens. Prefill
  /// (KV cache): `count` prompt tokens into cache slot `slot`. Decode (KV
  /// cache): `count` rows of (slot, token, position).
  enum Kind : int64_t { Step = 1, Shutdown = 2, Prefill = 3, Decode = 4 };
  Kind kind = Shutdown;
  int64_t step = 0;
  bool fetchLogits = false;
  int64_t slot = 0;
  int64_t count = 0;
};

class CommandChannel {
public:
  /// COLLECTIVE (MPI_Comm_dup). `tokenCount`: the most token values a
  /// command carries (batch * seqLen; with a KV cache, the longest prompt or
  /// three values per slot).
  explicit CommandChannel(size_t tokenCount);
  /// COLLECTIVE (MPI_Comm_free).
  ~CommandChannel();
  CommandChannel(const CommandChannel &) = delete;
  CommandChannel &operator=(const CommandChannel &) = delete;

  /// Rank 0. False with `error` if MPI failed.
  bool send(const Command &command, const std::vector<int64_t> &tokens,
            std::string &error);

  /// The other ranks: waits for rank 0's next command. False with `error`
  /// if MPI failed.
  bool receive(Command &command, std::vector<int64_t> &tokens,
               std::string &error);

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<int64_t> buffer_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_COMMANDCHANNEL_H
