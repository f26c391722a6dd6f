//===- JsonTree.h - JSON values that remember where they were --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A strict JSON (RFC 8259) parser for model plans. Unlike llvm::json, every
// value keeps its line and column in the file and its JSON path
// (`$.model.ops[3].inputs[1]`), so a frontend can point a diagnostic at the
// exact place a user wrote something wrong. Objects keep their members in
// file order; a key written twice in one object is an error.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_JSONTREE_H
#define DTENSOR_FRONTEND_JSONTREE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::frontend {

class JsonNode {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  /// 1-based position of the value's first character.
  unsigned line = 0;
  unsigned column = 0;
  /// `$` for the root, then `.key` (or `["key"]` when the key is not an
  /// identifier) and `[index]` steps.
  std::string path;

  bool boolean = false;
  /// Numbers: the value as a double, and as an integer when the text is an
  /// integer literal (no fraction or exponent) that fits in int64_t.
  double number = 0;
  std::optional<int64_t> integer;
  std::string string;
  std::vector<JsonNode> elements;
  std::vector<std::pair<std::string, JsonNode>> members;

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isInteger() const { return kind == Kind::Number && integer.has_value(); }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// The member `key` of an object, or null when absent (or not an object).
  const JsonNode *get(llvm::StringRef key) const;

  /// "null", "a boolean", "a number", "a string", "an array", "an object".
  static const char *describe(Kind kind);
  const char *describe() const { return describe(kind); }
};

struct JsonParseError {
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

/// Parses one JSON value (with only whitespace around it) from `text`. On
/// failure returns std::nullopt and fills `error`.
std::optional<JsonNode> parseJson(llvm::StringRef text, JsonParseError &error);

/// The path step for member `key` of an object at `parent`.
std::string jsonMemberPath(llvm::StringRef parent, llvm::StringRef key);

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_JSONTREE_H
