//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run's input and output format. Reads format versions 1.0, 2.0 and
// 3.0 with the little-endian (or byte-sized) descrs '<f4', '<f8', '<f2',
// '<i4', '<i8', '|i1' and '|b1' in C order; writes version 1.0 (through a
// temporary file renamed over the target, so that a failure never leaves a
// half-written file). NumPy has no bfloat16, so bf16 is neither read ('<u2'
// is not taken for it) nor written. Element types are the C API's
// dtensor_dtype.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_NPY_H
#define DTENSOR_TOOLING_NPY_H

#include "dtensor/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::tooling {

/// A whole array: row-major little-endian elements of `shape`.
struct NpyArray {
  dtensor_dtype dtype = DTENSOR_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Where an .npy file's data lies, from its header, without reading it.
struct NpyLayout {
  /// The element type as written, e.g. '<f4' or '<u2'.
  std::string descr;
  std::vector<int64_t> shape;
  /// Bytes before the data.
  uint64_t dataOffset = 0;
  uint64_t fileSize = 0;
};

/// Reads and checks the header of `path`: the magic, the version, the dict
/// and C order (any descr). "" or the error, naming the file.
std::string readNpyLayout(const std::string &path, NpyLayout &layout);

/// Checks that the data after the header of `layout` is exactly the shape's
/// elements of `elementBytes` each, and sets `dataBytes` to that size. ""
/// or the error (truncated, trailing bytes, an overflowing shape).
std::string checkNpyDataSize(const std::string &path, const NpyLayout &layout,
                             uint64_t elementBytes, uint64_t &dataBytes);

/// Reads `path` into `array`. The data must be exactly the product of the
/// shape times the element size (trailing bytes are an error). "" or the
/// error, naming the file.
std::string readNpy(const std::string &path, NpyArray &array);

/// Writes a version 1.0 file of `shape` and `dtype` from the row-major
/// `data`. "" or the error (bf16 is refused with a hint to convert to f32).
std::string writeNpy(const std::string &path, dtensor_dtype dtype,
                     const std::vector<int64_t> &shape, const void *data);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_NPY_H
