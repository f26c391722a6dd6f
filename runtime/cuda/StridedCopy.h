//===- StridedCopy.h - Packing strided views on the device ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collectives and matrix products need contiguous buffers; a program's views
// may be strided (slices, transposes). These copy a view's elements,
// row-major, to or from contiguous device memory on a stream: a kernel
// (StridedCopy.cu, one thread per element) for strided views, a plain copy
// for contiguous ones.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUDA_STRIDEDCOPY_H
#define DTENSOR_RUNTIME_CUDA_STRIDEDCOPY_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dtensor::rt::cuda {

/// The most dims a strided copy takes.
inline constexpr int kMaxCopyRank = 8;

/// A view as the kernel takes it (sizes and strides in elements).
struct CopyShape {
  int rank = 0;
  int64_t sizes[kMaxCopyRank] = {};
  int64_t strides[kMaxCopyRank] = {};
};

/// Copies the `count` elements of `elemSize` (1, 2, 4 or 8) bytes of the
/// view at `view` with `shape` to contiguous `packed` (`toPacked`) or back.
cudaError_t stridedCopy(char *view, char *packed, const CopyShape &shape,
                        int64_t count, int elemSize, bool toPacked,
                        cudaStream_t stream);

} // namespace dtensor::rt::cuda

#endif // DTENSOR_RUNTIME_CUDA_STRIDEDCOPY_H
