//===- DTensorAttrs.cpp - placements and layouts ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

#include "dtensor/Dialect/DTensor/DTensorEnums.cpp.inc"

#include "dtensor/Dialect/DTensor/DTensorAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dtensor/Dialect/DTensor/DTensorAttrs.cpp.inc"

void DTensorDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dtensor/Dialect/DTensor/DTensorAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Reduction kinds and placements
//===----------------------------------------------------------------------===//

layout::ReduceKind dtensor::toLayoutReduceKind(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return layout::ReduceKind::Sum;
  case ReductionKind::Avg:
    return layout::ReduceKind::Avg;
  case ReductionKind::Max:
    return layout::ReduceKind::Max;
  case ReductionKind::Min:
    return layout::ReduceKind::Min;
  }
  llvm_unreachable("unknown reduction kind");
}

ReductionKind dtensor::fromLayoutReduceKind(layout::ReduceKind kind) {
  switch (kind) {
  case layout::ReduceKind::Sum:
    return ReductionKind::Sum;
  case layout::ReduceKind::Avg:
    return ReductionKind::Avg;
  case layout::ReduceKind::Max:
    return ReductionKind::Max;
  case layout::ReduceKind::Min:
    return ReductionKind::Min;
  }
  llvm_unreachable("unknown reduction kind");
}

PlacementAttr dtensor::getPlacementAttr(MLIRContext *context,
                                        const layout::Placement &placement) {
  switch (placement.kind) {
  case layout::Placement::Kind::Replicate:
    return ReplicateAttr::get(context);
  case layout::Placement::Kind::Shard:
    return ShardAttr::get(context, placement.dim, placement.headTail);
  case layout::Placement::Kind::Partial:
    return PartialAttr::get(context, fromLayoutReduceKind(placement.reduce));
  }
  llvm_unreachable("unknown placement kind");
}

LayoutAttr dtensor::getLayoutAttr(FlatSymbolRefAttr mesh,
                                  const std::vector<layout::Placement> &placements) {
  MLIRContext *context = mesh.getContext();
  SmallVector<PlacementAttr> attrs;
  attrs.reserve(placements.size());
  for (const layout::Placement &placement : placements)
    attrs.push_back(getPlacementAttr(context, placement));
  return LayoutAttr::get(context, mesh, attrs);
}

layout::Placement ShardAttr::getPlacement() const {
  return getHeadTail() ? layout::Placement::shardHeadTail(getDim())
                       : layout::Placement::shard(getDim());
}

Attribute ShardAttr::parse(AsmParser &parser, Type) {
  int64_t dim = 0;
  bool headTail = false;
  if (parser.parseLess() || parser.parseInteger(dim))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("head_tail"))
      return {};
    headTail = true;
  }
  if (parser.parseGreater())
    return {};
  return ShardAttr::get(parser.getContext(), dim, headTail);
}

void ShardAttr::print(AsmPrinter &printer) const {
  printer << "<" << getDim();
  if (getHeadTail())
    printer << ", head_tail";
  printer << ">";
}

layout::Placement ReplicateAttr::getPlacement() const {
  return layout::Placement::replicate();
}

layout::Placement PartialAttr::getPlacement() const {
  return layout::Placement::partial(toLayoutReduceKind(getKind()));
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

/// Parses one placement written without the `#dtensor.` prefix.
static FailureOr<PlacementAttr> parsePlacement(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult result =
      generatedAttributeParser(parser, &mnemonic, Type(), attr);
  if (result.has_value() && failed(*result))
    return failure();
  auto placement = dyn_cast_or_null<PlacementAttr>(attr);
  if (!result.has_value() || !placement)
    return parser.emitError(loc, "expected a placement: shard<dim>, "
                                 "shard<dim, head_tail>, replicate or "
                                 "partial<sum|avg|max|min>");
  return placement;
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  FlatSymbolRefAttr mesh;
  SmallVector<PlacementAttr> placements;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            FailureOr<PlacementAttr> placement = parsePlacement(parser);
            if (failed(placement))
              return failure();
            placements.push_back(*placement);
            return success();
          }))
    return {};
  if (parser.parseGreater())
    return {};
  return LayoutAttr::get(parser.getContext(), mesh, placements);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  llvm::interleaveComma(getPlacements(), printer, [&](PlacementAttr p) {
    (void)generatedAttributePrinter(p, printer);
  });
  printer << "]>";
}

std::vector<layout::Placement> LayoutAttr::getLayoutPlacements() const {
  std::vector<layout::Placement> result;
  result.reserve(getPlacements().size());
  for (PlacementAttr placement : getPlacements())
    result.push_back(placement.getPlacement());
  return result;
}

// A null `emitError` reports nothing: a check whose failure is reported
// elsewhere (an inactive InFlightDiagnostic would assert when written to).
LogicalResult
LayoutAttr::verifyFor(function_ref<InFlightDiagnostic()> emitError,
                      ShapedType type, MeshOp mesh) const {
  if (static_cast<int64_t>(getPlacements().size()) != mesh.getRank()) {
    if (!emitError)
      return failure();
    return emitError() << "has " << getPlacements().size()
                       << " placements but mesh @" << mesh.getSymName()
                       << " has " << mesh.getRank() << " dims";
  }
  int64_t rank = type.getRank();
  for (auto [meshDim, placement] : llvm::enumerate(getPlacements())) {
    auto shard = dyn_cast<ShardAttr>(placement);
    if (!shard || layout::normalizeDim(shard.getDim(), rank))
      continue;
    if (!emitError)
      return failure();
    return emitError() << "shard dim " << shard.getDim() << " on mesh dim "
                       << meshDim << " is out of range for a rank-" << rank
                       << " tensor";
  }
  for (auto [meshDim, placement] : llvm::enumerate(getPlacements())) {
    auto shard = dyn_cast<ShardAttr>(placement);
    if (!shard || !shard.getHeadTail())
      continue;
    for (auto [other, otherPlacement] : llvm::enumerate(getPlacements())) {
      auto otherShard = dyn_cast<ShardAttr>(otherPlacement);
      if (other == meshDim || !otherShard ||
          layout::normalizeDim(otherShard.getDim(), rank) !=
              layout::normalizeDim(shard.getDim(), rank))
        continue;
      if (!emitError)
        return failure();
      return emitError() << "head_tail shard dim " << shard.getDim()
                         << " on mesh dim " << meshDim
                         << " is also sharded over mesh dim " << other;
    }
  }
  return success();
}

LayoutAttr LayoutAttr::getNormalized(int64_t rank) const {
  SmallVector<PlacementAttr> placements;
  for (PlacementAttr placement : getPlacements()) {
    auto shard = dyn_cast<ShardAttr>(placement);
    std::optional<int64_t> dim =
        shard ? layout::normalizeDim(shard.getDim(), rank) : std::nullopt;
    // Out-of-range dims are left for the verifier to report.
    if (dim && *dim != shard.getDim())
      placement = ShardAttr::get(getContext(), *dim, shard.getHeadTail());
    placements.push_back(placement);
  }
  return LayoutAttr::get(getContext(), getMesh(), placements);
}

bool LayoutAttr::isFullyReplicated() const {
  return llvm::all_of(getPlacements(),
                      [](PlacementAttr p) { return isa<ReplicateAttr>(p); });
}
