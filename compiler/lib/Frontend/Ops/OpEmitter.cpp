//===- OpEmitter.cpp - One model-plan op to global IR ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The locator and the attribute accessors every emitter reads through. A
// wrong value is reported at the value itself with its JSON path; a missing
// attribute or a meaningless one (a dim out of range) names the op kind too.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/OpEmitter.h"

#include "Formatting.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace dtensor::frontend;

//===----------------------------------------------------------------------===//
// JsonLocator
//===----------------------------------------------------------------------===//

JsonLocator::JsonLocator(MLIRContext *context, StringRef filename)
    : context(context), filename(StringAttr::get(context, filename)) {}

FileLineColLoc JsonLocator::get(const JsonNode &node) const {
  return FileLineColLoc::get(filename, node.line, node.column);
}

InFlightDiagnostic JsonLocator::emitError(const JsonNode &node) const {
  InFlightDiagnostic diag = mlir::emitError(get(node));
  diag << node.path << ": ";
  return diag;
}

InFlightDiagnostic JsonLocator::emitWarning(const JsonNode &node) const {
  InFlightDiagnostic diag = mlir::emitWarning(get(node));
  diag << node.path << ": ";
  return diag;
}

//===----------------------------------------------------------------------===//
// OpEmitter
//===----------------------------------------------------------------------===//

OpEmitter::OpEmitter(OpBuilder &builder, Location loc, const JsonNode &op,
                     ArrayRef<Value> inputs,
                     ArrayRef<const JsonNode *> inputNodes, unsigned numOutputs,
                     const JsonLocator &locator)
    : builder(builder), loc(loc), op(op), inputValues(inputs),
      inputNodes(inputNodes), outputCount(numOutputs), locator(locator) {
  assert(inputValues.size() == this->inputNodes.size() &&
         "one JSON node per input");
}

RankedTensorType OpEmitter::inputType(unsigned i) const {
  return cast<RankedTensorType>(inputValues[i].getType());
}

StringRef OpEmitter::inputName(unsigned i) const {
  return inputNodes[i]->string;
}

StringRef OpEmitter::opName() const {
  const JsonNode *kind = op.get("op");
  return kind && kind->isString() ? StringRef(kind->string) : StringRef();
}

/// An error at `node` naming the op kind: `<path> (<kind>): `.
static InFlightDiagnostic emitOpError(const JsonLocator &locator,
                                      const JsonNode &node, StringRef kind) {
  InFlightDiagnostic diag = mlir::emitError(locator.get(node));
  diag << node.path << " (" << kind << "): ";
  return diag;
}

InFlightDiagnostic OpEmitter::emitError() const {
  return emitOpError(locator, op, opName());
}

InFlightDiagnostic OpEmitter::emitInputError(unsigned i) const {
  return emitOpError(locator, *inputNodes[i], opName());
}

InFlightDiagnostic OpEmitter::emitAttrError(StringRef key) const {
  const JsonNode *value = op.get(key);
  return emitOpError(locator, value ? *value : op, opName());
}

//===----------------------------------------------------------------------===//
// Attribute accessors
//===----------------------------------------------------------------------===//

/// What a JSON value is, for "expected X, got Y": numbers that are not
/// integers are shown, since "got a number" would not say what is wrong.
static std::string describeValue(const JsonNode &node) {
  if (node.isNumber() && !node.isInteger()) {
    return "the number " + ops::formatNumber(node.number);
  }
  if (node.isString())
    return "the string \"" + node.string + "\"";
  return node.describe();
}

bool OpEmitter::has(StringRef key) {
  readKeys.insert(key);
  return op.get(key) != nullptr;
}

/// The member `key`, marked as read; null when absent.
static const JsonNode *lookup(const JsonNode &op, llvm::StringSet<> &readKeys,
                              StringRef key) {
  readKeys.insert(key);
  return op.get(key);
}

FailureOr<int64_t> OpEmitter::getInt(StringRef key,
                                     std::optional<int64_t> defaultValue) {
  const JsonNode *value = lookup(op, readKeys, key);
  if (!value) {
    if (defaultValue)
      return *defaultValue;
    return emitError() << "missing attribute '" << key << "'";
  }
  if (!value->isInteger())
    return locator.emitError(*value)
           << "expected an integer, got " << describeValue(*value);
  return *value->integer;
}

FailureOr<double> OpEmitter::getNumber(StringRef key,
                                       std::optional<double> defaultValue) {
  const JsonNode *value = lookup(op, readKeys, key);
  if (!value) {
    if (defaultValue)
      return *defaultValue;
    return emitError() << "missing attribute '" << key << "'";
  }
  if (!value->isNumber())
    return locator.emitError(*value)
           << "expected a number, got " << describeValue(*value);
  return value->number;
}

FailureOr<bool> OpEmitter::getBool(StringRef key,
                                   std::optional<bool> defaultValue) {
  const JsonNode *value = lookup(op, readKeys, key);
  if (!value) {
    if (defaultValue)
      return *defaultValue;
    return emitError() << "missing attribute '" << key << "'";
  }
  if (!value->isBool())
    return locator.emitError(*value)
           << "expected true or false, got " << describeValue(*value);
  return value->boolean;
}

FailureOr<std::string>
OpEmitter::getEnum(StringRef key, ArrayRef<StringRef> choices,
                   std::optional<StringRef> defaultValue) {
  const JsonNode *value = lookup(op, readKeys, key);
  if (!value) {
    if (defaultValue)
      return defaultValue->str();
    return emitError() << "missing attribute '" << key << "'";
  }
  if (value->isString() && llvm::is_contained(choices, value->string))
    return value->string;
  InFlightDiagnostic diag = locator.emitError(*value);
  diag << "expected one of ";
  llvm::interleaveComma(
      choices, diag, [&](StringRef choice) { diag << "\"" << choice << "\""; });
  diag << "; got " << describeValue(*value);
  return diag;
}

FailureOr<SmallVector<int64_t>>
OpEmitter::getIntList(StringRef key, bool allowScalar,
                      std::optional<ArrayRef<int64_t>> defaultValue) {
  const JsonNode *value = lookup(op, readKeys, key);
  if (!value) {
    if (defaultValue)
      return SmallVector<int64_t>(*defaultValue);
    return emitError() << "missing attribute '" << key << "'";
  }
  if (allowScalar && value->isInteger())
    return SmallVector<int64_t>{*value->integer};
  if (!value->isArray())
    return locator.emitError(*value)
           << (allowScalar ? "expected an integer or a list of integers, got "
                           : "expected a list of integers, got ")
           << describeValue(*value);
  SmallVector<int64_t> list;
  for (const JsonNode &element : value->elements) {
    if (!element.isInteger())
      return locator.emitError(element)
             << "expected an integer, got " << describeValue(element);
    list.push_back(*element.integer);
  }
  return list;
}

const JsonNode *OpEmitter::getNode(StringRef key) {
  return lookup(op, readKeys, key);
}

FailureOr<int64_t> OpEmitter::getDim(StringRef key, int64_t rank,
                                     std::optional<int64_t> defaultValue) {
  bool given = op.get(key) != nullptr;
  FailureOr<int64_t> dim = getInt(key, defaultValue);
  if (failed(dim))
    return failure();
  if (*dim >= -rank && *dim < rank)
    return *dim < 0 ? *dim + rank : *dim;
  InFlightDiagnostic diag = emitAttrError(key);
  diag << key << " " << *dim << (given ? "" : " (the default)")
       << " is out of range for a tensor of rank " << rank;
  if (rank == 0)
    diag << ", which has no dims";
  else
    diag << " (expected " << -rank << " to " << rank - 1 << ")";
  return diag;
}
