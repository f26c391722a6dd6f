//===- BackwardMark.cpp - Which ops differentiation built -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Autodiff/BackwardMark.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace {

/// The key of the mark's metadata.
constexpr llvm::StringLiteral kBackwardKey = "dtensor.backward";

/// The metadata of a marked location, or null.
DictionaryAttr getMark(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  if (!fused || fused.getLocations().size() != 1)
    return {};
  auto metadata = dyn_cast_or_null<DictionaryAttr>(fused.getMetadata());
  return metadata && metadata.contains(kBackwardKey) ? metadata
                                                     : DictionaryAttr();
}

} // namespace

Location dtensor::autodiff::markBackward(Location loc, llvm::StringRef weight) {
  Builder b(loc.getContext());
  Attribute value = weight.empty() ? Attribute(b.getUnitAttr())
                                   : Attribute(b.getStringAttr(weight));
  return FusedLoc::get(
      loc.getContext(), {getUnmarkedLoc(loc)},
      b.getDictionaryAttr(b.getNamedAttr(kBackwardKey, value)));
}

dtensor::autodiff::BackwardMark
dtensor::autodiff::getBackwardMark(Location loc) {
  BackwardMark mark;
  DictionaryAttr metadata = getMark(loc);
  if (!metadata)
    return mark;
  mark.backward = true;
  if (auto weight = metadata.getAs<StringAttr>(kBackwardKey))
    mark.gradientOf = weight.str();
  return mark;
}

Location dtensor::autodiff::getUnmarkedLoc(Location loc) {
  return getMark(loc) ? cast<FusedLoc>(loc).getLocations().front() : loc;
}
