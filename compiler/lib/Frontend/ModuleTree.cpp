//===- ModuleTree.cpp - Modules of a model plan and their styles ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ModuleTree.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace dtensor::frontend;

llvm::SetVector<llvm::StringRef>
dtensor::frontend::getModulePaths(const ModelPlan &plan) {
  llvm::SetVector<llvm::StringRef> paths;
  for (const OpDecl &op : plan.ops) {
    llvm::StringRef module = op.module;
    for (size_t dot = module.find('.'); dot != llvm::StringRef::npos;
         dot = module.find('.', dot + 1))
      paths.insert(module.take_front(dot));
    if (!module.empty())
      paths.insert(module);
  }
  return paths;
}

FailureOr<ModuleTree> ModuleTree::build(const ModelPlan &plan,
                                        const JsonLocator &locator) {
  ModuleTree tree;
  for (const OpDecl &op : plan.ops)
    for (const std::string &output : op.outputs)
      tree.definingModule[output] = op.module;

  llvm::SetVector<llvm::StringRef> paths = getModulePaths(plan);

  llvm::StringMap<const StyleDecl *> styleOf;
  for (const StyleDecl &style : plan.styles) {
    bool matched = false;
    for (llvm::StringRef path : paths) {
      if (!matchModulePattern(style.pattern, path))
        continue;
      matched = true;
      auto [it, inserted] = styleOf.try_emplace(path, &style);
      if (inserted)
        continue;
      InFlightDiagnostic diag = locator.emitError(*style.node);
      diag << "module '" << path << "' is matched by two styles, '"
           << it->second->pattern << "' and '" << style.pattern << "'";
      diag.attachNote(locator.get(*it->second->node))
          << "the other style is here";
      return failure();
    }
    if (!matched)
      locator.emitWarning(*style.node)
          << "pattern '" << style.pattern << "' matches no module";
  }

  // Which op reads each value, to find module outputs.
  llvm::StringMap<SmallVector<unsigned>> readers;
  for (auto [index, op] : llvm::enumerate(plan.ops))
    for (const std::string &input : op.inputs)
      readers[input].push_back(index);
  llvm::StringSet<> parameters, modelOutputs;
  for (const TensorDecl &decl : plan.parameters)
    parameters.insert(decl.name);
  for (const std::string &output : plan.outputs)
    modelOutputs.insert(output);

  for (llvm::StringRef path : paths) {
    auto it = styleOf.find(path);
    if (it == styleOf.end())
      continue;
    StyledModule module;
    module.path = path.str();
    module.style = it->second;
    llvm::SetVector<llvm::StringRef> inputs;
    for (auto [index, op] : llvm::enumerate(plan.ops)) {
      if (!moduleContains(path, op.module))
        continue;
      module.ops.push_back(index);
      for (const std::string &input : op.inputs) {
        if (parameters.contains(input))
          continue;
        std::optional<llvm::StringRef> definer = tree.getDefiningModule(input);
        if (!definer || !moduleContains(path, *definer))
          inputs.insert(input);
      }
      for (const std::string &output : op.outputs) {
        bool readOutside = modelOutputs.contains(output);
        for (unsigned reader : readers.lookup(output))
          readOutside |= !moduleContains(path, plan.ops[reader].module);
        if (readOutside)
          module.outputs.push_back(output);
      }
    }
    for (llvm::StringRef input : inputs)
      module.inputs.push_back(input.str());
    tree.modules.push_back(std::move(module));
  }
  return tree;
}

SmallVector<const StyledModule *>
ModuleTree::getStyledAncestors(llvm::StringRef opModule) const {
  SmallVector<const StyledModule *> result;
  for (const StyledModule &module : modules)
    if (moduleContains(module.path, opModule))
      result.push_back(&module);
  // Outermost first: a containing module's path is a prefix, so shorter.
  llvm::stable_sort(result, [](const StyledModule *a, const StyledModule *b) {
    return a->path.size() < b->path.size();
  });
  return result;
}

std::optional<llvm::StringRef>
ModuleTree::getDefiningModule(llvm::StringRef value) const {
  auto it = definingModule.find(value);
  if (it == definingModule.end())
    return std::nullopt;
  return llvm::StringRef(it->second);
}
