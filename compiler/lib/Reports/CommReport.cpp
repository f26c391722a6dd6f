//===- CommReport.cpp - the collectives of a per-rank program ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A compile-time CommDebugMode: per function and, within it, per module (the
// name in an op's location), the collectives called, on which mesh dims, and
// the bytes each rank sends under the model of docs/comm-report.md. Prints a
// text table or JSON to stdout; the IR is not changed.
//
// Collectives are recognised by op class but read through the generic
// Operation interface (tensor operands and results, attributes by name), so
// variadic collectives and collectives nested in regions (loops, async start
// regions) need no special case.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Analysis/ElementBytes.h"
#include "TextTable.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_COMMREPORT
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;

// Attribute names every collective carries (the mesh group and, for
// reductions, the kind), read alike on all five ops.
static constexpr llvm::StringLiteral kMeshAttr = "mesh";
static constexpr llvm::StringLiteral kMeshDimsAttr = "mesh_dims";
static constexpr llvm::StringLiteral kReductionAttr = "reduction";

//===----------------------------------------------------------------------===//
// Byte model
//===----------------------------------------------------------------------===//

/// Elements of a block of `shape`; nullopt when a dim is dynamic.
static std::optional<int64_t> getNumElements(ArrayRef<int64_t> shape) {
  if (ShapedType::isDynamicShape(shape))
    return std::nullopt;
  return ShapedType::getNumElements(shape);
}

/// Bytes of a block of `shape`; nullopt when a dim is dynamic or the
/// element has no fixed width.
static std::optional<int64_t> getBlockBytes(ArrayRef<int64_t> shape,
                                            Type elementType) {
  std::optional<int64_t> elements = getNumElements(shape);
  std::optional<int64_t> elementBytes = getStoredElementBytes(elementType);
  if (!elements || !elementBytes)
    return std::nullopt;
  return *elements * *elementBytes;
}

/// The largest torch.chunk piece of a dim split over `n` ranks: `piece` when
/// the type states it (a static size holds on every rank), else ceil(whole/n).
static int64_t getLargestPiece(int64_t piece, int64_t whole, int64_t n) {
  if (!ShapedType::isDynamic(piece))
    return piece;
  if (ShapedType::isDynamic(whole))
    return ShapedType::kDynamic;
  return llvm::divideCeilSigned(whole, n);
}

/// Bytes each rank sends to turn `input` into `result` (one operand/result
/// pair of `op`) over a group of `n` ranks: a ring of messages of the
/// largest chunk, as implementations pad uneven chunks to it. nullopt when
/// a size the model needs is not static.
static std::optional<int64_t> getPairBytesSent(Operation *op,
                                               RankedTensorType input,
                                               RankedTensorType result,
                                               int64_t n) {
  if (n == 1)
    return 0;
  // Every message of the ring carries one `block`.
  SmallVector<int64_t> block(input.getShape());
  int64_t messages = n - 1;
  if (isa<AllReduceOp>(op)) {
    // A reduce_scatter then an all_gather of the flattened buffer, split
    // into n chunks.
    std::optional<int64_t> elements = getNumElements(input.getShape());
    if (!elements)
      return std::nullopt;
    block = {llvm::divideCeilSigned(*elements, n)};
    messages = 2 * (n - 1);
  } else if (isa<BroadcastOp>(op)) {
    // Pipelined along a chain from the root: every rank but the last
    // forwards the whole tensor once.
    messages = 1;
  } else if (auto gather = dyn_cast<AllGatherOp>(op)) {
    int64_t dim = gather.getGatherDim();
    block[dim] =
        getLargestPiece(input.getDimSize(dim), result.getDimSize(dim), n);
  } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    int64_t dim = scatter.getScatterDim();
    block[dim] =
        getLargestPiece(result.getDimSize(dim), input.getDimSize(dim), n);
  } else if (auto allToAll = dyn_cast<AllToAllOp>(op)) {
    // Each rank keeps one piece of its split dim and sends the others; the
    // concat dim is the rank's shard of the result's.
    int64_t split = allToAll.getSplitDim();
    int64_t concat = allToAll.getConcatDim();
    block[split] =
        getLargestPiece(result.getDimSize(split), input.getDimSize(split), n);
    block[concat] =
        getLargestPiece(input.getDimSize(concat), result.getDimSize(concat), n);
  } else {
    return std::nullopt;
  }
  std::optional<int64_t> blockBytes =
      getBlockBytes(block, input.getElementType());
  if (!blockBytes)
    return std::nullopt;
  return messages * *blockBytes;
}

/// Bytes each rank sends in the collective `op` over `n` ranks, summed over
/// its operand/result pairs (a variadic collective is one call); nullopt
/// when any pair's bytes are not statically known.
static std::optional<int64_t> getBytesSent(Operation *op, int64_t n) {
  auto isRankedTensor = [](Value value) {
    return isa<RankedTensorType>(value.getType());
  };
  SmallVector<Value> inputs(
      llvm::make_filter_range(op->getOperands(), isRankedTensor));
  SmallVector<Value> results(
      llvm::make_filter_range(op->getResults(), isRankedTensor));
  if (inputs.size() != results.size())
    return std::nullopt;
  int64_t total = 0;
  for (auto [input, result] : llvm::zip_equal(inputs, results)) {
    std::optional<int64_t> bytes =
        getPairBytesSent(op, cast<RankedTensorType>(input.getType()),
                         cast<RankedTensorType>(result.getType()), n);
    if (!bytes)
      return std::nullopt;
    total += *bytes;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Module names
//===----------------------------------------------------------------------===//

/// The module name a location carries: the innermost NameLoc along the
/// first path that has one, where a CallSiteLoc's callee comes before its
/// caller and a FusedLoc's parts come in order. Null when there is none.
static StringAttr findModuleName(Location loc) {
  return TypeSwitch<LocationAttr, StringAttr>(loc)
      .Case([](NameLoc named) {
        if (StringAttr inner = findModuleName(named.getChildLoc()))
          return inner;
        return named.getName().empty() ? StringAttr() : named.getName();
      })
      .Case([](CallSiteLoc callSite) {
        if (StringAttr callee = findModuleName(callSite.getCallee()))
          return callee;
        return findModuleName(callSite.getCaller());
      })
      .Case([](FusedLoc fused) {
        for (Location part : fused.getLocations())
          if (StringAttr name = findModuleName(part))
            return name;
        return StringAttr();
      })
      .Case([](OpaqueLoc opaque) {
        return findModuleName(opaque.getFallbackLocation());
      })
      .Default([](LocationAttr) { return StringAttr(); });
}

/// The module `op` belongs to: the name in its location or, failing that,
/// in the location of the nearest enclosing op inside `fn` that has one
/// (a collective in a loop or an async region built by a pass).
static StringAttr getModuleName(Operation *op, Operation *fn) {
  for (Operation *at = op; at && at != fn; at = at->getParentOp())
    if (StringAttr name = findModuleName(at->getLoc()))
      return name;
  return {};
}

//===----------------------------------------------------------------------===//
// Collecting a function's report
//===----------------------------------------------------------------------===//

namespace {
/// Calls and bytes summed over some collective calls.
struct Tally {
  int64_t calls = 0;
  /// Bytes per rank summed over the calls whose bytes are known.
  int64_t knownBytes = 0;
  /// Calls whose bytes are not statically known.
  int64_t unknownCalls = 0;

  void addCall(std::optional<int64_t> bytes) {
    ++calls;
    if (bytes)
      knownBytes += *bytes;
    else
      ++unknownCalls;
  }

  /// Bytes per rank of all the calls, when all are known.
  std::optional<int64_t> getBytes() const {
    if (unknownCalls)
      return std::nullopt;
    return knownBytes;
  }
};

/// The calls of one collective kind on one mesh group with one reduction
/// kind: one row of the report.
struct CollectiveRow {
  OperationName kind;
  FlatSymbolRefAttr mesh;
  DenseI64ArrayAttr meshDims;
  /// Null for kinds without a reduction.
  ReductionKindAttr reduction;
  int64_t groupSize;
  Tally tally;

  StringRef getKindName() const { return kind.stripDialect(); }

  std::optional<StringRef> getReductionName() const {
    if (!reduction)
      return std::nullopt;
    return stringifyReductionKind(reduction.getValue());
  }
};

/// The rows of one function, by module in order of first appearance; a null
/// module name stands for ops without one.
struct FunctionReport {
  StringRef name;
  llvm::MapVector<StringAttr, SmallVector<CollectiveRow, 2>> modules;
  Tally total;
};
} // namespace

/// The report of `fn`: every collective in its body, nested regions
/// included, in program order.
static FunctionReport collectFunction(FunctionOpInterface fn,
                                      SymbolTableCollection &tables) {
  FunctionReport report;
  report.name = fn.getName();
  fn.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    // chunk and mesh_coord are local; a dtensor.start is not a collective,
    // the one inside it is.
    if (!op->hasTrait<Collective>())
      return;
    auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>(kMeshAttr);
    auto meshDims = op->getAttrOfType<DenseI64ArrayAttr>(kMeshDimsAttr);
    MeshOp mesh = meshRef ? lookupMesh(op, meshRef, &tables) : MeshOp();
    // The verifier resolved both when it checked the op.
    assert(mesh && meshDims && "collective without a verified mesh group");
    int64_t groupSize = mesh.getGroupSize(meshDims.asArrayRef());
    auto reduction = op->getAttrOfType<ReductionKindAttr>(kReductionAttr);

    SmallVector<CollectiveRow, 2> &rows = report.modules[getModuleName(op, fn)];
    auto *row = llvm::find_if(rows, [&](const CollectiveRow &candidate) {
      return candidate.kind == op->getName() && candidate.mesh == meshRef &&
             candidate.meshDims == meshDims && candidate.reduction == reduction;
    });
    if (row == rows.end()) {
      rows.push_back(
          {op->getName(), meshRef, meshDims, reduction, groupSize, Tally()});
      row = std::prev(rows.end());
    }
    std::optional<int64_t> bytes = getBytesSent(op, groupSize);
    row->tally.addCall(bytes);
    report.total.addCall(bytes);
  });
  return report;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

/// Placeholder module name of ops whose locations carry none.
static constexpr llvm::StringLiteral kUnnamedModule = "<unnamed>";

static std::string formatMeshDims(DenseI64ArrayAttr meshDims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(meshDims.asArrayRef(), os);
  os << "]";
  return text;
}

/// "3072", or "?" when some call's bytes are not statically known.
static std::string formatRowBytes(const Tally &tally) {
  if (std::optional<int64_t> bytes = tally.getBytes())
    return std::to_string(*bytes);
  return "?";
}

/// "3072", or "3072 + ? (1 call of unknown size)" when some are unknown.
static std::string formatTotalBytes(const Tally &total) {
  if (std::optional<int64_t> bytes = total.getBytes())
    return std::to_string(*bytes);
  std::string text = total.unknownCalls == total.calls
                         ? "?"
                         : std::to_string(total.knownBytes) + " + ?";
  text += " (" + std::to_string(total.unknownCalls) +
          (total.unknownCalls == 1 ? " call" : " calls") + " of unknown size)";
  return text;
}

static void printText(ArrayRef<FunctionReport> reports, raw_ostream &os) {
  for (const FunctionReport &report : reports) {
    os << "func @" << report.name << "\n";
    if (report.modules.empty()) {
      os << "  no collectives\n\n";
      continue;
    }
    std::vector<TextRow> table;
    table.push_back({"module", "collective", "reduction", "mesh", "mesh_dims",
                     "ranks", "calls", "bytes sent per rank"});
    for (const auto &[module, rows] : report.modules) {
      for (const CollectiveRow &row : rows) {
        table.push_back(
            {module ? module.str() : kUnnamedModule.str(),
             row.getKindName().str(),
             row.getReductionName().value_or("-").str(),
             "@" + row.mesh.getValue().str(), formatMeshDims(row.meshDims),
             std::to_string(row.groupSize), std::to_string(row.tally.calls),
             formatRowBytes(row.tally)});
      }
    }
    table.push_back({"total", "", "", "", "", "",
                     std::to_string(report.total.calls),
                     formatTotalBytes(report.total)});
    printTextTable(table, os);
    os << "\n";
  }
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// A number, or null when not statically known.
static llvm::json::Value toJson(std::optional<int64_t> number) {
  if (number)
    return *number;
  return nullptr;
}

/// A string, or null when there is none.
static llvm::json::Value toJson(std::optional<StringRef> text) {
  if (text)
    return *text;
  return nullptr;
}

static void printJsonRow(const CollectiveRow &row, llvm::json::OStream &json) {
  json.object([&] {
    json.attribute("kind", row.getKindName());
    json.attribute("reduction", toJson(row.getReductionName()));
    json.attribute("mesh", row.mesh.getValue());
    json.attribute("mesh_dims", llvm::json::Array(row.meshDims.asArrayRef()));
    json.attribute("group_size", row.groupSize);
    json.attribute("calls", row.tally.calls);
    json.attribute("bytes_per_rank", toJson(row.tally.getBytes()));
  });
}

static void printJsonFunction(const FunctionReport &report,
                              llvm::json::OStream &json) {
  json.object([&] {
    json.attribute("name", report.name);
    json.attributeArray("modules", [&] {
      for (const auto &[module, rows] : report.modules) {
        json.object([&] {
          json.attribute(
              "module",
              toJson(module ? std::optional(module.getValue()) : std::nullopt));
          json.attributeArray("collectives", [&] {
            for (const CollectiveRow &row : rows)
              printJsonRow(row, json);
          });
        });
      }
    });
    json.attributeObject("total", [&] {
      json.attribute("calls", report.total.calls);
      json.attribute("bytes_per_rank", toJson(report.total.getBytes()));
      json.attribute("known_bytes_per_rank", report.total.knownBytes);
      json.attribute("calls_with_unknown_bytes", report.total.unknownCalls);
    });
  });
}

static void printJson(ArrayRef<FunctionReport> reports, raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attributeArray("functions", [&] {
      for (const FunctionReport &report : reports)
        printJsonFunction(report, json);
    });
  });
  os << "\n";
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct CommReport : public dtensor::impl::CommReportBase<CommReport> {
  using Base::Base;

  /// Rejects a bad format where the pipeline is parsed, before any pass
  /// runs.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (format != "text" && format != "json")
      return errorHandler("dtensor-comm-report: format must be text or "
                          "json, not '" +
                          format + "'");
    return success();
  }

  void runOnOperation() override {
    SymbolTableCollection tables;
    std::vector<FunctionReport> reports;
    getOperation()->walk<WalkOrder::PreOrder>([&](FunctionOpInterface fn) {
      if (!fn.isExternal())
        reports.push_back(collectFunction(fn, tables));
      // Everything nested in a function belongs to its report.
      return WalkResult::skip();
    });

    if (json || format == "json")
      printJson(reports, llvm::outs());
    else
      printText(reports, llvm::outs());
    markAllAnalysesPreserved();
  }
};
} // namespace
