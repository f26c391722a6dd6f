//===- Safetensors.cpp - Reading and writing safetensors files ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Safetensors.h"

#include "AtomicFile.h"
#include "JsonText.h"
#include "dtensor/Formats/Box.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using json = nlohmann::json;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian and copied as is");

namespace dtensor::rt {

namespace {

constexpr const char *kMetadataKey = "__metadata__";


/// Reads exactly `size` bytes at `offset`. "" or the error.
std::string preadFully(int fd, void *dst, uint64_t size, uint64_t offset,
                       const std::string &path) {
  char *out = static_cast<char *>(dst);
  while (size > 0) {
    size_t chunk =
        static_cast<size_t>(std::min<uint64_t>(size, uint64_t(1) << 30));
    ssize_t got = ::pread(fd, out, chunk, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return path + ": read failed at offset " + std::to_string(offset) + ": " +
             std::strerror(errno);
    }
    if (got == 0)
      return path + ": unexpected end of file at offset " +
             std::to_string(offset) + " (the file was truncated)";
    out += got;
    size -= static_cast<uint64_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return "";
}

/// A non-negative JSON integer, or std::nullopt.
std::optional<uint64_t> nonNegative(const json &value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0)
    return static_cast<uint64_t>(value.get<int64_t>());
  return std::nullopt;
}

/// Byte size of a tensor, or std::nullopt on overflow of int64_t.
std::optional<uint64_t> byteSize(DType dtype,
                                 const std::vector<int64_t> &shape) {
  int64_t elements = numElements(shape);
  int64_t elemSize = static_cast<int64_t>(dtypeSize(dtype));
  if (elements < 0 || elements > std::numeric_limits<int64_t>::max() / elemSize)
    return std::nullopt;
  return static_cast<uint64_t>(elements * elemSize);
}

/// Decodes one tensor entry of the header. "" or the error.
std::string decodeEntry(const std::string &path, const std::string &name,
                        const json &value, uint64_t dataStart,
                        uint64_t fileSize, SafetensorsEntry &entry) {
  std::string where = path + ": tensor \"" + name + "\": ";
  if (!value.is_object())
    return where + "expected an object, got " + describeJson(value);
  entry.name = name;

  auto dtypeIt = value.find("dtype");
  if (dtypeIt == value.end())
    return where + "missing \"dtype\"";
  if (!dtypeIt->is_string())
    return where + "dtype: expected a string, got " + describeJson(*dtypeIt);
  std::optional<DType> dtype =
      parseSafetensorsDType(dtypeIt->get<std::string>());
  if (!dtype)
    return where + "unsupported dtype " + describeJson(*dtypeIt) +
           " (expected F32, F64, F16, BF16, I32, I64, I8 or BOOL)";
  entry.dtype = *dtype;

  auto shapeIt = value.find("shape");
  if (shapeIt == value.end())
    return where + "missing \"shape\"";
  if (!shapeIt->is_array())
    return where + "shape: expected an array, got " + describeJson(*shapeIt);
  entry.shape.clear();
  for (size_t d = 0; d < shapeIt->size(); ++d) {
    std::optional<uint64_t> dim = nonNegative((*shapeIt)[d]);
    if (!dim || *dim > uint64_t(std::numeric_limits<int64_t>::max()))
      return where + "shape[" + std::to_string(d) +
             "]: expected a non-negative integer, got " +
             describeJson((*shapeIt)[d]);
    entry.shape.push_back(static_cast<int64_t>(*dim));
  }
  std::optional<uint64_t> bytes = byteSize(entry.dtype, entry.shape);
  if (!bytes)
    return where + "the size of shape " + describeJson(*shapeIt) +
           " overflows 64 bits";

  auto offsetsIt = value.find("data_offsets");
  if (offsetsIt == value.end())
    return where + "missing \"data_offsets\"";
  std::optional<uint64_t> begin, end;
  if (offsetsIt->is_array() && offsetsIt->size() == 2) {
    begin = nonNegative((*offsetsIt)[0]);
    end = nonNegative((*offsetsIt)[1]);
  }
  if (!begin || !end || *begin > *end)
    return where +
           "data_offsets: expected [begin, end] with 0 <= begin <= "
           "end, got " +
           describeJson(*offsetsIt);
  if (*end - *begin != *bytes)
    return where + "data_offsets span " + std::to_string(*end - *begin) +
           " bytes, but " + dtypeName(entry.dtype) + " " + describeJson(*shapeIt) +
           " takes " + std::to_string(*bytes);
  if (*end > fileSize - dataStart)
    return where + "data_offsets " + describeJson(*offsetsIt) +
           " run past the end of the file (" +
           std::to_string(fileSize - dataStart) +
           " data bytes; the file is truncated?)";
  entry.begin = dataStart + *begin;
  entry.end = dataStart + *end;
  return "";
}

} // namespace

SafetensorsFile::SafetensorsFile(SafetensorsFile &&other) noexcept {
  *this = std::move(other);
}

SafetensorsFile &SafetensorsFile::operator=(SafetensorsFile &&other) noexcept {
  if (this != &other) {
    close();
    fd = other.fd;
    filePath = std::move(other.filePath);
    entryList = std::move(other.entryList);
    metadataMap = std::move(other.metadataMap);
    openedVersion = other.openedVersion;
    other.fd = -1;
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() { close(); }

void SafetensorsFile::close() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  entryList.clear();
  metadataMap.clear();
}

std::string SafetensorsFile::open(const std::string &path) {
  close();
  filePath = path;
  int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file < 0)
    return "cannot open " + path + ": " + std::strerror(errno);
  // Owns `file` until it is adopted below.
  struct Closer {
    int &fd;
    ~Closer() {
      if (fd >= 0)
        ::close(fd);
    }
  } closer{file};

  struct stat info;
  if (::fstat(file, &info) != 0)
    return "cannot stat " + path + ": " + std::strerror(errno);
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  if (fileSize < 8)
    return path + ": the file is " + std::to_string(fileSize) +
           " bytes, too short for the 8-byte header length";
  uint8_t lengthBytes[8];
  if (std::string error = preadFully(file, lengthBytes, 8, 0, path);
      !error.empty())
    return error;
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | lengthBytes[i];
  if (headerSize > kSafetensorsMaxHeaderSize)
    return path + ": header length " + std::to_string(headerSize) +
           " exceeds the limit of " +
           std::to_string(kSafetensorsMaxHeaderSize) +
           " bytes (not a safetensors file?)";
  if (headerSize > fileSize - 8)
    return path + ": header length " + std::to_string(headerSize) +
           " runs past the end of the " + std::to_string(fileSize) +
           "-byte file";
  std::string headerText(headerSize, '\0');
  if (std::string error =
          preadFully(file, headerText.data(), headerSize, 8, path);
      !error.empty())
    return error;

  json header = json::parse(headerText, /*cb=*/nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded())
    return path + ": the header is not valid JSON";
  if (!header.is_object())
    return path + ": the header is not a JSON object, got " + describeJson(header);

  std::vector<SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
  const uint64_t dataStart = 8 + headerSize;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == kMetadataKey) {
        if (!it->is_object())
          return path + ": __metadata__: expected an object, got " +
                 describeJson(*it);
        for (auto meta = it->begin(); meta != it->end(); ++meta) {
          if (!meta->is_string())
            return path + ": __metadata__." + meta.key() +
                   ": expected a string, got " + describeJson(*meta);
          metadata[meta.key()] = meta->get<std::string>();
        }
        continue;
      }
      SafetensorsEntry entry;
      if (std::string error =
              decodeEntry(path, it.key(), *it, dataStart, fileSize, entry);
          !error.empty())
        return error;
      entries.push_back(std::move(entry));
    }
  } catch (const json::exception &e) {
    return path + ": cannot decode the header (" + e.what() + ")";
  }

  std::stable_sort(entries.begin(), entries.end(),
                   [](const SafetensorsEntry &a, const SafetensorsEntry &b) {
                     return a.begin < b.begin ||
                            (a.begin == b.begin && a.end < b.end);
                   });
  // Empty tensors hold no bytes and overlap nothing.
  const SafetensorsEntry *previous = nullptr;
  for (const SafetensorsEntry &entry : entries) {
    if (entry.begin == entry.end)
      continue;
    if (previous && previous->end > entry.begin)
      return path + ": the data of tensors \"" + previous->name + "\" and \"" +
             entry.name + "\" overlap";
    previous = &entry;
  }

  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : headerText)
    hash = (hash ^ byte) * 1099511628211ull;
  openedVersion = {fileSize,
                   static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 +
                       info.st_mtim.tv_nsec,
                   hash};
  fd = file;
  file = -1;
  entryList = std::move(entries);
  metadataMap = std::move(metadata);
  return "";
}

std::string SafetensorsFile::checkUnchanged() const {
  if (fd < 0)
    return filePath + ": the file is not open";
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return "cannot stat " + filePath + ": " + std::strerror(errno);
  uint64_t size = static_cast<uint64_t>(info.st_size);
  int64_t modified =
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 +
      info.st_mtim.tv_nsec;
  if (size != openedVersion.size)
    return filePath + ": the file changed while it was read (" +
           std::to_string(openedVersion.size) + " bytes at open, " +
           std::to_string(size) + " now)";
  if (modified != openedVersion.modifiedNs)
    return filePath + ": the file changed while it was read (modified after "
                      "it was opened)";
  return "";
}

const SafetensorsEntry *SafetensorsFile::find(std::string_view name) const {
  for (const SafetensorsEntry &entry : entryList)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

std::string SafetensorsFile::readBox(const SafetensorsEntry &entry,
                                     const std::vector<int64_t> &offset,
                                     const std::vector<int64_t> &shape,
                                     void *dst) const {
  std::string where = filePath + ": tensor \"" + entry.name + "\": ";
  if (fd < 0)
    return where + "the file is not open";
  const size_t rank = entry.shape.size();
  if (offset.size() != rank || shape.size() != rank)
    return where + "the box has rank " + std::to_string(offset.size()) + "/" +
           std::to_string(shape.size()) + ", the tensor rank " +
           std::to_string(rank);
  for (size_t d = 0; d < rank; ++d)
    if (offset[d] < 0 || shape[d] < 0 || offset[d] > entry.shape[d] ||
        shape[d] > entry.shape[d] - offset[d])
      return where + "the box [" + std::to_string(offset[d]) + ", " +
             std::to_string(offset[d]) + " + " + std::to_string(shape[d]) +
             ") of dim " + std::to_string(d) + " is outside [0, " +
             std::to_string(entry.shape[d]) + ")";

  const uint64_t elemSize = dtypeSize(entry.dtype);
  char *out = static_cast<char *>(dst);
  std::string error;
  forEachBoxRun(entry.shape, offset, shape,
                [&](int64_t globalElem, int64_t localElem, int64_t elems) {
                  error = preadFully(
                      fd, out + localElem * elemSize, elems * elemSize,
                      entry.begin + globalElem * elemSize, filePath);
                  return error.empty();
                });
  if (!error.empty())
    return error + " (reading tensor \"" + entry.name + "\")";
  return "";
}

std::string writeSafetensors(const std::string &path,
                             const std::vector<SafetensorsTensor> &tensors) {
  return writeSafetensors(path, tensors, {});
}

std::string
writeSafetensors(const std::string &path,
                 const std::vector<SafetensorsTensor> &tensors,
                 const std::map<std::string, std::string> &metadata) {
  std::string headerText;
  std::vector<uint64_t> sizes;
  try {
    json header = json::object();
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const SafetensorsTensor &tensor : tensors) {
      std::string where = path + ": tensor \"" + tensor.name + "\": ";
      if (tensor.name.empty() || tensor.name == kMetadataKey)
        return path + ": invalid tensor name \"" + tensor.name + "\"";
      if (!names.insert(tensor.name).second)
        return where + "the name appears twice";
      std::optional<uint64_t> bytes = byteSize(tensor.dtype, tensor.shape);
      if (!bytes)
        return where + "the shape has a negative dim or its size overflows";
      if (*bytes > 0 && !tensor.data)
        return where + "no data";
      header[tensor.name] = {{"dtype", safetensorsDTypeName(tensor.dtype)},
                             {"shape", tensor.shape},
                             {"data_offsets", {offset, offset + *bytes}}};
      sizes.push_back(*bytes);
      offset += *bytes;
    }
    if (!metadata.empty())
      header[kMetadataKey] = metadata;
    headerText = header.dump();
  } catch (const json::exception &e) {
    return path + ": cannot serialize the header (" + e.what() + ")";
  }
  // Pad with spaces so that the data starts 8-byte aligned.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  uint8_t lengthBytes[8];
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] =
        static_cast<uint8_t>(uint64_t(headerText.size()) >> (8 * i));

  return writeFileAtomically(path, [&](const WriteBytesFn &write) {
    if (!write(lengthBytes, 8) || !write(headerText.data(), headerText.size()))
      return false;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!write(tensors[i].data, sizes[i]))
        return false;
    return true;
  });
}

} // namespace dtensor::rt
