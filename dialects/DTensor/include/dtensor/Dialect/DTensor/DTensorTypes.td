//===- DTensorTypes.td - dtensor types ---------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_TD
#define DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_TD

include "dtensor/Dialect/DTensor/DTensor.td"
include "mlir/IR/AttrTypeBase.td"

class DTensor_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<DTensor_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def DTensor_FutureType : DTensor_Type<"Future", "future"> {
  let summary = "the pending result of a collective in flight";
  let description = [{
    A handle to one result of a collective issued by `dtensor.start`. The
    tensor it stands for becomes available at the `dtensor.wait` that takes
    the handle; until then the collective may still be communicating.

    ```mlir
    !dtensor.future<tensor<8x64xf32>>
    !dtensor.future<tensor<?x64xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$valueType),
      [{ return $_get(valueType.getContext(), valueType); }]>
  ];
  let assemblyFormat = "`<` $valueType `>`";
}

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_TD
