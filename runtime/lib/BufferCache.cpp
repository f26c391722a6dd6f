//===- BufferCache.cpp - Temporary buffers kept across steps --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "BufferCache.h"

#include <cstdlib>

namespace dtensor::rt {

namespace {

/// What precedes each buffer; its size keeps the buffer 64-byte aligned.
struct alignas(64) BlockHeader {
  size_t bytes;
  BufferCache *cache;
};

BlockHeader *headerOf(void *buffer) {
  return static_cast<BlockHeader *>(buffer) - 1;
}

} // namespace

BufferCache::~BufferCache() {
  for (auto &[bytes, blocks] : available)
    for (void *block : blocks)
      std::free(block);
}

void *BufferCache::allocate(BufferCache *cache, size_t bytes) {
  if (cache) {
    auto found = cache->available.find(bytes);
    if (found != cache->available.end() && !found->second.empty()) {
      void *block = found->second.back();
      found->second.pop_back();
      cache->kept -= bytes;
      return static_cast<BlockHeader *>(block) + 1;
    }
  }
  // aligned_alloc wants a multiple of the alignment.
  size_t total = sizeof(BlockHeader) + (bytes + 63) / 64 * 64;
  auto *header = static_cast<BlockHeader *>(std::aligned_alloc(64, total));
  if (!header)
    return nullptr;
  header->bytes = bytes;
  header->cache = cache;
  return header + 1;
}

void BufferCache::free(void *buffer) {
  if (!buffer)
    return;
  BlockHeader *header = headerOf(buffer);
  if (BufferCache *cache = header->cache) {
    cache->available[header->bytes].push_back(header);
    cache->kept += header->bytes;
    return;
  }
  std::free(header);
}

} // namespace dtensor::rt
