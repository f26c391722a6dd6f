//===- Random.h - Factories for sharded tensors -----------------*- C++ -*-===//
//
// Fills a box of a global tensor with constants or pseudo-random values such
// that each element depends only on (seed, its global row-major linear
// index). Every rank can thus fill its own shard, under any sharding, and
// the shards assemble to the same global tensor as one device would make.
//
// Generator: counter-based, from SplitMix64's finaliser (a bijective 64-bit
// mix). Element i with seed s draws the 64-bit words
//   w_k = mix(mix(s ^ 0x9e3779b97f4a7c15) + 2*i + k),  k = 0, 1
// Rand: f32 from the top 24 bits of w_0, f64 from the top 53 bits, uniform in
// [0, 1). Randn: Box-Muller over the two uniforms of the same element,
// sqrt(-2 ln(1 - u0)) * cos(2 pi u1), computed in double. f16/bf16 values are
// computed in f32 and rounded to nearest even.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RT_FORMATS_RANDOM_H
#define DTENSOR_RT_FORMATS_RANDOM_H

#include "DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtensor::rt {

/// The tensor factories.
enum class Factory { Zeros, Ones, Full, Rand, Randn };

/// "zeros", "ones", "full", "rand" or "randn".
const char *factoryName(Factory factory);

/// Inverse of factoryName; std::nullopt for any other spelling.
std::optional<Factory> parseFactory(std::string_view name);

/// Fills the block [offset, offset+shape) of a global tensor of
/// `globalShape` into contiguous `dst`. Element values depend only on (seed,
/// the element's global row-major linear index), never on the block, so any
/// sharding gives the same global tensor. Full uses `value` (converted to the
/// dtype: truncated toward zero for integers, nonzero is true for bool).
/// Rand: uniform [0,1); Randn: standard normal. Integer/bool dtypes accept
/// Zeros/Ones/Full only (error otherwise). "" or the error.
std::string fillBox(Factory factory, double value, uint64_t seed, DType dtype,
                    const std::vector<int64_t> &globalShape,
                    const std::vector<int64_t> &offset,
                    const std::vector<int64_t> &shape, void *dst);

} // namespace dtensor::rt

#endif // DTENSOR_RT_FORMATS_RANDOM_H
