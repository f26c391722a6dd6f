//===- Init.cpp - Weight initializers -------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Init.h"

#include "dtensor/Formats/Random.h"

#include <cmath>

namespace dtensor::rt {

const char *initKindName(InitKind kind) {
  switch (kind) {
  case InitKind::Zeros:
    return "zeros";
  case InitKind::Ones:
    return "ones";
  case InitKind::Constant:
    return "constant";
  case InitKind::Normal:
    return "normal";
  case InitKind::Uniform:
    return "uniform";
  }
  return "unknown";
}

std::optional<InitKind> parseInitKind(std::string_view name) {
  for (InitKind kind : {InitKind::Zeros, InitKind::Ones, InitKind::Constant,
                        InitKind::Normal, InitKind::Uniform})
    if (name == initKindName(kind))
      return kind;
  return std::nullopt;
}

std::vector<const char *> initParameterNames(InitKind kind) {
  switch (kind) {
  case InitKind::Constant:
    return {"value"};
  case InitKind::Normal:
    return {"mean", "std"};
  case InitKind::Uniform:
    return {"low", "high"};
  default:
    return {};
  }
}

std::string validateInitializer(const Initializer &init, DType dtype) {
  std::vector<const char *> names = initParameterNames(init.kind);
  for (size_t i = 0; i < 2; ++i) {
    if (i >= names.size()) {
      if (init.params[i] != 0.0)
        return std::string(initKindName(init.kind)) + " takes " +
               std::to_string(names.size()) +
               " parameter(s); the others must be 0";
      continue;
    }
    if (!std::isfinite(init.params[i]))
      return std::string("\"") + names[i] + "\" must be finite";
  }
  if (init.kind == InitKind::Normal && init.params[1] < 0)
    return "\"std\" must be >= 0, got " + std::to_string(init.params[1]);
  if (init.kind == InitKind::Uniform && init.params[0] > init.params[1])
    return "\"low\" (" + std::to_string(init.params[0]) +
           ") must be <= \"high\" (" + std::to_string(init.params[1]) + ")";
  if (isFloatingPoint(dtype))
    return "";
  if (init.kind == InitKind::Normal || init.kind == InitKind::Uniform)
    return std::string("a ") + dtypeName(dtype) + " tensor cannot take " +
           initKindName(init.kind) +
           " (zeros, ones or an integral constant only)";
  if (init.kind == InitKind::Constant) {
    double value = init.params[0];
    if (std::trunc(value) != value)
      return "a " + std::string(dtypeName(dtype)) +
             " tensor needs an integral constant, got " + std::to_string(value);
    if (dtype != DType::Bool) {
      double limit = std::ldexp(1.0, 8 * int(dtypeSize(dtype)) - 1);
      if (!(value >= -limit && value < limit))
        return "the constant " + std::to_string(value) + " does not fit " +
               dtypeName(dtype);
    }
  }
  return "";
}

uint64_t initializerSeed(uint64_t seed, std::string_view name) {
  // FNV-1a of the name, then SplitMix64's finaliser over it and the seed.
  return counter_rng::streamSeed(seed, counter_rng::nameHash(name));
}

std::string fillInitializer(const Initializer &init, uint64_t seed, DType dtype,
                            const std::vector<int64_t> &globalShape,
                            const std::vector<int64_t> &offset,
                            const std::vector<int64_t> &shape, void *dst) {
  if (std::string error = validateInitializer(init, dtype); !error.empty())
    return std::string(initKindName(init.kind)) + ": " + error;
  const double *p = init.params;
  switch (init.kind) {
  case InitKind::Zeros:
    return fillBox(Factory::Zeros, 0.0, seed, dtype, globalShape, offset, shape,
                   dst);
  case InitKind::Ones:
    return fillBox(Factory::Ones, 0.0, seed, dtype, globalShape, offset, shape,
                   dst);
  case InitKind::Constant:
    return fillBox(Factory::Full, p[0], seed, dtype, globalShape, offset, shape,
                   dst);
  case InitKind::Normal:
    return fillBoxAffine(Factory::Randn, p[1], p[0], seed, dtype, globalShape,
                         offset, shape, dst);
  case InitKind::Uniform:
    return fillBoxAffine(Factory::Rand, p[1] - p[0], p[0], seed, dtype,
                         globalShape, offset, shape, dst);
  }
  return "unknown initializer kind";
}

} // namespace dtensor::rt
