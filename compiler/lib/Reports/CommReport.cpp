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

#include "CollectiveFacts.h"
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
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace dtensor {
#define GEN_PASS_DEF_COMMREPORT
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;


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
    CollectiveGroup group = getCollectiveGroup(op, tables);

    SmallVector<CollectiveRow, 2> &rows = report.modules[getModuleName(op, fn)];
    auto *row = llvm::find_if(rows, [&](const CollectiveRow &candidate) {
      return candidate.kind == op->getName() && candidate.mesh == group.mesh &&
             candidate.meshDims == group.meshDims &&
             candidate.reduction == group.reduction;
    });
    if (row == rows.end()) {
      rows.push_back(
          {op->getName(), group.mesh, group.meshDims, group.reduction,
           group.groupSize, Tally()});
      row = std::prev(rows.end());
    }
    std::optional<int64_t> bytes = getBytesSent(op, group.groupSize);
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
