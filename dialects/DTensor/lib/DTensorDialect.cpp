//===- DTensorDialect.cpp - dtensor dialect ---------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Dialect/DTensor/DTensorTypes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace dtensor;

#include "dtensor/Dialect/DTensor/DTensorDialect.cpp.inc"

void DTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dtensor/Dialect/DTensor/DTensorOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

/// Verifies `value`, the layout given to `what` #`index` (of type `type`) by
/// the attribute `attrName` on `op`.
static LogicalResult verifyLayoutOf(Operation *op, Type type, Attribute value,
                                    StringRef attrName, StringRef what,
                                    unsigned index) {
  auto layout = dyn_cast<LayoutAttr>(value);
  if (!layout)
    return op->emitOpError() << "'" << attrName << "' on " << what << " #"
                             << index << " must be a #dtensor.layout attribute";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return op->emitOpError() << what << " #" << index
                             << " has a layout but is not a ranked tensor";
  MeshOp mesh = lookupMesh(op, layout.getMesh());
  if (!mesh)
    return op->emitOpError() << "layout of " << what << " #" << index
                             << " refers to " << layout.getMesh()
                             << ", which is not a dtensor.mesh";
  return layout.verifyFor(
      [&] {
        return op->emitOpError() << "layout of " << what << " #" << index
                                 << ": ";
      },
      tensorType, mesh);
}

/// Verifies the `dtensor.global_shape` of a per-rank tensor of `type`: its
/// rank, and, when `layout` is given, the local shape that layout gives every
/// rank (a static dim where all ranks agree, dynamic otherwise).
static LogicalResult verifyGlobalShape(Operation *op, Type type,
                                       Attribute value, LayoutAttr layout,
                                       StringRef what, unsigned index) {
  StringRef name = DTensorDialect::getGlobalShapeAttrName();
  auto shape = dyn_cast<DenseI64ArrayAttr>(value);
  if (!shape)
    return op->emitOpError() << "'" << name << "' on " << what << " #"
                             << index << " must be an array<i64: ...>";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return op->emitOpError() << what << " #" << index
                             << " has a global shape but is not a ranked "
                                "tensor";
  if (static_cast<int64_t>(shape.size()) != tensorType.getRank())
    return op->emitOpError() << "global shape of " << what << " #" << index
                             << " has " << shape.size() << " dims but its "
                             << "type has rank " << tensorType.getRank();
  for (int64_t size : shape.asArrayRef())
    if (size < 0)
      return op->emitOpError() << "global shape of " << what << " #" << index
                               << " has a negative size " << size;
  if (!layout)
    return success();
  MeshOp mesh = lookupMesh(op, layout.getMesh());
  // The layout's own verifier reports a missing mesh or a bad shard dim
  // (an inactive InFlightDiagnostic here would assert when written to).
  if (!mesh || failed(layout.verifyFor(nullptr, tensorType, mesh)))
    return success();
  std::vector<int64_t> local = layout::localShapeType(
      std::vector<int64_t>(shape.asArrayRef().begin(),
                           shape.asArrayRef().end()),
      layout.getNormalized(tensorType.getRank()).getLayoutPlacements(),
      mesh.getLayoutMesh());
  for (auto [dim, size] : llvm::enumerate(local)) {
    int64_t expected =
        size == layout::kDynamic ? ShapedType::kDynamic : size;
    if (tensorType.getDimSize(dim) != expected)
      return op->emitOpError()
             << what << " #" << index << " has type " << tensorType
             << " but its layout gives dim " << dim << " of global size "
             << shape[dim] << " a local size of "
             << (expected == ShapedType::kDynamic ? std::string("?")
                                                  : std::to_string(expected))
             << " on every rank";
  }
  return success();
}

/// Verifies the `dtensor.init` of `what` #`index` (of type `type`): an
/// initializer of a weight argument whose element type can hold its values.
static LogicalResult verifyInit(Operation *op, Type type, Attribute value,
                                StringRef what, unsigned index) {
  StringRef name = DTensorDialect::getInitAttrName();
  auto init = dyn_cast<InitAttr>(value);
  if (!init)
    return op->emitOpError() << "'" << name << "' on " << what << " #" << index
                             << " must be a #dtensor.init attribute";
  auto function = cast<FunctionOpInterface>(op);
  if (what != "argument" ||
      !function.getArgAttr(index, DTensorDialect::getWeightAttrName()))
    return op->emitOpError() << "'" << name << "' on " << what << " #" << index
                             << " needs a weight argument ('"
                             << DTensorDialect::getWeightAttrName() << "')";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return op->emitOpError() << "argument #" << index
                             << " has an initializer but is not a ranked "
                                "tensor";
  if (!init.isValidFor(tensorType.getElementType()))
    return op->emitOpError()
           << "argument #" << index << " of element type "
           << tensorType.getElementType() << " cannot take " << init
           << "; integer weights take zeros, ones or an integral constant";
  return success();
}

/// Verifies the `dtensor.updates` of result #`index` (of type `type`): the
/// index of a state or weight argument of the same type that no other
/// result updates (a weight that a result updates is a trained parameter).
static LogicalResult verifyUpdates(Operation *op, Type type, Attribute value,
                                   StringRef what, unsigned index) {
  StringRef name = DTensorDialect::getUpdatesAttrName();
  auto function = cast<FunctionOpInterface>(op);
  auto arg = dyn_cast<IntegerAttr>(value);
  if (what != "result" || !arg)
    return op->emitOpError() << "'" << name
                             << "' must be an argument index on a result";
  int64_t argIndex = arg.getInt();
  if (argIndex < 0 ||
      argIndex >= static_cast<int64_t>(function.getNumArguments()) ||
      (!function.getArgAttr(argIndex, DTensorDialect::getStateAttrName()) &&
       !function.getArgAttr(argIndex, DTensorDialect::getWeightAttrName())))
    return op->emitOpError()
           << "result #" << index << " updates argument #" << argIndex
           << ", which is not a state argument ('"
           << DTensorDialect::getStateAttrName() << "') or a weight ('"
           << DTensorDialect::getWeightAttrName() << "')";
  // In a per-rank program, the global types (the shards may differ when
  // the layouts do, which the compiler reports with the layouts).
  auto globalType = [&](Type local, DictionaryAttr attrs) -> Type {
    auto tensor = dyn_cast<RankedTensorType>(local);
    auto shape = attrs ? attrs.getAs<DenseI64ArrayAttr>(
                             DTensorDialect::getGlobalShapeAttrName())
                       : DenseI64ArrayAttr();
    if (!tensor || !shape)
      return local;
    return RankedTensorType::get(shape.asArrayRef(), tensor.getElementType());
  };
  Type argType = globalType(function.getArgumentTypes()[argIndex],
                            function.getArgAttrDict(argIndex));
  Type resultType = globalType(type, function.getResultAttrDict(index));
  if (argType != resultType)
    return op->emitOpError()
           << "result #" << index << " of type " << resultType
           << " cannot update argument #" << argIndex << " of type " << argType;
  for (unsigned other = 0; other < index; ++other)
    if (auto earlier = function.getResultAttrOfType<IntegerAttr>(other, name))
      if (earlier.getInt() == argIndex)
        return op->emitOpError() << "results #" << other << " and #" << index
                                 << " both update argument #" << argIndex;
  return success();
}

/// Verifies a dtensor attribute on argument or result `index` of a
/// function-like op: `dtensor.layout` or `dtensor.global_shape`.
static LogicalResult verifyValueAttr(Operation *op, Type type,
                                     NamedAttribute attr, LayoutAttr layout,
                                     StringRef what, unsigned index) {
  if (attr.getName() == DTensorDialect::getGlobalShapeAttrName())
    return verifyGlobalShape(op, type, attr.getValue(), layout, what, index);
  if (attr.getName() == DTensorDialect::getNameAttrName()) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitOpError()
             << "'" << attr.getName().getValue() << "' of " << what << " #"
             << index << " must be a non-empty string";
    return success();
  }
  if (attr.getName() == DTensorDialect::getWeightAttrName()) {
    if (what != "argument" || !isa<UnitAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be a unit attribute on a function argument";
    return success();
  }
  if (attr.getName() == DTensorDialect::getInitAttrName())
    return verifyInit(op, type, attr.getValue(), what, index);
  if (attr.getName() == DTensorDialect::getStateAttrName()) {
    auto function = cast<FunctionOpInterface>(op);
    if (what != "argument" || !isa<UnitAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be a unit attribute on a function argument";
    if (function.getArgAttr(index, DTensorDialect::getWeightAttrName()))
      return op->emitOpError() << "argument #" << index
                               << " cannot be both a weight and state";
    return success();
  }
  if (attr.getName() == DTensorDialect::getUpdatesAttrName())
    return verifyUpdates(op, type, attr.getValue(), what, index);
  if (attr.getName() != DTensorDialect::getLayoutAttrName())
    return op->emitOpError() << "unknown dtensor attribute '"
                             << attr.getName().getValue() << "' on " << what
                             << " #" << index;
  return verifyLayoutOf(op, type, attr.getValue(), attr.getName().getValue(),
                        what, index);
}

/// Verifies the `dtensor.layouts` attribute of `op`: one entry per result, a
/// layout for each ranked-tensor result and a unit for any other result, so
/// that entries stay positional.
static LogicalResult verifyResultLayouts(Operation *op, Attribute value) {
  StringRef name = DTensorDialect::getResultLayoutsAttrName();
  auto layouts = dyn_cast<ArrayAttr>(value);
  if (!layouts)
    return op->emitOpError()
           << "'" << name << "' must be an array with one entry per result";
  if (layouts.size() != op->getNumResults())
    return op->emitOpError()
           << "'" << name << "' has " << layouts.size()
           << " entries but the op has " << op->getNumResults() << " results";
  for (auto [index, entry, result] :
       llvm::enumerate(layouts.getValue(), op->getResults())) {
    if (!isa<RankedTensorType>(result.getType())) {
      if (!isa<UnitAttr>(entry))
        return op->emitOpError()
               << "result #" << index << " is not a ranked tensor, so its "
               << "entry in '" << name << "' must be a unit attribute";
      continue;
    }
    if (failed(verifyLayoutOf(op, result.getType(), entry, name, "result",
                              index)))
      return failure();
  }
  return success();
}

/// Verifies the module attributes of a lowered program: `dtensor.comm_meshes`
/// is an array of mesh symbols, `dtensor.comm_groups` an array of
/// `{mesh = @m, mesh_dims = array<i64: ...>}`.
static LogicalResult verifyCommAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto entries = dyn_cast<ArrayAttr>(attr.getValue());
  if (!isa<ModuleOp>(op) || !entries)
    return op->emitOpError() << "'" << name << "' must be an array on a module";
  bool groups = name == DTensorDialect::getCommGroupsAttrName();
  for (auto [index, entry] : llvm::enumerate(entries)) {
    if (!groups) {
      if (!isa<FlatSymbolRefAttr>(entry))
        return op->emitOpError()
               << "'" << name << "' entry #" << index
               << " must be a mesh symbol reference";
      continue;
    }
    auto dict = dyn_cast<DictionaryAttr>(entry);
    if (!dict || !dict.getAs<FlatSymbolRefAttr>("mesh") ||
        !dict.getAs<DenseI64ArrayAttr>("mesh_dims"))
      return op->emitOpError()
             << "'" << name << "' entry #" << index
             << " must be {mesh = @m, mesh_dims = array<i64: ...>}";
  }
  return success();
}

/// Verifies `dtensor.site` (a non-negative i64 on a collective) and
/// `dtensor.collective_sites` (an array of dictionaries with a `kind` string,
/// on a module).
static LogicalResult verifySiteAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == DTensorDialect::getSiteAttrName()) {
    auto site = dyn_cast<IntegerAttr>(attr.getValue());
    if (!op->hasTrait<Collective>())
      return op->emitOpError() << "'" << name
                               << "' numbers collectives only";
    if (!site || !site.getType().isInteger(64) || site.getInt() < 0)
      return op->emitOpError()
             << "'" << name << "' must be a non-negative i64";
    return success();
  }
  auto entries = dyn_cast<ArrayAttr>(attr.getValue());
  if (!isa<ModuleOp>(op) || !entries)
    return op->emitOpError() << "'" << name << "' must be an array on a module";
  for (auto [index, entry] : llvm::enumerate(entries)) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    if (!dict || !dict.getAs<StringAttr>("kind"))
      return op->emitOpError() << "'" << name << "' entry #" << index
                               << " must be a dictionary with a 'kind' string";
  }
  return success();
}

/// `dtensor.class_index`: {operand = i, classes = C[, ignore_index = v]},
/// operand i an integer tensor of the op.
static LogicalResult verifyClassIndexAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  auto operand = dict ? dict.getAs<IntegerAttr>("operand") : IntegerAttr();
  auto classes = dict ? dict.getAs<IntegerAttr>("classes") : IntegerAttr();
  if (!operand || !classes || llvm::any_of(dict, [](NamedAttribute entry) {
        return !isa<IntegerAttr>(entry.getValue()) ||
               !llvm::is_contained(
                   ArrayRef<StringRef>{"operand", "classes", "ignore_index"},
                   entry.getName().getValue());
      }))
    return op->emitOpError()
           << "'" << name
           << "' must be a dictionary of integers 'operand', 'classes' and "
              "optionally 'ignore_index'";
  int64_t index = operand.getInt();
  if (index < 0 || index >= static_cast<int64_t>(op->getNumOperands()))
    return op->emitOpError()
           << "'" << name << "' names operand " << index << " of an op with "
           << op->getNumOperands() << " operand(s)";
  auto type = dyn_cast<ShapedType>(op->getOperand(index).getType());
  if (!type || !type.getElementType().isSignlessInteger())
    return op->emitOpError() << "'" << name << "' names operand " << index
                             << ", which is not a tensor of integers";
  if (classes.getInt() < 0)
    return op->emitOpError() << "'" << name << "' has " << classes.getInt()
                             << " classes; expected at least 0";
  return success();
}

LogicalResult DTensorDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == getResultLayoutsAttrName())
    return verifyResultLayouts(op, attr.getValue());
  if (attr.getName() == getSiteAttrName() ||
      attr.getName() == getCollectiveSitesAttrName())
    return verifySiteAttr(op, attr);
  if (attr.getName() == getCommGroupsAttrName() ||
      attr.getName() == getCommMeshesAttrName())
    return verifyCommAttr(op, attr);
  if (attr.getName() == getCustomOpsAttrName()) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !names ||
        !llvm::all_of(names, llvm::IsaPred<StringAttr>))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be a list of strings on a module";
    return success();
  }
  if (attr.getName() == getTrainingAttrName()) {
    // Its keys are checked by --dtensor-build-train-step, which reads them.
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be a dictionary on a module";
    return success();
  }
  if (attr.getName() == getShiftAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() == getClassIndexAttrName())
    return verifyClassIndexAttr(op, attr);
  if (attr.getName() == getRotateMethodAttrName()) {
    auto method = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !method ||
        (method.getValue() != "allgather" && method.getValue() != "alltoall"))
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be \"allgather\" or \"alltoall\" on a module";
    return success();
  }
  if (attr.getName() == getDefaultEntryAttrName()) {
    auto module = dyn_cast<ModuleOp>(op);
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!module || !name)
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be a string attribute of a module";
    auto entry = module.lookupSymbol<FunctionOpInterface>(name);
    if (!entry || entry.isExternal() || SymbolTable::getSymbolVisibility(entry) !=
                                            SymbolTable::Visibility::Public)
      return op->emitOpError()
             << "'" << attr.getName().getValue() << "' names @"
             << name.getValue() << ", which is not a public function with a "
             << "body";
    return success();
  }
  // Any other dtensor attribute on an op would be ignored.
  return op->emitOpError()
         << "'" << attr.getName().getValue()
         << "' is not an operation attribute; the layouts of an op's results "
            "belong in '"
         << getResultLayoutsAttrName()
         << "', a function argument's or result's in its '"
         << getLayoutAttrName() << "'";
}

// MLIR verifies argument and result attributes of function-like ops only.

LogicalResult DTensorDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  auto function = cast<FunctionOpInterface>(op);
  return verifyValueAttr(
      op, function.getArgumentTypes()[argIndex], attr,
      function.getArgAttrOfType<LayoutAttr>(argIndex, getLayoutAttrName()),
      "argument", argIndex);
}

LogicalResult DTensorDialect::verifyRegionResultAttribute(
    Operation *op, unsigned, unsigned resultIndex, NamedAttribute attr) {
  auto function = cast<FunctionOpInterface>(op);
  return verifyValueAttr(
      op, function.getResultTypes()[resultIndex], attr,
      function.getResultAttrOfType<LayoutAttr>(resultIndex,
                                               getLayoutAttrName()),
      "result", resultIndex);
}
