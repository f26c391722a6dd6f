//===- DTensorAttrInterfaces.td - attribute interfaces -----*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORATTRINTERFACES_TD
#define DTENSOR_DIALECT_DTENSOR_DTENSORATTRINTERFACES_TD

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//

def DTensor_PlacementAttrInterface : AttrInterface<"PlacementAttr"> {
  let cppNamespace = "::dtensor";
  let description = [{
    How a tensor is laid out along one mesh dim: sharded along a tensor dim,
    replicated, or held as partial values awaiting a reduction.
  }];
  let methods = [
    InterfaceMethod<"The placement in the layout-math representation.",
      "::dtensor::layout::Placement", "getPlacement">
  ];
}

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORATTRINTERFACES_TD
