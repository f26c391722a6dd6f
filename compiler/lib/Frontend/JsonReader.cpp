//===- JsonReader.cpp - Checked reads of JSON values ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "JsonReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace dtensor::frontend;

LogicalResult JsonReader::expectKind(const JsonNode &node,
                                     JsonNode::Kind kind) const {
  if (node.kind == kind)
    return success();
  return error(node) << "expected " << JsonNode::describe(kind) << ", got "
                     << node.describe();
}

LogicalResult
JsonReader::checkObject(const JsonNode &node,
                        llvm::ArrayRef<llvm::StringRef> allowed) const {
  if (failed(expectKind(node, JsonNode::Kind::Object)))
    return failure();
  for (const auto &[key, value] : node.members)
    if (!llvm::is_contained(allowed, key))
      return error(value) << "unknown member '" << key << "'; expected one of: "
                          << llvm::join(allowed, ", ");
  return success();
}

const JsonNode *JsonReader::require(const JsonNode &object,
                                    llvm::StringRef key) const {
  if (const JsonNode *member = object.get(key))
    return member;
  error(object) << "missing member '" << key << "'";
  return nullptr;
}

FailureOr<std::string> JsonReader::readString(const JsonNode &node) const {
  if (failed(expectKind(node, JsonNode::Kind::String)))
    return failure();
  return node.string;
}

FailureOr<std::string> JsonReader::readName(const JsonNode &node) const {
  FailureOr<std::string> name = readString(node);
  if (failed(name))
    return failure();
  if (name->empty())
    return error(node) << "expected a non-empty name";
  return name;
}

FailureOr<bool> JsonReader::readBool(const JsonNode &node) const {
  if (failed(expectKind(node, JsonNode::Kind::Bool)))
    return failure();
  return node.boolean;
}

FailureOr<double> JsonReader::readNumber(const JsonNode &node) const {
  if (failed(expectKind(node, JsonNode::Kind::Number)))
    return failure();
  // The JSON parser rejects numbers out of range, so this is finite.
  return node.number;
}

FailureOr<int64_t> JsonReader::readInteger(const JsonNode &node) const {
  if (!node.isInteger())
    return error(node) << "expected an integer, got "
                       << (node.isNumber() ? "a fractional number"
                                           : node.describe());
  return *node.integer;
}

FailureOr<int64_t> JsonReader::readIntegerAtLeast(const JsonNode &node,
                                                  int64_t minimum) const {
  if (!node.isInteger())
    return error(node) << "expected an integer, got " << node.describe();
  if (*node.integer < minimum)
    return error(node) << "expected an integer >= " << minimum << ", got "
                       << *node.integer;
  return *node.integer;
}

FailureOr<SmallVector<int64_t>> JsonReader::readShape(const JsonNode &node,
                                                      int64_t minimum) const {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  SmallVector<int64_t> shape;
  for (const JsonNode &element : node.elements) {
    FailureOr<int64_t> size = readInteger(element);
    if (failed(size))
      return failure();
    if (*size < minimum)
      return error(element)
             << "expected a size of at least " << minimum << ", got " << *size;
    shape.push_back(*size);
  }
  return shape;
}

bool JsonReader::isIdentifier(llvm::StringRef text) {
  return !text.empty() && !llvm::isDigit(text.front()) &&
         llvm::all_of(text,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}
