//===- MergeIdenticalFunctions.cpp - one copy of each private function ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The layers of a model repeat the same loop nests on buffers of the same
// shapes. Once each nest is a function, identical ones are merged, so code
// generation sees each distinct nest once.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/Passes.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUMERGEIDENTICALFUNCTIONS
#include "dtensor/Codegen/CPU/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-cpu-merge-identical-functions"

using namespace mlir;

namespace {

/// A hash of a function's type, attributes other than its name, and body
/// (operations, their attributes and types, in order; locations and the
/// identities of values left out). Equal functions hash equal.
llvm::hash_code hashFunction(func::FuncOp func) {
  llvm::hash_code hash = hash_value(func.getFunctionType());
  for (NamedAttribute attribute : func->getAttrs())
    if (attribute.getName() != SymbolTable::getSymbolAttrName())
      hash = llvm::hash_combine(hash, attribute);
  func.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool sameAttributesButName(func::FuncOp lhs, func::FuncOp rhs) {
  auto withoutName = [](func::FuncOp func) {
    NamedAttrList attributes(func->getAttrs());
    attributes.erase(SymbolTable::getSymbolAttrName());
    return attributes.getDictionary(func.getContext());
  };
  return withoutName(lhs) == withoutName(rhs);
}

bool isIdentical(func::FuncOp lhs, func::FuncOp rhs) {
  return lhs.getFunctionType() == rhs.getFunctionType() &&
         sameAttributesButName(lhs, rhs) &&
         OperationEquivalence::isRegionEquivalentTo(
             &lhs.getBody(), &rhs.getBody(),
             OperationEquivalence::IgnoreLocations);
}

struct CpuMergeIdenticalFunctions
    : dtensor::codegen::impl::CpuMergeIdenticalFunctionsBase<
          CpuMergeIdenticalFunctions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The first function of each hash, then the others that equal it.
    llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> kept;
    SmallVector<func::FuncOp> copies;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPrivate() || func.isExternal())
        continue;
      SmallVector<func::FuncOp, 1> &candidates = kept[hashFunction(func)];
      auto original = llvm::find_if(candidates, [&](func::FuncOp candidate) {
        return isIdentical(candidate, func);
      });
      if (original == candidates.end()) {
        candidates.push_back(func);
        continue;
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "merging @" << func.getSymName() << " into the identical @"
                 << original->getSymName() << "\n");
      if (failed(SymbolTable::replaceAllSymbolUses(
              func, original->getSymNameAttr(), module)))
        return signalPassFailure();
      copies.push_back(func);
    }
    for (func::FuncOp copy : copies)
      copy.erase();
  }
};

} // namespace
