//===- Export.h - Visibility of the runtime's C symbols ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The library is built with hidden visibility; only the C API (dtensor_*)
// and the ABI of compiled programs (dtensor_rt_*) are exported.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_EXPORT_H
#define DTENSOR_RUNTIME_EXPORT_H

#define DTENSOR_EXPORT __attribute__((visibility("default")))

#endif // DTENSOR_RUNTIME_EXPORT_H
