//===- TokenStream.cpp - Token files read as one stream -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Maps each file read-only and decodes tokens of 1, 2, 4 or 8 bytes, signed
// or not, little-endian as both formats store them.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/TokenStream.h"

#include "dtensor/Tooling/Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "token files are little-endian and read as they are");

namespace dtensor::tooling {

namespace {

/// llm.c's shard header: 256 int32, of which the first three are used.
constexpr uint64_t kLlmcHeaderBytes = 256 * 4;
constexpr int32_t kGpt2Magic = 20240520, kGpt2Version = 1;
constexpr int32_t kLlama3Magic = 20240801, kLlama3Version = 7;

/// The integer descrs of .npy and their (width, signedness).
bool integerDescr(const std::string &descr, unsigned &width, bool &isSigned) {
  static const struct {
    const char *descr;
    unsigned width;
    bool isSigned;
  } kDescrs[] = {{"|u1", 1, false}, {"|i1", 1, true},  {"<u2", 2, false},
                 {"<i2", 2, true},  {"<u4", 4, false}, {"<i4", 4, true},
                 {"<u8", 8, false}, {"<i8", 8, true}};
  for (const auto &known : kDescrs)
    if (descr == known.descr) {
      width = known.width;
      isSigned = known.isSigned;
      return true;
    }
  return false;
}

/// Maps `path` read-only into `file.mapping`; sets `size`. "" or the error.
std::string mapFile(const std::string &path, TokenFile &file, uint64_t &size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "cannot open " + path + ": " + std::strerror(errno);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int saved = errno;
    ::close(fd);
    return "cannot stat " + path + ": " + std::strerror(saved);
  }
  size = static_cast<uint64_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return "";
  }
  void *address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int saved = errno;
  ::close(fd);
  if (address == MAP_FAILED)
    return "cannot map " + path + ": " + std::strerror(saved);
  file.mapping = std::shared_ptr<const uint8_t>(
      static_cast<const uint8_t *>(address),
      [size](const uint8_t *p) { ::munmap(const_cast<uint8_t *>(p), size); });
  return "";
}

/// Reads llm.c's header of a mapped file of `size` bytes.
std::string readLlmcHeader(TokenFile &file, uint64_t size) {
  const std::string &path = file.path;
  if (size < kLlmcHeaderBytes)
    return path + ": neither an .npy file nor an llm.c token shard (" +
           std::to_string(size) + " bytes, shorter than llm.c's " +
           std::to_string(kLlmcHeaderBytes) + "-byte header)";
  int32_t header[3];
  std::memcpy(header, file.mapping.get(), sizeof(header));
  if (header[0] == kGpt2Magic && header[1] == kGpt2Version)
    file.width = 2;
  else if (header[0] == kLlama3Magic && header[1] == kLlama3Version)
    file.width = 4;
  else if (header[0] == kGpt2Magic || header[0] == kLlama3Magic)
    return path + ": llm.c token shard of unsupported version " +
           std::to_string(header[1]) + " (magic " + std::to_string(header[0]) +
           "; supported: 20240520 version 1, uint16 tokens; 20240801 "
           "version 7, uint32 tokens)";
  else
    return path + ": neither an .npy file nor an llm.c token shard (magic " +
           std::to_string(header[0]) + ", expected 20240520 or 20240801)";
  if (header[2] < 0)
    return path + ": llm.c header gives a negative token count " +
           std::to_string(header[2]);
  file.isSigned = false;
  file.offset = kLlmcHeaderBytes;
  file.tokens = static_cast<uint64_t>(header[2]);
  uint64_t need = kLlmcHeaderBytes + file.tokens * file.width;
  if (size < need)
    return path + ": the header gives " + std::to_string(file.tokens) +
           " tokens (" + std::to_string(need) +
           " bytes with the header), but "
           "the file has " +
           std::to_string(size) + " bytes (truncated)";
  if (size > need)
    return path + ": " + std::to_string(size - need) +
           " trailing bytes after the header's " + std::to_string(file.tokens) +
           " tokens";
  return "";
}

/// Token `index` of `file` as int64 (an unsigned 64-bit id above int64's
/// range wraps; checkVocabulary refuses it first).
int64_t tokenAt(const TokenFile &file, uint64_t index) {
  const uint8_t *p = file.mapping.get() + file.offset + index * file.width;
  switch (file.width) {
  case 1:
    return file.isSigned ? int64_t(int8_t(*p)) : int64_t(*p);
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return file.isSigned ? int64_t(int16_t(v)) : int64_t(v);
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return file.isSigned ? int64_t(int32_t(v)) : int64_t(v);
  }
  default: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

} // namespace

std::string TokenStream::open(const std::vector<std::string> &paths,
                              TokenStream &stream) {
  if (paths.empty())
    return "no token file given";
  TokenStream opened;
  for (const std::string &path : paths) {
    TokenFile file;
    file.path = path;
    uint64_t size = 0;
    if (std::string error = mapFile(path, file, size); !error.empty())
      return error;
    bool npy =
        size >= 6 && std::memcmp(file.mapping.get(), "\x93NUMPY", 6) == 0;
    if (npy) {
      NpyLayout layout;
      if (std::string error = readNpyLayout(path, layout); !error.empty())
        return error;
      if (!integerDescr(layout.descr, file.width, file.isSigned))
        return path + ": token ids must be integers; the array's descr is '" +
               layout.descr +
               "' (supported: '|u1', '|i1', '<u2', '<i2', "
               "'<u4', '<i4', '<u8', '<i8')";
      uint64_t bytes = 0;
      if (std::string error = checkNpyDataSize(path, layout, file.width, bytes);
          !error.empty())
        return error;
      file.offset = layout.dataOffset;
      file.tokens = bytes / file.width;
    } else if (std::string error = readLlmcHeader(file, size); !error.empty()) {
      return error;
    }
    opened.starts.push_back(opened.total);
    opened.total += file.tokens;
    opened.files.push_back(std::move(file));
  }
  stream = std::move(opened);
  return "";
}

std::string TokenStream::checkVocabulary(int64_t vocabulary) const {
  for (const TokenFile &file : files) {
    bool wide = file.width == 8 && !file.isSigned;
    for (uint64_t i = 0; i < file.tokens; ++i) {
      int64_t id = tokenAt(file, i);
      // An unsigned 64-bit id above int64's range reads as negative.
      if (id < 0 || id >= vocabulary) {
        std::string shown = wide && id < 0
                                ? std::to_string(static_cast<uint64_t>(id))
                                : std::to_string(id);
        return file.path + ": token " + std::to_string(i) + " is " + shown +
               ", outside the vocabulary [0, " + std::to_string(vocabulary) +
               ")";
      }
    }
  }
  return "";
}

void TokenStream::read(uint64_t begin, uint64_t count, int64_t *out) const {
  // The file holding `begin`: the last whose start is at or before it.
  size_t f = std::upper_bound(starts.begin(), starts.end(), begin) -
             starts.begin() - 1;
  uint64_t index = begin - starts[f];
  while (count > 0) {
    const TokenFile &file = files[f];
    uint64_t take = std::min(count, file.tokens - index);
    for (uint64_t i = 0; i < take; ++i)
      *out++ = tokenAt(file, index + i);
    count -= take;
    index = 0;
    ++f;
  }
}

} // namespace dtensor::tooling
