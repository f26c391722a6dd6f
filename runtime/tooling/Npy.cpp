//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The format: the magic "\x93NUMPY", a major and a minor version byte, the
// header length (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and
// 3.0), then the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and a newline, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Npy.h"

#include "dtensor/Tooling/ElementTypes.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is written and read little-endian, as is");

namespace dtensor::tooling {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// The descrs this reader and writer support, per dtype (bf16 has none).
const char *descrOf(dtensor_dtype dtype) {
  switch (dtype) {
  case DTENSOR_F32:
    return "<f4";
  case DTENSOR_F64:
    return "<f8";
  case DTENSOR_F16:
    return "<f2";
  case DTENSOR_I32:
    return "<i4";
  case DTENSOR_I64:
    return "<i8";
  case DTENSOR_I8:
    return "|i1";
  case DTENSOR_BOOL:
    return "|b1";
  case DTENSOR_BF16:
    return nullptr;
  }
  return nullptr;
}

std::optional<dtensor_dtype> dtypeOfDescr(const std::string &descr) {
  for (dtensor_dtype dtype : {DTENSOR_F32, DTENSOR_F64, DTENSOR_F16,
                              DTENSOR_I32, DTENSOR_I64, DTENSOR_I8,
                              DTENSOR_BOOL})
    if (descr == descrOf(dtype))
      return dtype;
  return std::nullopt;
}

/// The elements of `shape`; -1 for a negative dim or a count that
/// overflows int64.
int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return -1;
    count *= dim;
  }
  return count;
}

/// Writes `head` then `size` bytes of `data` to `path.tmp.<pid>` and renames
/// it over `path` once complete; the temporary is removed on any failure.
/// "" or the error (naming the file and the system's reason).
std::string writeThroughTemporary(const std::string &path,
                                  const std::string &head, const void *data,
                                  uint64_t size) {
  const std::string temporary =
      path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return "cannot create " + temporary + ": " + std::strerror(errno);
  bool written = std::fwrite(head.data(), 1, head.size(), file) ==
                     head.size() &&
                 (size == 0 || std::fwrite(data, 1, size, file) == size);
  int savedErrno = written ? 0 : errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    savedErrno = errno;
  }
  if (!written) {
    std::remove(temporary.c_str());
    return "cannot write " + temporary + ": " +
           (savedErrno ? std::strerror(savedErrno) : "write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    std::remove(temporary.c_str());
    return "cannot rename " + temporary + " to " + path + ": " +
           std::strerror(savedErrno);
  }
  return "";
}

/// The fields of an .npy header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the Python dict literal of an .npy header: string keys and the
/// values NumPy writes (a string, True/False, a tuple of integers).
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  /// "" or what is wrong with the header.
  std::string parse(NpyHeader &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return "expected '{' at the start of the header dict";
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return "expected a quoted key " + where();
      if (!consume(':'))
        return "expected ':' after '" + key + "' " + where();
      if (key == "descr") {
        if (!parseString(header.descr))
          return "'descr': expected a quoted type string such as '<f4' "
                 "(structured dtypes are not supported) " +
                 where();
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (consumeWord("False"))
          header.fortranOrder = false;
        else
          return "'fortran_order': expected True or False " + where();
        seenOrder = true;
      } else if (key == "shape") {
        if (std::string error = parseShape(header.shape); !error.empty())
          return "'shape': " + error;
        seenShape = true;
      } else {
        return "unexpected key '" + key + "'";
      }
      if (!consume(',')) {
        if (!consume('}'))
          return "expected ',' or '}' " + where();
        break;
      }
    }
    skipSpace();
    if (pos != text.size())
      return "unexpected text after the header dict " + where();
    if (!seenDescr)
      return "missing key 'descr'";
    if (!seenOrder)
      return "missing key 'fortran_order'";
    if (!seenShape)
      return "missing key 'shape'";
    return "";
  }

private:
  std::string where() const {
    return "at header offset " + std::to_string(pos);
  }

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool consumeWord(const char *word) {
    skipSpace();
    size_t length = std::strlen(word);
    if (text.compare(pos, length, word) != 0)
      return false;
    size_t after = pos + length;
    if (after < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[after])) ||
         text[after] == '_'))
      return false;
    pos = after;
    return true;
  }

  bool parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos];
    size_t close = text.find(quote, pos + 1);
    if (close == std::string::npos)
      return false;
    out = text.substr(pos + 1, close - pos - 1);
    if (out.find('\\') != std::string::npos)
      return false;
    pos = close + 1;
    return true;
  }

  std::string parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return "expected a tuple " + where();
    while (!consume(')')) {
      skipSpace();
      size_t start = pos;
      int64_t dim = 0;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos]))) {
        int digit = text[pos] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return "dim too large " + where();
        dim = dim * 10 + digit;
        ++pos;
      }
      // Python 2 wrote dims such as 3L.
      if (pos > start && pos < text.size() && text[pos] == 'L')
        ++pos;
      if (pos == start)
        return "expected a non-negative integer dim " + where();
      shape.push_back(dim);
      if (!consume(',')) {
        if (!consume(')'))
          return "expected ',' or ')' " + where();
        break;
      }
    }
    return "";
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

std::string readNpyLayout(const std::string &path, NpyLayout &layout) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> closer(file, &std::fclose);
  struct stat info;
  if (::fstat(::fileno(file), &info) != 0)
    return "cannot stat " + path + ": " + std::strerror(errno);
  const uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  // Reads `size` bytes at the current position; false on a short read.
  auto readBytes = [&](void *dst, uint64_t size) {
    return size == 0 || std::fread(dst, 1, size, file) == size;
  };
  auto readError = [&]() {
    return "cannot read " + path + ": " +
           (std::ferror(file) ? std::strerror(errno)
                              : "unexpected end of file");
  };

  char start[kMagicSize + 2 + 4];
  if (fileSize < kMagicSize + 2)
    return path + ": not an .npy file (missing the \\x93NUMPY magic)";
  if (!readBytes(start, kMagicSize + 2))
    return readError();
  if (std::memcmp(start, kMagic, kMagicSize) != 0)
    return path + ": not an .npy file (missing the \\x93NUMPY magic)";
  int major = static_cast<uint8_t>(start[kMagicSize]);
  int minor = static_cast<uint8_t>(start[kMagicSize + 1]);
  size_t lengthSize;
  if (major == 1 && minor == 0)
    lengthSize = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthSize = 4;
  else
    return path + ": unsupported .npy format version " + std::to_string(major) +
           "." + std::to_string(minor) + " (this reader reads 1.0, 2.0, 3.0)";
  const uint64_t prefix = kMagicSize + 2 + lengthSize;
  if (fileSize < prefix)
    return path + ": the file ends inside the header length";
  if (!readBytes(start + kMagicSize + 2, lengthSize))
    return readError();
  uint64_t headerSize = 0;
  for (size_t i = lengthSize; i-- > 0;)
    headerSize =
        (headerSize << 8) | static_cast<uint8_t>(start[kMagicSize + 2 + i]);
  if (headerSize > fileSize - prefix)
    return path + ": header length " + std::to_string(headerSize) +
           " runs past the end of the " + std::to_string(fileSize) +
           "-byte file";

  std::string headerText(headerSize, '\0');
  if (!readBytes(headerText.data(), headerSize))
    return readError();
  NpyHeader header;
  if (std::string error = HeaderParser(headerText).parse(header);
      !error.empty())
    return path + ": bad header: " + error;
  if (header.fortranOrder)
    return path + ": fortran_order True is not supported (save a C-ordered "
                  "array, e.g. numpy.ascontiguousarray)";
  layout.descr = std::move(header.descr);
  layout.shape = std::move(header.shape);
  layout.dataOffset = prefix + headerSize;
  layout.fileSize = fileSize;
  return "";
}

std::string checkNpyDataSize(const std::string &path, const NpyLayout &layout,
                             uint64_t elementBytes, uint64_t &dataBytes) {
  int64_t elements = numElements(layout.shape);
  if (elements < 0 ||
      uint64_t(elements) > std::numeric_limits<uint64_t>::max() / elementBytes)
    return path + ": the size of the shape overflows 64 bits";
  dataBytes = uint64_t(elements) * elementBytes;
  uint64_t available = layout.fileSize - layout.dataOffset;
  if (available < dataBytes)
    return path + ": the data is " + std::to_string(available) +
           " bytes, but the shape and dtype need " + std::to_string(dataBytes) +
           " (the file is truncated)";
  if (available > dataBytes)
    return path + ": " + std::to_string(available - dataBytes) +
           " trailing bytes after the data";
  return "";
}

std::string readNpy(const std::string &path, NpyArray &array) {
  NpyLayout layout;
  if (std::string error = readNpyLayout(path, layout); !error.empty())
    return error;
  std::optional<dtensor_dtype> dtype = dtypeOfDescr(layout.descr);
  if (!dtype)
    return path + ": unsupported descr '" + layout.descr +
           "' (supported: '<f4', '<f8', '<f2', '<i4', '<i8', '|i1', '|b1')";
  uint64_t dataSize = 0;
  if (std::string error =
          checkNpyDataSize(path, layout, dtypeSize(*dtype), dataSize);
      !error.empty())
    return error;

  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> closer(file, &std::fclose);
  std::vector<uint8_t> data(dataSize);
  if (std::fseek(file, static_cast<long>(layout.dataOffset), SEEK_SET) != 0 ||
      (dataSize != 0 && std::fread(data.data(), 1, dataSize, file) != dataSize))
    return "cannot read " + path + ": " +
           (std::ferror(file) ? std::strerror(errno)
                              : "unexpected end of file");
  array.dtype = *dtype;
  array.shape = std::move(layout.shape);
  array.data = std::move(data);
  return "";
}

std::string writeNpy(const std::string &path, dtensor_dtype dtype,
                     const std::vector<int64_t> &shape, const void *data) {
  if (dtype == DTENSOR_BF16)
    return path + ": bf16 cannot be stored in an .npy file (NumPy has no "
                  "bfloat16); convert the tensor to f32";
  const char *descr = descrOf(dtype);
  if (!descr)
    return path + ": unknown dtype " + std::to_string(dtype);
  int64_t elements = numElements(shape);
  if (elements < 0 || elements > std::numeric_limits<int64_t>::max() /
                                     static_cast<int64_t>(dtypeSize(dtype)))
    return path + ": the shape has a negative dim or its size overflows";
  uint64_t dataSize = uint64_t(elements) * dtypeSize(dtype);
  if (dataSize > 0 && !data)
    return path + ": no data";

  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < shape.size(); ++d) {
    header += std::to_string(shape[d]);
    if (d + 1 < shape.size() || shape.size() == 1)
      header += shape.size() == 1 ? "," : ", ";
  }
  header += "), }";
  // Pad with spaces and a final newline so that the data is 64-byte aligned.
  size_t prefix = kMagicSize + 2 + 2;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff)
    return path + ": the header is too long for .npy version 1.0";

  std::string start(kMagic, kMagicSize);
  start.push_back(1);
  start.push_back(0);
  start.push_back(static_cast<char>(header.size() & 0xff));
  start.push_back(static_cast<char>(header.size() >> 8));
  start += header;
  return writeThroughTemporary(path, start, data, dataSize);
}

} // namespace dtensor::tooling
