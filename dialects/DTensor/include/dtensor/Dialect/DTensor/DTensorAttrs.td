//===- DTensorAttrs.td - placements and layouts ------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_TD
#define DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_TD

include "dtensor/Dialect/DTensor/DTensor.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "dtensor/Dialect/DTensor/DTensorAttrInterfaces.td"

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

def DTensor_ReductionKind : I32EnumAttr<"ReductionKind",
    "how partial values combine into the global value", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Avg", 1, "avg">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">
    ]> {
  let cppNamespace = "::dtensor";
}

//===----------------------------------------------------------------------===//
// Initializer kinds
//===----------------------------------------------------------------------===//

def DTensor_InitKind : I32EnumAttr<"InitKind",
    "how a weight's initial values are made", [
      I32EnumAttrCase<"Zeros", 0, "zeros">,
      I32EnumAttrCase<"Ones", 1, "ones">,
      I32EnumAttrCase<"Constant", 2, "constant">,
      I32EnumAttrCase<"Normal", 3, "normal">,
      I32EnumAttrCase<"Uniform", 4, "uniform">
    ]> {
  let cppNamespace = "::dtensor";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class DTensor_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<DTensor_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def DTensor_ShardAttr : DTensor_Attr<"Shard", "shard",
    [DeclareAttrInterfaceMethods<DTensor_PlacementAttrInterface>]> {
  let summary = "the tensor dim `dim` is split across the mesh dim";
  let description = [{
    Splits tensor dim `dim` like `torch.chunk`: with N elements over n ranks
    the chunk size is c = ceil(N/n), rank r holds [r*c, min(N, (r+1)*c)), and
    trailing ranks may hold fewer elements or none. A negative `dim` counts
    from the last dim, as in PyTorch. Canonicalization rewrites it to the
    non-negative dim in `dtensor.distribute` and `dtensor.redistribute`;
    layouts on function arguments and results keep their spelling.

    With `head_tail` the dim is split for causal load balancing (context
    parallelism's head-tail split): it is cut into 2n `torch.chunk` pieces
    and rank r holds pieces r and 2n-1-r, the first followed by the second,
    so that the ranks holding early and late queries of a causal attention
    get similar work. Such a dim may be sharded over no other mesh dim.

    ```mlir
    #dtensor.shard<0>
    #dtensor.shard<-1>
    #dtensor.shard<1, head_tail>
    ```
  }];
  let parameters = (ins "int64_t":$dim,
                        DefaultValuedParameter<"bool", "false">:$headTail);
  let builders = [
    AttrBuilder<(ins "int64_t":$dim), [{
      return $_get($_ctxt, dim, false);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
}

def DTensor_ReplicateAttr : DTensor_Attr<"Replicate", "replicate",
    [DeclareAttrInterfaceMethods<DTensor_PlacementAttrInterface>]> {
  let summary = "every rank along the mesh dim holds the whole tensor";
  let description = [{
    ```mlir
    #dtensor.replicate
    ```
  }];
}

def DTensor_PartialAttr : DTensor_Attr<"Partial", "partial",
    [DeclareAttrInterfaceMethods<DTensor_PlacementAttrInterface>]> {
  let summary = "ranks along the mesh dim hold partial values";
  let description = [{
    Each rank holds a tensor of the global shape; the global value is the
    reduction (`sum`, `avg`, `max` or `min`) of the ranks' values along the
    mesh dim.

    ```mlir
    #dtensor.partial<sum>
    #dtensor.partial<max>
    ```
  }];
  let parameters = (ins EnumParameter<DTensor_ReductionKind>:$kind);
  let assemblyFormat = "`<` $kind `>`";
}

def DTensor_LayoutAttr : DTensor_Attr<"Layout", "layout"> {
  let summary = "a mesh and one placement per mesh dim";
  let description = [{
    The distribution of a tensor over a device mesh, like DTensor's
    `DTensorSpec`: the mesh symbol and, for each mesh dim in order, a
    placement written without the `#dtensor.` prefix.

    ```mlir
    #dtensor.layout<@mesh, [shard<0>, replicate]>
    #dtensor.layout<@tp, [partial<sum>]>
    ```

    Several mesh dims may shard the same tensor dim; the tensor dim is then
    split over the mesh dims in mesh-dim order (mesh dim 0 outermost).
    The layout is checked against a tensor and a mesh where it is used: the
    number of placements must equal the mesh rank, every shard dim must
    lie in the tensor's rank, and a `head_tail` shard dim must be sharded
    over no other mesh dim.
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        ArrayRefParameter<"PlacementAttr">:$placements);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The placements in the layout-math representation, one per mesh dim.
    std::vector<::dtensor::layout::Placement> getLayoutPlacements() const;

    /// Checks this layout against a tensor of `type` on `mesh`.
    ::llvm::LogicalResult
    verifyFor(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
              ::mlir::ShapedType type, MeshOp mesh) const;

    /// This layout with negative shard dims counted from the end of a
    /// `rank`-D tensor. Dims must already be in range.
    LayoutAttr getNormalized(int64_t rank) const;

    /// True when no placement is a shard or a partial.
    bool isFullyReplicated() const;
  }];
}

def DTensor_InitAttr : DTensor_Attr<"Init", "init"> {
  let summary = "the initializer of a weight";
  let description = [{
    The values a weight argument (`dtensor.weight`) gets when no weights file
    provides it, as the function argument attribute `dtensor.init`. The kind
    takes up to two parameters, named by kind:

    ```mlir
    #dtensor.init<zeros>
    #dtensor.init<ones>
    #dtensor.init<constant, value = 0.5>
    #dtensor.init<normal, mean = 0.0, std = 0.02>    // std >= 0
    #dtensor.init<uniform, low = -0.1, high = 0.1>   // low <= high
    ```

    Parameters are finite; those a kind does not take are 0. Random values
    depend only on the seed and each element's position in the global
    tensor, so every sharding gives the same weight. An integer weight takes
    `zeros`, `ones` or an integral `constant`.
  }];
  let parameters = (ins EnumParameter<DTensor_InitKind>:$kind,
                        APFloatParameter<"the first parameter">:$first,
                        APFloatParameter<"the second parameter">:$second);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "InitKind":$kind, "double":$first, "double":$second), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(first),
                   ::llvm::APFloat(second));
    }]>
  ];
  let extraClassDeclaration = [{
    /// Parameter `index` (0 or 1) as a double; unused ones are 0.
    double getParam(unsigned index) const {
      return (index == 0 ? getFirst() : getSecond()).convertToDouble();
    }

    /// The names of the kind's parameters (none, one or two).
    static ::llvm::SmallVector<::llvm::StringRef, 2>
    getParameterNames(InitKind kind);

    /// Whether an element of `type` can hold every value this makes.
    bool isValidFor(::mlir::Type elementType) const;
  }];
}

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_TD
