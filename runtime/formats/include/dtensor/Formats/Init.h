//===- Init.h - Weight initializers -----------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The initializer a weight may carry in the manifest ("init"): the values it
// takes when no weights file provides it. The kinds follow torch.nn.init:
//
//   zeros, ones               0, 1
//   constant(value)           value
//   normal(mean, std)         mean + std * randn, std >= 0
//   uniform(low, high)        low + (high - low) * rand, low <= high
//
// Like the factories of Random.h, values depend only on a seed and each
// element's global index. Each weight draws from its own stream: the seed
// of weight `name` under the run's seed s is initializerSeed(s, name), so
// weights with equal initializers still differ, and the same name gets the
// same values whatever the sharding, world size or argument order.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_INIT_H
#define DTENSOR_FORMATS_INIT_H

#include "dtensor/Formats/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtensor::rt {

enum class InitKind { Zeros, Ones, Constant, Normal, Uniform };

/// "zeros", "ones", "constant", "normal" or "uniform".
const char *initKindName(InitKind kind);

/// Inverse of initKindName; std::nullopt for any other spelling.
std::optional<InitKind> parseInitKind(std::string_view name);

/// The names of a kind's parameters, in order: none, "value", "mean" and
/// "std", or "low" and "high".
std::vector<const char *> initParameterNames(InitKind kind);

struct Initializer {
  InitKind kind = InitKind::Zeros;
  /// The parameters named by initParameterNames; unused ones are 0.
  double params[2] = {0.0, 0.0};

  bool operator==(const Initializer &other) const {
    return kind == other.kind && params[0] == other.params[0] &&
           params[1] == other.params[1];
  }
};

/// Checks `init` for a tensor of `dtype`: finite parameters, std >= 0,
/// low <= high, and for integer and bool dtypes zeros, ones or an integral
/// constant that fits. "" or the error (naming the parameter).
std::string validateInitializer(const Initializer &init, DType dtype);

/// The seed weight `name` draws from under the run's `seed`.
uint64_t initializerSeed(uint64_t seed, std::string_view name);

/// Fills the block [offset, offset+shape) of a global tensor of
/// `globalShape` with `init`'s values into contiguous `dst`, drawing from
/// `seed` (already the weight's, see initializerSeed). "" or the error.
std::string fillInitializer(const Initializer &init, uint64_t seed, DType dtype,
                            const std::vector<int64_t> &globalShape,
                            const std::vector<int64_t> &offset,
                            const std::vector<int64_t> &shape, void *dst);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_INIT_H
