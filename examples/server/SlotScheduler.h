//===- SlotScheduler.h - Requests in the slots of a KV cache ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Continuous batching over a KV cache (an artifact with generation
// entries): each request holds one cache slot from its prefill to its last
// token. Between decode steps, queued requests take free slots and are
// prefilled one by one; each decode step then advances every active request
// by one token. A request leaves when it has its tokens, hits a stop token,
// or its client went away; its slot is free for the next step (the cache
// needs no clearing: a prefill overwrites the positions it uses, and
// attention never reads a position past a row's own).
//
// A job that samples (or reports logprobs) takes its tokens from the logits
// of its prefill and decode steps, which the caller fetches when
// wantsLogits says so; the others take the model's argmax.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_SLOTSCHEDULER_H
#define DTENSOR_EXAMPLES_SERVER_SLOTSCHEDULER_H

#include "Job.h"

#include "dtensor/Tooling/Generation.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::server {

class SlotScheduler {
public:
  using JobPtr = std::shared_ptr<Job>;
  using Clock = std::chrono::steady_clock;

  /// `vocab`: the logits' last dim (0: the artifact has none).
  explicit SlotScheduler(int64_t slots, int64_t vocab = 0)
      : slots_(slots), vocab_(vocab) {}

  size_t freeSlots() const;
  bool idle() const { return freeSlots() == static_cast<size_t>(slots_); }
  /// The jobs holding slots (prefilled or not).
  std::vector<JobPtr> active() const;

  /// Gives each job a free slot (at most freeSlots() jobs); returns the
  /// slots, in order: each is to be prefilled.
  std::vector<int64_t> admit(std::vector<JobPtr> jobs);
  const JobPtr &jobAt(int64_t slot) const { return entries_[slot]->job; }

  /// After slot's prefill: `all` is the next token after each prompt token,
  /// `logits` the V logits after the last one (empty when not fetched).
  /// Finishes a next_token job, or records the first generated token.
  /// Returns the tokens produced (0 or 1).
  size_t prefilled(int64_t slot, const std::vector<int64_t> &all,
                   const std::vector<float> &logits = {});

  /// The rows of the next decode step: every prefilled job that goes on.
  std::vector<tooling::Generator::Row> decodeRows() const;
  /// Whether the step over `rows` (of decodeRows) must fetch the logits;
  /// with a single row, whether slot `rows[0].slot`'s prefill must.
  bool wantsLogits(const std::vector<tooling::Generator::Row> &rows) const;
  bool wantsLogits(int64_t slot) const;
  /// After a decode step over `rows` (as decodeRows gave them): appends
  /// each row's token; `logits` holds each row's V logits when fetched.
  /// Returns the tokens produced.
  size_t decoded(const std::vector<tooling::Generator::Row> &rows,
                 const std::vector<int64_t> &next,
                 const std::vector<float> &logits = {});

  /// Ends the jobs whose clients went away; returns how many.
  size_t dropCancelled();

  /// Answers every job holding a slot `status` with `message`.
  void failAll(int status, const std::string &message);

  /// Inter-token gaps (seconds) of the last prefilled/decoded call, and
  /// the times to first token, for the metrics; cleared by the caller.
  std::vector<double> interTokenSeconds;
  std::vector<double> firstTokenSeconds;

private:
  struct Entry {
    JobPtr job;
    bool prefilled = false;
    int64_t position = 0; // where the last token goes
    int64_t last = 0;     // the last token, not yet in the cache
    Clock::time_point lastTokenAt;
  };
  /// Appends the job's choice after `argmax` and `logits` (null: not
  /// fetched) to the slot's job; finishes it (and frees the slot) when it
  /// is done.
  void append(int64_t slot, int64_t argmax, const float *logits);
  void finish(int64_t slot, const std::string &reason);

  int64_t slots_;
  int64_t vocab_;
  std::vector<std::optional<Entry>> entries_ =
      std::vector<std::optional<Entry>>(static_cast<size_t>(slots_));
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_SLOTSCHEDULER_H
