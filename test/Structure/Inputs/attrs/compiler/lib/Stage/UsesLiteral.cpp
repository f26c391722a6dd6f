//===- UsesLiteral.cpp - Spells a dialect attribute's name ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A comment may say "dtensor.layout".
auto layout = op->getAttr("dtensor.layout");
auto other = op->getAttr("dtensor.not_the_dialects");
auto name = DTensorDialect::getNameAttrName();
