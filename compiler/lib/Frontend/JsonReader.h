//===- JsonReader.h - Checked reads of JSON values --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one reader of the frontend's JSON (the plan's model and plan
// sections, its entries, its custom-op declarations): each read checks the
// value's kind and reports a mistake as an error at the value's position
// and path (`model.json:12:7: error: $.model.ops[3].op: ...`). Readers of a
// part of the plan derive from it and add that part's own checks.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_JSONREADER_H
#define DTENSOR_COMPILER_FRONTEND_JSONREADER_H

#include "dtensor/Frontend/JsonTree.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace dtensor::frontend {

class JsonReader {
public:
  explicit JsonReader(const JsonLocator &locator) : locator(locator) {}

  const JsonLocator &getLocator() const { return locator; }
  mlir::MLIRContext *getContext() const { return locator.getContext(); }

  /// An error at `node`, prefixed with its path.
  mlir::InFlightDiagnostic error(const JsonNode &node) const {
    return locator.emitError(node);
  }

  /// "expected an array, got a string".
  mlir::LogicalResult expectKind(const JsonNode &node,
                                 JsonNode::Kind kind) const;
  /// `node` must be an object whose members are all in `allowed`.
  mlir::LogicalResult
  checkObject(const JsonNode &node,
              llvm::ArrayRef<llvm::StringRef> allowed) const;
  /// The member `key` of `object`, or an error when it is missing.
  const JsonNode *require(const JsonNode &object, llvm::StringRef key) const;

  mlir::FailureOr<std::string> readString(const JsonNode &node) const;
  /// A non-empty string.
  mlir::FailureOr<std::string> readName(const JsonNode &node) const;
  mlir::FailureOr<bool> readBool(const JsonNode &node) const;
  mlir::FailureOr<double> readNumber(const JsonNode &node) const;
  /// An integer; a number with a fraction or an exponent is "a fractional
  /// number".
  mlir::FailureOr<int64_t> readInteger(const JsonNode &node) const;
  /// An integer of at least `minimum`. Its errors are worded as the
  /// custom-op declarations have always worded them: a number that is not
  /// an integer is "a number", and one too small "expected an integer >=
  /// `minimum`".
  mlir::FailureOr<int64_t> readIntegerAtLeast(const JsonNode &node,
                                              int64_t minimum) const;

  /// An array of integers, each at least `minimum` (a shape).
  mlir::FailureOr<llvm::SmallVector<int64_t>> readShape(const JsonNode &node,
                                                        int64_t minimum) const;

  /// Letters, digits and `_`, not starting with a digit, not empty.
  static bool isIdentifier(llvm::StringRef text);

protected:
  const JsonLocator &locator;
};

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_JSONREADER_H
