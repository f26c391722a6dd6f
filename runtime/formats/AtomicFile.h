//===- AtomicFile.h - Writing a file through a temporary --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Writers of the formats create `path.tmp.<pid>` and rename it over `path`
// only once it is completely written, so that a failure never leaves a
// half-written file behind (and readers never see one).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FORMATS_ATOMICFILE_H
#define DTENSOR_RUNTIME_FORMATS_ATOMICFILE_H

#include <cstddef>
#include <functional>
#include <string>

namespace dtensor::rt {

/// Appends bytes to the file being written; false on an I/O error.
using WriteBytesFn = std::function<bool(const void *data, size_t size)>;

/// Calls `writeContents` with a function appending to a temporary file, then
/// renames the file to `path`. The temporary is removed on any failure.
/// "" or the error (naming the file and the system's reason).
std::string writeFileAtomically(
    const std::string &path,
    const std::function<bool(const WriteBytesFn &)> &writeContents);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FORMATS_ATOMICFILE_H
