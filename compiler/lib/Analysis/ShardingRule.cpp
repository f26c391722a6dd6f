//===- ShardingRule.cpp - printing sharding rules -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dtensor;

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// Factor names: i, j, k, ..., z, then f26, f27, ...
static std::string getFactorName(unsigned factor) {
  constexpr unsigned kLetters = 'z' - 'i' + 1;
  if (factor < kLetters)
    return std::string(1, static_cast<char>('i' + factor));
  return "f" + std::to_string(factor);
}

static void printTensorFactors(llvm::raw_ostream &os,
                               const TensorFactors &factors) {
  os << "[";
  llvm::interleaveComma(factors, os, [&](std::optional<unsigned> factor) {
    os << (factor ? getFactorName(*factor) : std::string("-"));
  });
  os << "]";
}

void ShardingRule::print(llvm::raw_ostream &os) const {
  auto printList = [&](ArrayRef<TensorFactors> list) {
    os << "(";
    llvm::interleaveComma(list, os, [&](const TensorFactors &factors) {
      printTensorFactors(os, factors);
    });
    os << ")";
  };
  printList(operands);
  os << " -> ";
  printList(results);
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto entry) {
    const ShardingFactor &factor = entry.value();
    os << getFactorName(entry.index()) << "=";
    if (ShapedType::isDynamic(factor.size))
      os << "?";
    else
      os << factor.size;
    if (factor.isReduction()) {
      os << " reduction<";
      os << (factor.combiner ? stringifyReductionKind(*factor.combiner)
                             : StringRef("unknown"));
      os << ">";
    }
    if (factor.needsEvenSplit)
      os << " even";
    if (factor.blocked)
      os << " blocked";
  });
  os << "}";
  if (!initOperands.empty()) {
    os << " inits [";
    llvm::interleaveComma(initOperands, os);
    os << "]";
  }
  if (partialFlows.empty())
    return;
  os << " partial";
  for (const PartialFlow &flow : partialFlows) {
    os << " {";
    if (flow.operands.empty())
      os << "-";
    llvm::interleaveComma(flow.operands, os);
    os << ": ";
    llvm::interleave(
        flow.kinds, os,
        [&](ReductionKind kind) { os << stringifyReductionKind(kind); }, "|");
    os << "}";
  }
}
