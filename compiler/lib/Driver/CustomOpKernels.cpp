//===- CustomOpKernels.cpp - The custom ops an artifact calls -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CustomOpKernels.h"

#include "dtensor/Codegen/Common/CustomCalls.h"
#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Formats/CustomOpLibrary.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace dtensor;

/// The element types of a call: its inputs', then its result's.
static SmallVector<Type> getSignature(CustomCallOp op) {
  SmallVector<Type> types;
  for (Value input : op.getInputs())
    types.push_back(cast<ShapedType>(input.getType()).getElementType());
  types.push_back(op.getResult().getType().getElementType());
  return types;
}

LogicalResult
driver::collectCustomOpKernels(ModuleOp module, const std::string &target,
                               const std::vector<std::string> &libraries,
                               rt::Manifest &manifest) {
  // The first call of each custom op stands for all of them.
  llvm::MapVector<StringRef, CustomCallOp> first;
  WalkResult walk = module.walk([&](CustomCallOp op) {
    auto [it, inserted] = first.insert({op.getOpName(), op});
    if (inserted)
      return WalkResult::advance();
    CustomCallOp other = it->second;
    if (other.getSymbol() != op.getSymbol() ||
        getSignature(other) != getSignature(op)) {
      InFlightDiagnostic diag =
          op.emitError() << "custom op '" << op.getOpName()
                         << "' is called here with symbol '" << op.getSymbol()
                         << "' and another symbol or signature elsewhere";
      diag.attachNote(other.getLoc()) << "the other call is here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (first.empty())
    return success();
  CustomCallOp any = first.front().second;
  if (target != "cpu")
    return any.emitError() << "custom op '" << any.getOpName()
                           << "' runs on target cpu only; its kernel is host "
                              "code, target '"
                           << target << "' runs steps on the GPU";
  if (libraries.empty())
    return any.emitError() << "the program calls custom op '" << any.getOpName()
                           << "' (symbol '" << any.getSymbol()
                           << "'); name the library that implements it with "
                              "--custom-op-library";

  std::vector<rt::CustomOpLibrary> opened;
  for (const std::string &path : libraries) {
    llvm::SmallString<256> absolute(path);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    rt::CustomOpLibrary library;
    if (std::string error = library.open(absolute.str().str()); !error.empty())
      return any.emitError() << error;
    manifest.customOpLibraries.push_back(absolute.str().str());
    opened.push_back(std::move(library));
  }

  codegen::recordCustomOps(module);
  auto names =
      module->getAttrOfType<ArrayAttr>(DTensorDialect::getCustomOpsAttrName());
  for (Attribute attr : names) {
    StringRef name = cast<StringAttr>(attr).getValue();
    CustomCallOp op = first.lookup(name);
    rt::CustomOpInfo info;
    info.name = name.str();
    info.symbol = op.getSymbol().str();
    info.library = -1;
    std::string error;
    for (auto [index, library] : llvm::enumerate(opened))
      if (library.find(info.symbol, error)) {
        info.library = static_cast<int64_t>(index);
        break;
      }
    if (info.library < 0) {
      InFlightDiagnostic diag = op.emitError()
                                << "custom op '" << name << "': symbol '"
                                << info.symbol
                                << "' is exported by no custom-op library (";
      llvm::interleaveComma(manifest.customOpLibraries, diag);
      return diag << ")";
    }
    SmallVector<Type> types = getSignature(op);
    for (auto [position, type] : llvm::enumerate(types)) {
      std::optional<int32_t> code = codegen::getRuntimeDType(type);
      if (!code)
        return op.emitError()
               << "custom op '" << name << "' has an operand of element type "
               << type << ", which the runtime does not carry";
      auto dtype = static_cast<rt::DType>(*code);
      if (position + 1 == types.size())
        info.output = dtype;
      else
        info.inputs.push_back(dtype);
    }
    manifest.customOps.push_back(std::move(info));
  }
  return success();
}
