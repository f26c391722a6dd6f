//===- Random.cpp - Factories for sharded tensors -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Random.h"

#include "dtensor/Formats/Box.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace dtensor::rt {

namespace {

using counter_rng::elementWord;
using counter_rng::mix;
constexpr double kTwoPi = 6.283185307179586476925286766559;

/// Word `j` (0 or 1) of element `index` under `key`.
uint64_t word(uint64_t key, uint64_t index, uint64_t j) {
  return elementWord(key, index, j);
}

/// Uniform [0, 1) from the top `bits` bits of `w` (exact in double).
double uniform(uint64_t w, int bits) {
  return std::ldexp(static_cast<double>(w >> (64 - bits)), -bits);
}

int significandBits(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return 53;
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  default:
    return 24;
  }
}

/// Stores `value` as element `i` of `dst`, for floating-point dtypes.
void storeFloat(DType dtype, double value, void *dst, int64_t i) {
  switch (dtype) {
  case DType::F32:
    static_cast<float *>(dst)[i] = static_cast<float>(value);
    return;
  case DType::F64:
    static_cast<double *>(dst)[i] = value;
    return;
  case DType::F16:
    static_cast<uint16_t *>(dst)[i] = floatToHalf(static_cast<float>(value));
    return;
  case DType::BF16:
    static_cast<uint16_t *>(dst)[i] = floatToBf16(static_cast<float>(value));
    return;
  default:
    return;
  }
}

/// The bytes of the constant `value` in `dtype`, or an error for an integer
/// value out of range.
std::string constantBytes(DType dtype, double value, uint8_t *bytes) {
  auto integer = [&](auto type, const char *name) -> std::string {
    using T = decltype(type);
    double truncated = std::trunc(value);
    // [min, max + 1) is exact in double for every integer type here.
    if (!(truncated >= static_cast<double>(std::numeric_limits<T>::min()) &&
          truncated < -static_cast<double>(std::numeric_limits<T>::min())))
      return "the fill value " + std::to_string(value) + " does not fit " +
             name;
    T converted = static_cast<T>(truncated);
    std::memcpy(bytes, &converted, sizeof(T));
    return "";
  };
  switch (dtype) {
  case DType::I32:
    return integer(int32_t(), "i32");
  case DType::I64:
    return integer(int64_t(), "i64");
  case DType::I8:
    return integer(int8_t(), "i8");
  case DType::Bool:
    bytes[0] = value != 0.0 ? 1 : 0;
    return "";
  default:
    storeFloat(dtype, value, bytes, 0);
    return "";
  }
}

/// fillBox, with random samples made shift + scale * sample.
std::string fillAffine(Factory factory, double value, double scale,
                       double shift, uint64_t seed, DType dtype,
                       const std::vector<int64_t> &globalShape,
                       const std::vector<int64_t> &offset,
                       const std::vector<int64_t> &shape, void *dst);

} // namespace

const char *factoryName(Factory factory) {
  switch (factory) {
  case Factory::Zeros:
    return "zeros";
  case Factory::Ones:
    return "ones";
  case Factory::Full:
    return "full";
  case Factory::Rand:
    return "rand";
  case Factory::Randn:
    return "randn";
  }
  return "unknown";
}

std::optional<Factory> parseFactory(std::string_view name) {
  for (Factory factory : {Factory::Zeros, Factory::Ones, Factory::Full,
                          Factory::Rand, Factory::Randn})
    if (name == factoryName(factory))
      return factory;
  return std::nullopt;
}

std::string fillBox(Factory factory, double value, uint64_t seed, DType dtype,
                    const std::vector<int64_t> &globalShape,
                    const std::vector<int64_t> &offset,
                    const std::vector<int64_t> &shape, void *dst) {
  return fillAffine(factory, value, 1.0, 0.0, seed, dtype, globalShape, offset,
                    shape, dst);
}

std::string fillBoxAffine(Factory factory, double scale, double shift,
                          uint64_t seed, DType dtype,
                          const std::vector<int64_t> &globalShape,
                          const std::vector<int64_t> &offset,
                          const std::vector<int64_t> &shape, void *dst) {
  if (factory != Factory::Rand && factory != Factory::Randn)
    return std::string(factoryName(factory)) +
           ": an affine fill needs rand or randn";
  if (!std::isfinite(scale) || !std::isfinite(shift))
    return std::string(factoryName(factory)) +
           ": the scale and shift must be finite";
  return fillAffine(factory, 0.0, scale, shift, seed, dtype, globalShape,
                    offset, shape, dst);
}

namespace {

std::string fillAffine(Factory factory, double value, double scale,
                       double shift, uint64_t seed, DType dtype,
                       const std::vector<int64_t> &globalShape,
                       const std::vector<int64_t> &offset,
                       const std::vector<int64_t> &shape, void *dst) {
  const size_t rank = globalShape.size();
  if (offset.size() != rank || shape.size() != rank)
    return std::string(factoryName(factory)) + ": the box has rank " +
           std::to_string(offset.size()) + "/" + std::to_string(shape.size()) +
           ", the tensor rank " + std::to_string(rank);
  if (numElements(globalShape) < 0)
    return std::string(factoryName(factory)) +
           ": the global shape has a negative dim or too many elements";
  for (size_t d = 0; d < rank; ++d)
    if (offset[d] < 0 || shape[d] < 0 || offset[d] > globalShape[d] ||
        shape[d] > globalShape[d] - offset[d])
      return std::string(factoryName(factory)) + ": the box [" +
             std::to_string(offset[d]) + ", " + std::to_string(offset[d]) +
             " + " + std::to_string(shape[d]) + ") of dim " +
             std::to_string(d) + " is outside [0, " +
             std::to_string(globalShape[d]) + ")";
  const int64_t count = numElements(shape);
  const size_t elemSize = dtypeSize(dtype);

  if (factory == Factory::Zeros || factory == Factory::Ones ||
      factory == Factory::Full) {
    double constant = factory == Factory::Zeros  ? 0.0
                      : factory == Factory::Ones ? 1.0
                                                 : value;
    uint8_t bytes[8];
    if (std::string error = constantBytes(dtype, constant, bytes);
        !error.empty())
      return std::string(factoryName(factory)) + ": " + error;
    char *out = static_cast<char *>(dst);
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(out + i * elemSize, bytes, elemSize);
    return "";
  }

  if (!isFloatingPoint(dtype))
    return std::string(factoryName(factory)) + ": " + dtypeName(dtype) +
           " tensors can only be made by zeros, ones or full (random values "
           "need a floating-point dtype)";
  const uint64_t key = counter_rng::streamKey(seed);
  const int bits = significandBits(dtype);
  const bool normal = factory == Factory::Randn;
  forEachBoxRun(
      globalShape, offset, shape,
      [&](int64_t globalElem, int64_t localElem, int64_t elems) {
        for (int64_t i = 0; i < elems; ++i) {
          uint64_t index = static_cast<uint64_t>(globalElem + i);
          double sample;
          if (normal) {
            double u0 = uniform(word(key, index, 0), 53);
            double u1 = uniform(word(key, index, 1), 53);
            // 1 - u0 is exact: compiled programs compute the same log.
            sample = std::sqrt(-2.0 * std::log(1.0 - u0)) *
                     std::cos(kTwoPi * u1);
          } else {
            sample = uniform(word(key, index, 0), bits);
          }
          storeFloat(dtype, shift + scale * sample, dst, localElem + i);
        }
        return true;
      });
  return "";
}

} // namespace

} // namespace dtensor::rt
