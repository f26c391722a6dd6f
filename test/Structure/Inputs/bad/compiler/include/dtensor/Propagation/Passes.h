//===- Passes.h - a public header with an old guard -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef DTENSOR_TRANSFORMS_PASSES_H
#define DTENSOR_TRANSFORMS_PASSES_H

#endif // DTENSOR_TRANSFORMS_PASSES_H
