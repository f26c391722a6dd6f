//===- FaultSetting.h - The value of DTENSOR_TEST_FAULT ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parsed form of DTENSOR_TEST_FAULT=rank=R,step=K,point=P
// (FaultInjection.h): which rank kills itself, at which step and point.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FAULTSETTING_H
#define DTENSOR_RUNTIME_FAULTSETTING_H

#include "Status.h"

#include <cstdint>

namespace dtensor::rt {

/// The environment variable.
inline constexpr const char *kFaultVariable = "DTENSOR_TEST_FAULT";

enum class FaultPoint { Collective, Compute };

/// The parsed DTENSOR_TEST_FAULT, or the reason it is malformed.
struct FaultSetting {
  bool armed = false;
  int rank = 0;
  int64_t step = 0;
  FaultPoint point = FaultPoint::Collective;
};

/// Parses a DTENSOR_TEST_FAULT value ("" or null: not armed).
Status parseFaultSetting(const char *text, FaultSetting &setting);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FAULTSETTING_H
