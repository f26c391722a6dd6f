//===- CompletionText.cpp - The text of a completion as it comes ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "CompletionText.h"

#include <algorithm>

namespace dtensor::server {

std::string CompletionText::add(int64_t token) {
  if (stopped_)
    return "";
  ++tokens_;
  pending_ += stream_.push(token);
  return release(false);
}

std::string CompletionText::finish() {
  if (stopped_)
    return "";
  pending_ += stream_.finish();
  return release(true);
}

std::string CompletionText::release(bool atEnd) {
  // Every stop string that began in text already sent would have been
  // held back: the earliest one starts in pending_.
  size_t first = std::string::npos;
  for (const std::string &stop : stopStrings_)
    first = std::min(first, pending_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string text = pending_.substr(0, first);
    pending_.clear();
    return text;
  }
  // Hold back the longest end of pending_ that begins a stop string.
  size_t hold = 0;
  if (!atEnd)
    for (const std::string &stop : stopStrings_)
      for (size_t length = std::min(stop.size() - 1, pending_.size());
           length > hold; --length)
        if (pending_.compare(pending_.size() - length, length, stop, 0,
                             length) == 0) {
          hold = length;
          break;
        }
  std::string text = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return text;
}

} // namespace dtensor::server
