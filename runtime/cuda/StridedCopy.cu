//===- StridedCopy.cu - Packing strided views on the device ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "StridedCopy.h"

namespace dtensor::rt::cuda {

namespace {

/// Element i (row-major) of the view, copied as one T.
template <typename T>
__global__ void copyElements(T *view, T *packed, CopyShape shape, int64_t count,
                             bool toPacked) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      offset += rest % shape.sizes[d] * shape.strides[d];
      rest /= shape.sizes[d];
    }
    if (toPacked)
      packed[i] = view[offset];
    else
      view[offset] = packed[i];
  }
}

template <typename T>
cudaError_t launch(char *view, char *packed, const CopyShape &shape,
                   int64_t count, bool toPacked, cudaStream_t stream) {
  constexpr int threads = 256;
  int64_t blocks = (count + threads - 1) / threads;
  // Enough blocks to fill the GPU; the loop covers the rest.
  if (blocks > 65535)
    blocks = 65535;
  copyElements<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      reinterpret_cast<T *>(view), reinterpret_cast<T *>(packed), shape, count,
      toPacked);
  return cudaGetLastError();
}

} // namespace

cudaError_t stridedCopy(char *view, char *packed, const CopyShape &shape,
                        int64_t count, int elemSize, bool toPacked,
                        cudaStream_t stream) {
  if (count == 0)
    return cudaSuccess;
  switch (elemSize) {
  case 1:
    return launch<uint8_t>(view, packed, shape, count, toPacked, stream);
  case 2:
    return launch<uint16_t>(view, packed, shape, count, toPacked, stream);
  case 4:
    return launch<uint32_t>(view, packed, shape, count, toPacked, stream);
  case 8:
    return launch<uint64_t>(view, packed, shape, count, toPacked, stream);
  }
  return cudaErrorInvalidValue;
}

} // namespace dtensor::rt::cuda
