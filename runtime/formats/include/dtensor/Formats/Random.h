//===- Random.h - Factories for sharded tensors -----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fills a box of a global tensor with constants or pseudo-random values such
// that each element depends only on (seed, its global row-major linear
// index). Every rank can thus fill its own shard, under any sharding, and
// the shards assemble to the same global tensor as one device would make.
//
// Generator: counter-based, SplitMix64 (Steele, Lea and Flood, 2014) used as
// a random-access stream. With mix the SplitMix64 output finaliser and
// gamma = 0x9e3779b97f4a7c15, the key of seed s is k = mix(s ^ gamma), and
// element i draws the two 64-bit words
//   w_j = mix(k + (2*i + j + 1) * gamma),  j = 0, 1
// (the outputs 2i+1 and 2i+2 of the SplitMix64 stream started at k).
// Rand: uniform in [0, 1) from the top bits of w_0, as many as the type's
// significand holds exactly: 24 (f32), 53 (f64), 11 (f16), 8 (bf16).
// Randn: Box-Muller over two 53-bit uniforms of the same element,
// sqrt(-2 ln(1 - u_0)) * cos(2 pi u_1), computed in double (1 - u_0 is
// exact) and rounded to the dtype (to nearest even, through f32 for f16 and
// bf16).
//
// The compiled random ops of a model plan (compiler/lib/Frontend/Ops/
// RandomOps.cpp) emit this same arithmetic from the primitives below, so a
// compiled `rand` of seed s equals fillBox(Rand, s) bit for bit: the seed
// of a step is stepSeed(run seed, step) and each op draws from
// streamSeed(step seed, nameHash(its output's name)).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_RANDOM_H
#define DTENSOR_FORMATS_RANDOM_H

#include "dtensor/Formats/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtensor::rt {

/// The counter-based generator's primitives (see the file comment).
namespace counter_rng {
/// SplitMix64's increment, and the multipliers and shifts of its finaliser.
constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMix1 = 0xbf58476d1ce4e5b9ull;
constexpr uint64_t kMix2 = 0x94d049bb133111ebull;
constexpr unsigned kShift0 = 30, kShift1 = 27, kShift2 = 31;
/// Mixed into a run's seed before its steps are counted, so that step
/// seeds are not the seeds weights draw from.
constexpr uint64_t kStepDomain = 0x5354455053454544ull; // "STEPSEED"

/// SplitMix64's output finaliser.
constexpr uint64_t mix(uint64_t z) {
  z = (z ^ (z >> kShift0)) * kMix1;
  z = (z ^ (z >> kShift1)) * kMix2;
  return z ^ (z >> kShift2);
}
/// The key of the stream of seed `seed`.
constexpr uint64_t streamKey(uint64_t seed) { return mix(seed ^ kGamma); }
/// Word `j` (0 or 1) of element `index` (global, row-major) under `key`.
constexpr uint64_t elementWord(uint64_t key, uint64_t index, uint64_t j) {
  return mix(key + (2 * index + j + 1) * kGamma);
}
/// FNV-1a of a name.
constexpr uint64_t nameHash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name)
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}
/// The seed of the sub-stream `hash` (a nameHash) of `seed`: weights'
/// initializers (initializerSeed) and the random ops of a step.
constexpr uint64_t streamSeed(uint64_t seed, uint64_t hash) {
  return mix(seed + hash * kGamma);
}
/// The seed of step `step` (counted from 0) of a run seeded `seed`.
constexpr uint64_t stepSeed(uint64_t seed, uint64_t step) {
  return mix(mix(seed ^ kStepDomain) + (step + 1) * kGamma);
}
} // namespace counter_rng

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

/// fillBox for Rand and Randn with each sample x made shift + scale * x,
/// computed in double and then rounded to the dtype: normal(mean, std) is
/// Randn with (std, mean), uniform [low, high) Rand with (high - low, low).
/// The same seed gives the same underlying x as fillBox. "" or the error.
std::string fillBoxAffine(Factory factory, double scale, double shift,
                          uint64_t seed, DType dtype,
                          const std::vector<int64_t> &globalShape,
                          const std::vector<int64_t> &offset,
                          const std::vector<int64_t> &shape, void *dst);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_RANDOM_H
