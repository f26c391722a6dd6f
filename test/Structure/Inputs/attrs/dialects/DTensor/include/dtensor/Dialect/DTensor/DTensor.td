//===- DTensor.td - A dialect that names two attributes ----*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
    static constexpr ::llvm::StringLiteral getLayoutAttrName() {
      return ::llvm::StringLiteral("dtensor.layout");
    }
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("dtensor.name");
    }
