//===- TextTable.cpp - aligned text tables for reports --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "TextTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>

void dtensor::printTextTable(llvm::ArrayRef<TextRow> rows,
                             llvm::raw_ostream &os) {
  if (rows.empty())
    return;
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const TextRow &row : rows)
    for (auto [width, cell] : llvm::zip_equal(widths, row))
      width = std::max(width, cell.size());
  for (const TextRow &row : rows) {
    os << "  ";
    for (size_t column = 0; column + 1 < row.size(); ++column)
      os << llvm::left_justify(row[column], widths[column]) << "  ";
    os << row.back() << "\n";
  }
}
