//===- DTensor.td - dtensor dialect definition -------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
    `dtensor.write_rows`, at both levels, writes rows of new values into a
    cache (a KV cache) at a slot and a position per row; only its trailing
    dims may be sharded.

    At the *local level* (after partitioning) tensor types are per-rank shard
    shapes and communication is explicit: `all_reduce`, `all_gather`,
    `reduce_scatter`, `all_to_all`, `broadcast`, `shift` (a ring step to the
    next rank), the communication-free `chunk`, and `mesh_coord` to query the
    rank's position in the mesh. Each of these acts over a list of mesh dims:
    the ranks that differ only in those coordinates form one group.
    `all_reduce`, `all_gather`, `reduce_scatter` and `shift` take several
    tensors at once (one call on the wire), and `dtensor.start`/`dtensor.wait`
    split any collective into its issue and its completion, with
    `!dtensor.future` handles in between, so that
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

    `dtensor.name` (a string) names a function argument or result in the
    compiled artifact: the name a host binds inputs and fetches outputs by
    (default: `arg<i>` / `result<i>`). `dtensor.weight` (a unit attribute)
    marks an argument as a weight, loaded from a weights file by its name,
    rather than an input. `dtensor.init` (a `#dtensor.init`) gives a weight
    argument the values it takes when no weights file provides it.

    `dtensor.state` (a unit attribute) marks an argument as state: a tensor
    that lives across steps of the compiled program (a KV cache), zeros
    after loading, shared by every entry function that takes it by its
    `dtensor.name`. `dtensor.updates = <i64 index>` on a result makes it the
    new value of that state argument (same type; at most one result per
    state): the compiled entry writes it into the state's buffer, in place
    where it can, instead of returning it.

    After lowering to code, the module lists the communication groups its
    calls use in `dtensor.comm_groups` (an array of `{mesh = @m, mesh_dims =
    array<i64: ...>}` dictionaries; a group's id is its position) and the
    meshes in `dtensor.comm_meshes` (an array of mesh symbols; a mesh's id
    is its position).

    `--dtensor-number-collective-sites` numbers the collectives of a
    per-rank program: each carries its number in `dtensor.site` (an `i64`),
    and the module lists what the compiler knows of each in
    `dtensor.collective_sites` (an array of dictionaries, site `i` at
    position `i`, each with at least a `kind` string). The code generator
    passes a collective's number to the runtime, whose trace attributes each
    call to its site.
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
    /// Name of the function argument/result attribute naming it in the
    /// compiled artifact.
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("dtensor.name");
    }
    /// Name of the unit argument attribute marking a weight.
    static constexpr ::llvm::StringLiteral getWeightAttrName() {
      return ::llvm::StringLiteral("dtensor.weight");
    }
    /// Name of the unit argument attribute marking state (a tensor that
    /// lives across steps, e.g. a KV cache), and of the result attribute
    /// naming the state argument a result is the new value of. A result
    /// may also update a weight: the weight is then a parameter that the
    /// entry trains in place (docs/training.md).
    static constexpr ::llvm::StringLiteral getStateAttrName() {
      return ::llvm::StringLiteral("dtensor.state");
    }
    static constexpr ::llvm::StringLiteral getUpdatesAttrName() {
      return ::llvm::StringLiteral("dtensor.updates");
    }
    /// Name of the module attribute holding a training plan (the loss, the
    /// optimizer and its groups, the schedule, clipping and accumulation:
    /// docs/training.md), which --dtensor-build-train-step turns into the
    /// entries `train_step` and `eval_step`.
    static constexpr ::llvm::StringLiteral getTrainingAttrName() {
      return ::llvm::StringLiteral("dtensor.training");
    }
    /// Name of the module attribute naming the entry function a program
    /// runs when its caller names none (of several public functions).
    static constexpr ::llvm::StringLiteral getDefaultEntryAttrName() {
      return ::llvm::StringLiteral("dtensor.default_entry");
    }
    /// Name of the argument attribute holding a weight's initializer.
    static constexpr ::llvm::StringLiteral getInitAttrName() {
      return ::llvm::StringLiteral("dtensor.init");
    }
    /// Module attributes of a lowered program: its communication groups and
    /// meshes, by id.
    static constexpr ::llvm::StringLiteral getCommGroupsAttrName() {
      return ::llvm::StringLiteral("dtensor.comm_groups");
    }
    static constexpr ::llvm::StringLiteral getCommMeshesAttrName() {
      return ::llvm::StringLiteral("dtensor.comm_meshes");
    }
    /// Module attribute of a lowered program: the names of the custom ops
    /// its dtensor.custom_call ops name, by id (sorted).
    static constexpr ::llvm::StringLiteral getCustomOpsAttrName() {
      return ::llvm::StringLiteral("dtensor.custom_ops");
    }
    /// Name of the op attribute numbering a collective (its site), and of
    /// the module attribute describing the sites, by number.
    static constexpr ::llvm::StringLiteral getSiteAttrName() {
      return ::llvm::StringLiteral("dtensor.site");
    }
    static constexpr ::llvm::StringLiteral getCollectiveSitesAttrName() {
      return ::llvm::StringLiteral("dtensor.collective_sites");
    }
    /// Module attribute: how attention over a sequence-sharded key/value
    /// moves the blocks ("allgather" or "alltoall", the model plan's
    /// context_parallel.rotate_method); without it the cost model of
    /// --dtensor-ring-attention chooses.
    static constexpr ::llvm::StringLiteral getRotateMethodAttrName() {
      return ::llvm::StringLiteral("dtensor.rotate_method");
    }
    /// Unit attribute of an op whose result only shifts the values it is
    /// used with, leaving the function unchanged (the row max of a softmax
    /// or log-sum-exp): its gradient is zero, so --dtensor-differentiate
    /// passes none through it.
    static constexpr ::llvm::StringLiteral getShiftAttrName() {
      return ::llvm::StringLiteral("dtensor.shift");
    }
    /// Dictionary attribute of an op that reads an integer operand as class
    /// indices (a cross-entropy's targets): `operand` (its position),
    /// `classes` (the class count) and optionally `ignore_index` (a value
    /// standing for no class). A value outside [0, classes) other than
    /// ignore_index is a wrong input that PyTorch refuses; the driver lists
    /// such operands for the runtime to check (index_bounds).
    static constexpr ::llvm::StringLiteral getClassIndexAttrName() {
      return ::llvm::StringLiteral("dtensor.class_index");
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
