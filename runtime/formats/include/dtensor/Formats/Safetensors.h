//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON header
//
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"key": "value", ...}}
//
// (offsets relative to the first byte after the header), then the tensor
// data, row-major and little-endian. The reader validates the whole header
// at open and then reads any box of a tensor with pread, touching only the
// bytes of that box, so each rank reads just its shard of the weights.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_SAFETENSORS_H
#define DTENSOR_FORMATS_SAFETENSORS_H

#include "dtensor/Formats/DType.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dtensor::rt {

/// Largest JSON header accepted (100 MB), against corrupt length fields.
inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100ull * 1000 * 1000;

/// One tensor of a safetensors file; begin/end are absolute file offsets of
/// its data.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// Which version of a file was opened: its size and modification time
/// (fstat at open) and a hash of its header (FNV-1a, 64 bits). Ranks that
/// opened the same version agree on all three.
struct FileVersion {
  uint64_t size = 0;
  int64_t modifiedNs = 0;
  uint64_t headerHash = 0;
};

/// An open safetensors file. Movable, not copyable; closes on destruction.
class SafetensorsFile {
public:
  SafetensorsFile() = default;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;
  SafetensorsFile(SafetensorsFile &&other) noexcept;
  SafetensorsFile &operator=(SafetensorsFile &&other) noexcept;
  ~SafetensorsFile();

  /// Opens and validates the header (does not read tensor data). "" or the
  /// error.
  std::string open(const std::string &path);

  /// The entry called `name`, or nullptr.
  const SafetensorsEntry *find(std::string_view name) const;

  /// All entries, in the order of their data in the file.
  const std::vector<SafetensorsEntry> &entries() const { return entryList; }

  /// The "__metadata__" string map (empty when absent).
  const std::map<std::string, std::string> &metadata() const {
    return metadataMap;
  }

  /// The path given to open().
  const std::string &path() const { return filePath; }

  /// The version open() found.
  const FileVersion &version() const { return openedVersion; }

  /// "" when the open file still has the size and modification time it had
  /// at open(), else what changed: data read since may mix two versions (a
  /// file rewritten in place, or truncated, while it was read).
  std::string checkUnchanged() const;

  /// Reads the block [offset, offset+shape) of `entry` into contiguous
  /// row-major `dst`, with pread, touching only the bytes of the block
  /// (contiguous runs coalesced). "" or the error (bad box, I/O, short read).
  std::string readBox(const SafetensorsEntry &entry,
                      const std::vector<int64_t> &offset,
                      const std::vector<int64_t> &shape, void *dst) const;

private:
  void close();

  int fd = -1;
  std::string filePath;
  std::vector<SafetensorsEntry> entryList;
  std::map<std::string, std::string> metadataMap;
  FileVersion openedVersion;
};

/// A tensor to write: `data` holds the row-major elements of `shape`.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// Writes a safetensors file (tensors in the given order, the header padded
/// with spaces to a multiple of 8 bytes as the format allows). "" or the
/// error. Writes a temporary file and renames it into place.
std::string writeSafetensors(const std::string &path,
                             const std::vector<SafetensorsTensor> &tensors);

/// As above, with a "__metadata__" string map in the header (omitted when
/// empty).
std::string
writeSafetensors(const std::string &path,
                 const std::vector<SafetensorsTensor> &tensors,
                 const std::map<std::string, std::string> &metadata);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_SAFETENSORS_H
