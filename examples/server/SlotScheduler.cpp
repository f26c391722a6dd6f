//===- SlotScheduler.cpp - Requests in the slots of a KV cache ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "SlotScheduler.h"

#include "TokenChoice.h"

#include <algorithm>
#include <cassert>

namespace dtensor::server {

size_t SlotScheduler::freeSlots() const {
  return static_cast<size_t>(
      std::count_if(entries_.begin(), entries_.end(),
                    [](const std::optional<Entry> &e) { return !e; }));
}

std::vector<SlotScheduler::JobPtr> SlotScheduler::active() const {
  std::vector<JobPtr> jobs;
  for (const std::optional<Entry> &entry : entries_)
    if (entry)
      jobs.push_back(entry->job);
  return jobs;
}

std::vector<int64_t> SlotScheduler::admit(std::vector<JobPtr> jobs) {
  assert(jobs.size() <= freeSlots() && "more jobs than free slots");
  std::vector<int64_t> slots;
  size_t next = 0;
  for (int64_t slot = 0; slot < slots_ && next < jobs.size(); ++slot) {
    if (entries_[slot])
      continue;
    entries_[slot] = Entry{std::move(jobs[next++])};
    slots.push_back(slot);
  }
  return slots;
}

void SlotScheduler::finish(int64_t slot, const std::string &reason) {
  Job &job = *entries_[slot]->job;
  JobResult result;
  result.status = 200;
  result.generated = job.generated;
  result.logprobs = job.generatedLogprobs;
  result.finishReason = reason;
  job.finish(std::move(result));
  entries_[slot].reset();
}

void SlotScheduler::append(int64_t slot, int64_t argmax, const float *logits) {
  Entry &entry = *entries_[slot];
  Job &job = *entry.job;
  TokenChoice choice = chooseToken(job, argmax, logits, vocab_);
  int64_t token = choice.token;
  Clock::time_point now = Clock::now();
  if (job.generated.empty())
    firstTokenSeconds.push_back(
        std::chrono::duration<double>(now - job.created).count());
  else
    interTokenSeconds.push_back(
        std::chrono::duration<double>(now - entry.lastTokenAt).count());
  entry.lastTokenAt = now;
  if (std::find(job.stop.begin(), job.stop.end(), token) != job.stop.end())
    return finish(slot, "stop");
  job.generated.push_back(token);
  if (choice.logprobs)
    job.generatedLogprobs.push_back(*choice.logprobs);
  job.publish(token, choice.logprobs ? &*choice.logprobs : nullptr);
  if (static_cast<int64_t>(job.generated.size()) >= job.maxNewTokens)
    return finish(slot, "length");
  entry.last = token;
}

bool SlotScheduler::wantsLogits(int64_t slot) const {
  return vocab_ > 0 && entries_[slot] && entries_[slot]->job->needsLogits();
}

bool SlotScheduler::wantsLogits(
    const std::vector<tooling::Generator::Row> &rows) const {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const tooling::Generator::Row &row) {
                       return wantsLogits(row.slot);
                     });
}

size_t SlotScheduler::prefilled(int64_t slot, const std::vector<int64_t> &all,
                                const std::vector<float> &logits) {
  const float *lastLogits = logits.empty() ? nullptr : logits.data();
  Entry &entry = *entries_[slot];
  Job &job = *entry.job;
  assert(all.size() == job.prompt.size() && "one token per prompt token");
  if (job.kind == JobKind::NextToken) {
    JobResult result;
    result.status = 200;
    result.generated = {all.back()};
    result.argmax = all;
    if (job.wantLogits && lastLogits)
      result.logits.assign(lastLogits, lastLogits + vocab_);
    firstTokenSeconds.push_back(
        std::chrono::duration<double>(Clock::now() - job.created).count());
    job.finish(std::move(result));
    entries_[slot].reset();
    return 1;
  }
  entry.prefilled = true;
  entry.position = static_cast<int64_t>(job.prompt.size());
  append(slot, all.back(), lastLogits);
  return 1;
}

std::vector<tooling::Generator::Row> SlotScheduler::decodeRows() const {
  std::vector<tooling::Generator::Row> rows;
  for (int64_t slot = 0; slot < slots_; ++slot)
    if (entries_[slot] && entries_[slot]->prefilled)
      rows.push_back({slot, entries_[slot]->last, entries_[slot]->position});
  return rows;
}

size_t SlotScheduler::decoded(const std::vector<tooling::Generator::Row> &rows,
                              const std::vector<int64_t> &next,
                              const std::vector<float> &logits) {
  assert(rows.size() == next.size() && "one token per row");
  assert((logits.empty() ||
          logits.size() == rows.size() * static_cast<size_t>(vocab_)) &&
         "V logits per row");
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t slot = rows[i].slot;
    if (!entries_[slot])
      continue;
    ++entries_[slot]->position;
    append(slot, next[i],
           logits.empty() ? nullptr : logits.data() + i * vocab_);
  }
  return rows.size();
}

size_t SlotScheduler::dropCancelled() {
  size_t dropped = 0;
  for (int64_t slot = 0; slot < slots_; ++slot) {
    if (!entries_[slot] || !entries_[slot]->job->cancelled())
      continue;
    finish(slot, "cancelled");
    ++dropped;
  }
  return dropped;
}

void SlotScheduler::failAll(int status, const std::string &message) {
  for (std::optional<Entry> &entry : entries_) {
    if (!entry)
      continue;
    JobResult result;
    result.status = status;
    result.error = message;
    entry->job->finish(std::move(result));
    entry.reset();
  }
}

} // namespace dtensor::server
