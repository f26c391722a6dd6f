//===- ModulePath.cpp - Module paths and the patterns over them -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Training/ModulePath.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

/// fnmatch-style matching of one segment: `*` any run, `?` one character.
static bool matchSegment(llvm::StringRef pattern, llvm::StringRef text) {
  if (pattern.empty())
    return text.empty();
  if (pattern.front() == '*') {
    for (size_t skip = 0; skip <= text.size(); ++skip)
      if (matchSegment(pattern.drop_front(), text.drop_front(skip)))
        return true;
    return false;
  }
  if (text.empty())
    return false;
  if (pattern.front() != '?' && pattern.front() != text.front())
    return false;
  return matchSegment(pattern.drop_front(), text.drop_front());
}

bool dtensor::matchModulePattern(llvm::StringRef pattern,
                                 llvm::StringRef path) {
  SmallVector<llvm::StringRef> patternSegments, pathSegments;
  pattern.split(patternSegments, '.');
  path.split(pathSegments, '.');
  if (patternSegments.size() != pathSegments.size())
    return false;
  for (auto [p, s] : llvm::zip(patternSegments, pathSegments))
    if (!matchSegment(p, s))
      return false;
  return true;
}

bool dtensor::moduleContains(llvm::StringRef module, llvm::StringRef opModule) {
  if (module.empty() || module == opModule)
    return true;
  return opModule.starts_with(module) && opModule.size() > module.size() &&
         opModule[module.size()] == '.';
}

llvm::StringRef dtensor::findMatchedModule(ArrayRef<std::string> patterns,
                                           llvm::StringRef path) {
  if (path.empty())
    return "";
  for (size_t end = path.find('.');; end = path.find('.', end + 1)) {
    llvm::StringRef module = path.take_front(end);
    if (llvm::any_of(patterns, [&](const std::string &pattern) {
          return matchModulePattern(pattern, module);
        }))
      return module;
    if (end == llvm::StringRef::npos)
      return "";
  }
}

llvm::StringRef dtensor::getLocationModule(Location loc) {
  // The backward mark wraps the op's location in a FusedLoc of one part.
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && fused.getLocations().size() == 1)
    loc = fused.getLocations().front();
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  return "";
}
