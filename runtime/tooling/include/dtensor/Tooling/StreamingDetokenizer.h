//===- StreamingDetokenizer.h - Text of a token stream ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Turns generated tokens into text as they come, never emitting half a
// UTF-8 character: a token may carry the first bytes of a character whose
// last byte is in the next token. The concatenation of what push() and
// finish() return is the decode() of all the tokens.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_STREAMINGDETOKENIZER_H
#define DTENSOR_TOOLING_STREAMINGDETOKENIZER_H

#include "dtensor/Tooling/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::tooling {

class StreamingDetokenizer {
public:
  StreamingDetokenizer(const Tokenizer &tokenizer, bool skipSpecialTokens)
      : tokenizer_(tokenizer), skipSpecialTokens_(skipSpecialTokens) {}

  /// The text that `id` completes ("" while a character is unfinished).
  std::string push(int64_t id);

  /// What is still held back (an unfinished character, as U+FFFD), at the
  /// end of the stream.
  std::string finish();

private:
  const Tokenizer &tokenizer_;
  bool skipSpecialTokens_;
  std::vector<int64_t> ids_;
  /// Text is decoded from ids_[prefix_:]: decoding a window, not every id
  /// so far, keeps each push cheap, and starting it at tokens already
  /// emitted keeps what depends on the previous token (SentencePiece drops
  /// the leading space of the first piece only) as in a full decode.
  size_t prefix_ = 0;
  /// ids_[prefix_:read_] are emitted.
  size_t read_ = 0;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_STREAMINGDETOKENIZER_H
