//===- TokenStream.h - Token files read as one stream -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The training data of a language model: token ids in files, read as one
// stream in the order given. Two formats:
// - NumPy .npy of any integer dtype ('|u1', '|i1', '<u2', '<i2', '<u4',
//   '<i4', '<u8', '<i8'), any shape, its elements in C order;
// - llm.c's token shards (.bin): a header of 256 little-endian int32 (the
//   magic, the version, the token count), then the tokens: magic 20240520
//   version 1 (GPT-2) holds uint16 tokens, magic 20240801 version 7
//   (Llama 3) uint32.
// The files are mapped, not read: a reader touches only the tokens it asks
// for, so each rank of a data-parallel run reads its own rows only.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_TOKENSTREAM_H
#define DTENSOR_TOOLING_TOKENSTREAM_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtensor::tooling {

/// One mapped token file.
struct TokenFile {
  std::string path;
  /// The mapping of the whole file (null for an empty one).
  std::shared_ptr<const uint8_t> mapping;
  /// Bytes before the first token.
  uint64_t offset = 0;
  /// Bytes per token, and whether the ids are signed.
  unsigned width = 0;
  bool isSigned = false;
  uint64_t tokens = 0;
};

class TokenStream {
public:
  /// Opens and checks `paths` (each .npy or .bin, by its content: the .npy
  /// magic, else llm.c's header) as one stream. "" or the error, naming the
  /// file: a missing file, a bad header, an unsupported dtype, a size that
  /// does not match the header's count (truncated or trailing bytes).
  static std::string open(const std::vector<std::string> &paths,
                          TokenStream &stream);

  /// The tokens of all files.
  uint64_t size() const { return total; }
  const std::vector<TokenFile> &getFiles() const { return files; }

  /// Checks that every token is in [0, vocabulary): "" or the first that is
  /// not, with its file and index there. Reads every file once.
  std::string checkVocabulary(int64_t vocabulary) const;

  /// Copies tokens [begin, begin + count) of the stream, across files, into
  /// `out` as int64. The range must lie inside the stream.
  void read(uint64_t begin, uint64_t count, int64_t *out) const;

private:
  std::vector<TokenFile> files;
  /// The stream index of each file's first token, and the total.
  std::vector<uint64_t> starts;
  uint64_t total = 0;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_TOKENSTREAM_H
