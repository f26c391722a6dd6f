//===- TextTable.h - aligned text tables for reports ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_COMPILER_REPORTS_TEXTTABLE_H
#define DTENSOR_COMPILER_REPORTS_TEXTTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dtensor {

/// One row of a text table, one string per column.
using TextRow = std::vector<std::string>;

/// Prints `rows` indented by two spaces, every column but the last padded to
/// its widest cell and columns separated by two spaces.
void printTextTable(llvm::ArrayRef<TextRow> rows, llvm::raw_ostream &os);

} // namespace dtensor

#endif // DTENSOR_COMPILER_REPORTS_TEXTTABLE_H
