//===- NpyBytes.h - .npy file bytes for the tooling tests -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_TEST_UNIT_TOOLING_NPYBYTES_H
#define DTENSOR_TEST_UNIT_TOOLING_NPYBYTES_H

#include <string>

namespace dtensor::tooling::test {

/// An .npy file of version major.0 with a raw header text and data bytes.
inline std::string rawNpy(int major, const std::string &header,
                          const std::string &data) {
  std::string bytes("\x93NUMPY", 6);
  bytes.push_back(static_cast<char>(major));
  bytes.push_back(0);
  int lengthSize = major == 1 ? 2 : 4;
  for (int i = 0; i < lengthSize; ++i)
    bytes.push_back(static_cast<char>(header.size() >> (8 * i)));
  return bytes + header + data;
}

} // namespace dtensor::tooling::test

#endif // DTENSOR_TEST_UNIT_TOOLING_NPYBYTES_H
