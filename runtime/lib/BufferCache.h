//===- BufferCache.h - Temporary buffers kept across steps ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A compiled step allocates and frees the same buffer sizes every time it
// runs. Fresh memory from the system costs a page fault per page on first
// touch (a fifth of a transformer block's step time on the development
// machine), so a program keeps the buffers its steps free and hands them out
// again for requests of the same size.
//
// Every block starts with a header naming its cache (none for blocks
// allocated outside a step), so a free needs nothing but the pointer.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BUFFERCACHE_H
#define DTENSOR_RUNTIME_BUFFERCACHE_H

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace dtensor::rt {

class BufferCache {
public:
  BufferCache() = default;
  BufferCache(const BufferCache &) = delete;
  BufferCache &operator=(const BufferCache &) = delete;
  /// Frees the kept buffers. Buffers still handed out must not be freed
  /// after this.
  ~BufferCache();

  /// A 64-byte aligned buffer of `bytes` bytes (contents undefined), kept
  /// by `cache` when freed, or by nobody when `cache` is null; null when
  /// out of memory.
  static void *allocate(BufferCache *cache, size_t bytes);
  /// Returns a buffer from allocate() to its cache, or to the system.
  static void free(void *buffer);

  /// Bytes kept for reuse (not handed out).
  size_t keptBytes() const { return kept; }

private:
  std::unordered_map<size_t, std::vector<void *>> available;
  size_t kept = 0;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_BUFFERCACHE_H
