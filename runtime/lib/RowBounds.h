//===- RowBounds.h - Checking indices before a step -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The manifest lists, per entry, the rows a step writes into state at
// indices the entry's inputs give (RowWriteInfo, "row_writes"). Before a
// step the runtime reads those inputs and refuses a call that would write
// outside the cache, so that such a call changes nothing; the compiled
// program's own skipping of those rows stays as the fallback. Likewise the
// index inputs of a training step ("index_bounds": token ids that index an
// embedding's rows), which PyTorch refuses and a compiled gather would read
// as rows of zeros.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ROWBOUNDS_H
#define DTENSOR_RUNTIME_ROWBOUNDS_H

#include "Status.h"

struct dtensor_program;

namespace dtensor::rt {

/// Checks the row writes of the selected entry against this rank's copy of
/// their slots and positions (replicated: the whole tensors). For each row
/// b, a negative slot is padding and passes; any other slot must be below
/// the cache's S, and positions[b] .. positions[b] + T - 1 within [0, M).
/// The first violation is an invalid-argument error naming the entry, the
/// input, the row, the values and the bound. Local: the caller agrees with
/// the other ranks before running the step.
Status checkRowWrites(const dtensor_program &program);

/// Checks the index inputs of the selected entry ("index_bounds"): every
/// value this rank holds must lie in [0, bound). The first one outside is
/// an invalid-argument error naming the entry, the input, the element's
/// global coordinates, its value, the bound and the table. Local, as
/// checkRowWrites.
Status checkIndexBounds(const dtensor_program &program);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_ROWBOUNDS_H
