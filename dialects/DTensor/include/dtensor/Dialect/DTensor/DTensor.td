//===- DTensor.td - dtensor dialect definition -------------*- tablegen -*-===//
//
// The dtensor dialect: device meshes, placements and the collectives of an
// SPMD program.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_DIALECT_DTENSOR_DTENSOR_TD
#define DTENSOR_DIALECT_DTENSOR_DTENSOR_TD

include "mlir/IR/OpBase.td"

def DTensor_Dialect : Dialect {
  let name = "dtensor";
  let cppNamespace = "::dtensor";
  let summary = "Distributed tensors: meshes, layouts and collectives";
  let description = [{
    The `dtensor` dialect carries PyTorch-DTensor-style distribution through
    an MLIR program.

    At the *global level* a program is written over builtin tensors with
    their global shapes, as if it ran on one device. A module-level
    `dtensor.mesh` names an N-D array of devices; a `#dtensor.layout`
    attribute gives a tensor one placement per mesh dim (`shard<d>`,
    `replicate` or `partial<op>`). `dtensor.distribute` constrains a value to
    a layout and `dtensor.redistribute` changes it.

    At the *local level* (after partitioning) tensor types are per-rank shard
    shapes and communication is explicit: `all_reduce`, `all_gather`,
    `reduce_scatter`, `all_to_all`, `broadcast`, the communication-free
    `chunk`, and `mesh_coord` to query the rank's position in the mesh. Each
    of these acts over a list of mesh dims: the ranks that differ only in
    those coordinates form one group. `all_reduce`, `all_gather` and
    `reduce_scatter` take several tensors at once (one call on the wire), and
    `dtensor.start`/`dtensor.wait` split any collective into its issue and
    its completion, with `!dtensor.future` handles in between, so that
    computation can overlap communication.

    Function arguments and results may carry a layout in the `dtensor.layout`
    attribute; it is verified against the argument's tensor type. After
    sharding propagation, every op producing tensors carries the layouts of
    its results in `dtensor.layouts`, one entry per result (`unit` for a
    result that is not a ranked tensor).

    After partitioning, a function's tensor arguments and results have
    per-rank types; those with a layout also carry their global shape in
    `dtensor.global_shape` (an `array<i64: ...>`), verified against the
    layout and the local type.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the function argument/result attribute holding a layout.
    static constexpr ::llvm::StringLiteral getLayoutAttrName() {
      return ::llvm::StringLiteral("dtensor.layout");
    }
    /// Name of the op attribute holding the layouts of an op's results, one
    /// per result, written by propagation.
    static constexpr ::llvm::StringLiteral getResultLayoutsAttrName() {
      return ::llvm::StringLiteral("dtensor.layouts");
    }
    /// Name of the function argument/result attribute holding the global
    /// shape of a per-rank (partitioned) tensor, written by partitioning.
    static constexpr ::llvm::StringLiteral getGlobalShapeAttrName() {
      return ::llvm::StringLiteral("dtensor.global_shape");
    }

  private:
    /// Registers the attributes; lives with their storage in DTensorAttrs.cpp.
    void registerAttributes();
    /// Registers the types; lives with their storage in DTensorTypes.cpp.
    void registerTypes();

  public:
  }];
}

class DTensor_Op<string mnemonic, list<Trait> traits = []>
    : Op<DTensor_Dialect, mnemonic, traits>;

#endif // DTENSOR_DIALECT_DTENSOR_DTENSOR_TD
