//===- Pipelines.cpp - A distribute pipeline running a codegen pass -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Attention/Passes.h"
#include "dtensor/Codegen/CPU/Passes.h"
