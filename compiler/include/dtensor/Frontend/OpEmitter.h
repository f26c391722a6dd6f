//===- OpEmitter.h - One model-plan op to global IR -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each op kind of the JSON model plan (docs/model-plan.md) has an
// OpDefinition: how many inputs and outputs it takes and a function that
// builds its global-view IR (linalg, tensor, arith, math on builtin tensors)
// from the input values. The importer checks the op's `inputs`/`outputs`
// against the definition, then hands the emit function an OpEmitter: the
// builder, the op's location, the input values, and typed accessors for the
// op's attributes that report mistakes at the JSON value that holds them.
//
// Every attribute an emit function reads goes through an accessor; after
// emission the importer rejects any member of the op object that nobody read
// (a misspelt attribute is an error, not silently ignored).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_OPEMITTER_H
#define DTENSOR_FRONTEND_OPEMITTER_H

#include "dtensor/Frontend/JsonTree.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <utility>

namespace dtensor::frontend {

/// Turns JSON positions into MLIR file locations of one input file.
class JsonLocator {
public:
  JsonLocator(mlir::MLIRContext *context, llvm::StringRef filename);
  mlir::FileLineColLoc get(const JsonNode &node) const;
  mlir::MLIRContext *getContext() const { return context; }

  /// An error at `node`, its message prefixed with the node's JSON path:
  /// `model.json:12:7: error: $.model.ops[3].dim: ...`.
  mlir::InFlightDiagnostic emitError(const JsonNode &node) const;
  mlir::InFlightDiagnostic emitWarning(const JsonNode &node) const;

private:
  mlir::MLIRContext *context;
  mlir::StringAttr filename;
};

class OpEmitter {
public:
  OpEmitter(mlir::OpBuilder &builder, mlir::Location loc, const JsonNode &op,
            llvm::ArrayRef<mlir::Value> inputs,
            llvm::ArrayRef<const JsonNode *> inputNodes, unsigned numOutputs,
            const JsonLocator &locator);

  mlir::OpBuilder &builder;
  /// NameLoc(module path, file location of the op object).
  mlir::Location loc;

  /// The op's input values (ranked tensors with static shapes), in the
  /// order of its `inputs` list.
  llvm::ArrayRef<mlir::Value> inputs() const { return inputValues; }
  mlir::Value input(unsigned i) const { return inputValues[i]; }
  mlir::RankedTensorType inputType(unsigned i) const;
  /// The name input `i` has in the model (the string of `inputs[i]`).
  llvm::StringRef inputName(unsigned i) const;
  /// How many outputs the op lists (ops with a variable count: `split`).
  unsigned numOutputs() const { return outputCount; }
  /// The op kind (`linear`, ...).
  llvm::StringRef opName() const;

  /// Attribute accessors. Each marks `key` as read. An absent key gives the
  /// default, or an error (naming the key) when there is none; a value of
  /// the wrong kind is an error at that value.
  bool has(llvm::StringRef key);
  mlir::FailureOr<int64_t> getInt(llvm::StringRef key,
                                  std::optional<int64_t> defaultValue = {});
  mlir::FailureOr<double> getNumber(llvm::StringRef key,
                                    std::optional<double> defaultValue = {});
  mlir::FailureOr<bool> getBool(llvm::StringRef key,
                                std::optional<bool> defaultValue = {});
  /// A string that must be one of `choices`.
  mlir::FailureOr<std::string>
  getEnum(llvm::StringRef key, llvm::ArrayRef<llvm::StringRef> choices,
          std::optional<llvm::StringRef> defaultValue = {});
  /// A list of integers; with `allowScalar`, a single integer reads as a
  /// list of one.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getIntList(llvm::StringRef key, bool allowScalar = false,
             std::optional<llvm::ArrayRef<int64_t>> defaultValue = {});
  /// The raw value of `key` (marked as read), or null when absent: for
  /// attributes whose meaning depends on their JSON kind (an int or a list).
  const JsonNode *getNode(llvm::StringRef key);
  /// A tensor dim of rank `rank`: negative values count from the end
  /// (PyTorch); out of range is an error at the value.
  mlir::FailureOr<int64_t> getDim(llvm::StringRef key, int64_t rank,
                                  std::optional<int64_t> defaultValue = {});

  /// Errors at the op object, at input `i` of its `inputs` list, and at the
  /// attribute `key` (the op object when absent). Messages are prefixed with
  /// the JSON path and the op kind.
  mlir::InFlightDiagnostic emitError() const;
  mlir::InFlightDiagnostic emitInputError(unsigned i) const;
  mlir::InFlightDiagnostic emitAttrError(llvm::StringRef key) const;

  /// The members of the op object that some accessor read.
  const llvm::StringSet<> &getReadKeys() const { return readKeys; }

private:
  const JsonNode &op;
  llvm::SmallVector<mlir::Value> inputValues;
  llvm::SmallVector<const JsonNode *> inputNodes;
  unsigned outputCount;
  const JsonLocator &locator;
  llvm::StringSet<> readKeys;
};

/// The JSON kind of an op attribute's value, as docs/model-plan.schema.json
/// types it.
enum class PlanAttrKind {
  Integer,
  Number,
  Boolean,
  /// One of a fixed set of strings.
  String,
  /// A dtype name (`f32`, ...).
  Dtype,
  IntList,
  /// An integer or a list of integers.
  IntOrIntList,
  /// A list of sizes, each an integer or a name of `model.dims`.
  Shape,
};

/// The name of `kind` in the printed op table: `integer`, `number`,
/// `boolean`, `string`, `dtype`, `integer[]`, `integer|integer[]`, `shape`.
llvm::StringRef getPlanAttrKindName(PlanAttrKind kind);

/// One attribute an op kind reads (a member of the op object besides `op`,
/// `inputs`, `output`, `outputs` and `module`).
struct PlanOpAttr {
  llvm::StringRef name;
  PlanAttrKind kind;
  /// Absent is an error.
  bool required = false;
  /// The value taken when it is absent, as JSON text; empty when it is
  /// required or when the default depends on the inputs.
  llvm::StringRef defaultValue = {};
};

/// How the importer calls an op kind, and what the other places that know
/// the plan's ops (the schema, the docs, the exporter and the PyTorch
/// reference) are checked against: this table is their one source.
struct OpDefinition {
  llvm::StringRef name;
  unsigned minInputs;
  unsigned maxInputs;
  /// Outputs it produces; 0 means "as many as the op lists, at least one".
  unsigned numOutputs;
  /// Builds the op; returns one value per output, or failure after emitting
  /// an error.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> (*emit)(OpEmitter &);
  /// The names of its inputs as the docs use them, comma-separated; those
  /// past `minInputs` are optional. A variadic op names one input.
  llvm::StringRef inputNames = {};
  /// Every attribute the emit function reads.
  llvm::ArrayRef<PlanOpAttr> attributes = {};
  /// Its output may be a floating-point tensor (training needs a gradient
  /// rule for it).
  bool floatOutput = false;
  /// A gradient flows through it to a floating-point input; false for ops
  /// whose output does not depend differentiably on an input (factories,
  /// random draws, argmax).
  bool differentiable = false;

  /// `inputNames` split at the commas.
  llvm::SmallVector<llvm::StringRef> getInputNames() const;
  /// The attribute `name`, or null.
  const PlanOpAttr *getAttribute(llvm::StringRef name) const;
};

/// The value of `maxInputs` for an op taking any number of inputs.
inline constexpr unsigned kAnyNumberOfInputs = ~0u;

/// All op kinds, sorted by name.
llvm::ArrayRef<OpDefinition> getOpDefinitions();
/// Other names of op kinds: (alias, op kind).
llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> getOpAliases();
/// The definition of `name` (aliases such as `view` included), or null.
const OpDefinition *lookupOpDefinition(llvm::StringRef name);

/// The op table (names, aliases, inputs, outputs, attributes, floatOutput,
/// differentiable) as JSON, or as the Markdown of
/// docs/model-plan-op-table.md (`dtensor-translate --print-plan-ops`).
void printPlanOpsJson(llvm::raw_ostream &os);
void printPlanOpsMarkdown(llvm::raw_ostream &os);

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_OPEMITTER_H
