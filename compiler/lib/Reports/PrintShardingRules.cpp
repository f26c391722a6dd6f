//===- PrintShardingRules.cpp - report sharding rules -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/ShardingRuleRegistry.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace dtensor {
#define GEN_PASS_DEF_PRINTSHARDINGRULES
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;

namespace {
struct PrintShardingRules
    : public dtensor::impl::PrintShardingRulesBase<PrintShardingRules> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (llvm::none_of(op->getResultTypes(), llvm::IsaPred<TensorType>))
        return;
      std::optional<ShardingRule> rule = getShardingRule(op);
      if (!rule) {
        op->emitRemark("no sharding rule; kept replicated");
        return;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      rule->print(os);
      op->emitRemark() << "sharding rule: " << text;
    });
  }
};
} // namespace
