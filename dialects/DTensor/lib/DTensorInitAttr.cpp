//===- DTensorInitAttr.cpp - weight initializers ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// #dtensor.init: its syntax (the parameters are named by kind, so that a
// reader need not remember which of two numbers is the std) and its checks.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"

#include "mlir/IR/DialectImplementation.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace dtensor;

SmallVector<StringRef, 2> InitAttr::getParameterNames(InitKind kind) {
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return {};
  case InitKind::Constant:
    return {"value"};
  case InitKind::Normal:
    return {"mean", "std"};
  case InitKind::Uniform:
    return {"low", "high"};
  }
  return {};
}

/// A number as a user would write it (`-0.5`, `1`).
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, APFloat firstFloat,
                               APFloat secondFloat) {
  // Parameters are doubles, as in the model plan and the manifest.
  if (&firstFloat.getSemantics() != &APFloat::IEEEdouble() ||
      &secondFloat.getSemantics() != &APFloat::IEEEdouble())
    return emitError() << "parameters must be f64 values";
  double first = firstFloat.convertToDouble();
  double second = secondFloat.convertToDouble();
  SmallVector<StringRef, 2> names = getParameterNames(kind);
  double values[2] = {first, second};
  for (unsigned i = 0; i < 2; ++i) {
    if (i >= names.size()) {
      // Unused parameters are 0, so that equal initializers are one attribute.
      if (values[i] != 0.0)
        return emitError() << "'" << stringifyInitKind(kind) << "' takes "
                           << names.size()
                           << " parameter(s); the others must be 0";
      continue;
    }
    if (!std::isfinite(values[i]))
      return emitError() << "'" << names[i] << "' must be finite";
  }
  if (kind == InitKind::Normal && second < 0)
    return emitError() << "'std' must be >= 0, got " << formatNumber(second);
  if (kind == InitKind::Uniform && first > second)
    return emitError() << "'low' (" << formatNumber(first)
                       << ") must be <= 'high' (" << formatNumber(second)
                       << ")";
  return success();
}

bool InitAttr::isValidFor(Type elementType) const {
  if (isa<FloatType>(elementType))
    return true;
  switch (getKind()) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return true;
  case InitKind::Constant:
    return std::trunc(getParam(0)) == getParam(0);
  default:
    return false;
  }
}

Attribute InitAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown initializer kind '" << keyword
                          << "'; expected zeros, ones, constant, normal or "
                             "uniform";
    return {};
  }
  double values[2] = {0.0, 0.0};
  for (auto [index, name] : llvm::enumerate(getParameterNames(*kind)))
    if (parser.parseComma() || parser.parseKeyword(name) ||
        parser.parseEqual() || parser.parseFloat(values[index]))
      return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, APFloat(values[0]), APFloat(values[1]));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitKind(getKind());
  for (auto [index, name] : llvm::enumerate(getParameterNames(getKind()))) {
    printer << ", " << name << " = ";
    printer.printFloat(index == 0 ? getFirst() : getSecond());
  }
  printer << ">";
}
