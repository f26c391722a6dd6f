//===- Sha256.h - SHA-256 message digest ------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Incremental SHA-256 (FIPS 180-4), used for the content hash of artifacts.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FORMATS_SHA256_H
#define DTENSOR_RUNTIME_FORMATS_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dtensor::rt {

/// SHA-256 over a message fed in pieces of any size.
class Sha256 {
public:
  Sha256();

  /// Appends `size` bytes to the message.
  void update(const void *data, size_t size);

  /// Pads the message and returns its digest. The object is reset afterwards
  /// and can hash a new message.
  std::array<uint8_t, 32> finish();

private:
  void reset();
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state;
  std::array<uint8_t, 64> buffer;
  size_t buffered = 0;
  uint64_t totalBytes = 0;
};

/// Lower-case hexadecimal rendering of a digest (64 characters).
std::string toHex(const std::array<uint8_t, 32> &digest);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FORMATS_SHA256_H
