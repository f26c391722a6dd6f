//===- ModuleTree.h - Modules of a model plan and their styles --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The module tree implied by the ops' dotted `module` paths: which modules
// exist, the inputs and outputs of each (docs/model-plan.md, "Module inputs
// and outputs"), and which style of the plan applies to each.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_MODULETREE_H
#define DTENSOR_COMPILER_FRONTEND_MODULETREE_H

#include "dtensor/Frontend/ModelPlan.h"
#include "dtensor/Training/ModulePath.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace dtensor::frontend {

using dtensor::matchModulePattern;
using dtensor::moduleContains;

/// Every module path of the plan: each op's module and all its ancestors,
/// in order of first appearance.
llvm::SetVector<llvm::StringRef> getModulePaths(const ModelPlan &plan);

struct StyledModule {
  std::string path;
  const StyleDecl *style = nullptr;
  /// Indices into ModelPlan::ops of the ops it contains.
  llvm::SmallVector<unsigned> ops;
  /// Value names, positional as the style's layout lists.
  llvm::SmallVector<std::string> inputs;
  llvm::SmallVector<std::string> outputs;
};

class ModuleTree {
public:
  /// Matches the plan's styles to modules: a pattern that matches nothing
  /// is a warning, a module matched twice an error.
  static mlir::FailureOr<ModuleTree> build(const ModelPlan &plan,
                                           const JsonLocator &locator);

  /// The styled modules that contain an op of `opModule`, outermost first.
  llvm::SmallVector<const StyledModule *>
  getStyledAncestors(llvm::StringRef opModule) const;

  llvm::ArrayRef<StyledModule> getStyledModules() const { return modules; }

  /// The module of the op defining `value`, or std::nullopt for inputs and
  /// parameters (defined outside every module).
  std::optional<llvm::StringRef> getDefiningModule(llvm::StringRef value) const;

private:
  std::vector<StyledModule> modules;
  llvm::StringMap<std::string> definingModule;
};

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_MODULETREE_H
