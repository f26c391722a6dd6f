//===- DTensorOps.cpp - dtensor operations ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionShapes.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dtensor;

MeshOp dtensor::lookupMesh(Operation *from, FlatSymbolRefAttr symbol,
                           SymbolTableCollection *tables) {
  if (tables)
    return tables->lookupNearestSymbolFrom<MeshOp>(from, symbol);
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, symbol);
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("needs at least one mesh dim");
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size <= 0)
      return emitOpError() << "mesh dim " << dim << " has size " << size
                           << "; sizes must be positive";

  if (std::optional<ArrayAttr> names = getDimNames()) {
    if (static_cast<int64_t>(names->size()) != getRank())
      return emitOpError() << "has " << names->size() << " dim names for "
                           << getRank() << " mesh dims";
    llvm::SmallDenseSet<StringRef> seen;
    for (StringAttr name : names->getAsRange<StringAttr>()) {
      if (name.getValue().empty())
        return emitOpError("dim names must not be empty");
      if (!seen.insert(name.getValue()).second)
        return emitOpError()
               << "dim name '" << name.getValue() << "' is used twice";
    }
  }

  int64_t numDevices = 1;
  for (int64_t size : shape)
    if (llvm::MulOverflow(numDevices, size, numDevices))
      return emitOpError("has more devices than a 64-bit integer can count");

  if (std::optional<ArrayRef<int64_t>> ids = getDeviceIds()) {
    if (static_cast<int64_t>(ids->size()) != numDevices)
      return emitOpError() << "lists " << ids->size() << " device ids for "
                           << numDevices << " mesh positions";
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t id : *ids) {
      if (id < 0 || id >= numDevices)
        return emitOpError() << "device id " << id << " is out of range [0, "
                             << numDevices << ")";
      if (!seen.insert(id).second)
        return emitOpError() << "device id " << id << " appears twice";
    }
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  // The verifier rejects meshes whose device count overflows.
  int64_t numDevices = 1;
  for (int64_t size : getShape())
    numDevices *= size;
  return numDevices;
}

int64_t MeshOp::getGroupSize(ArrayRef<int64_t> meshDims) {
  int64_t groupSize = 1;
  for (int64_t meshDim : meshDims)
    groupSize *= getShape()[meshDim];
  return groupSize;
}

layout::Mesh MeshOp::getLayoutMesh() {
  std::vector<int64_t> ids;
  if (std::optional<ArrayRef<int64_t>> deviceIds = getDeviceIds())
    ids.assign(deviceIds->begin(), deviceIds->end());
  return layout::Mesh(
      std::vector<int64_t>(getShape().begin(), getShape().end()),
      std::move(ids));
}

//===----------------------------------------------------------------------===//
// Global-level ops
//===----------------------------------------------------------------------===//

/// Resolves the mesh of `layout` and checks the layout against `type`.
static LogicalResult verifyLayoutUse(Operation *op, StringRef what,
                                     LayoutAttr layout, ShapedType type,
                                     SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, layout.getMesh(), &tables);
  if (!mesh)
    return op->emitOpError() << what << " refers to " << layout.getMesh()
                             << ", which is not a dtensor.mesh";
  return layout.verifyFor([&] { return op->emitOpError() << what << " "; },
                          type, mesh);
}

/// Checks `open_mesh_dims` of a distribute or to_layout: distinct mesh dims
/// of `layout`, in increasing order.
static LogicalResult verifyOpenMeshDims(Operation *op, LayoutAttr layout,
                                        std::optional<ArrayRef<int64_t>> open) {
  if (!open)
    return success();
  int64_t meshRank = layout.getPlacements().size();
  for (auto [index, dim] : llvm::enumerate(*open)) {
    if (dim < 0 || dim >= meshRank)
      return op->emitOpError()
             << "open mesh dim " << dim << " is out of range for a layout of "
             << meshRank << " mesh dim(s)";
    if (index > 0 && dim <= (*open)[index - 1])
      return op->emitOpError()
             << "open mesh dims must be distinct and increasing";
  }
  return success();
}

LogicalResult DistributeOp::verify() {
  return verifyOpenMeshDims(*this, getLayout(), getOpenMeshDims());
}

LogicalResult ToLayoutOp::verify() {
  return verifyOpenMeshDims(*this, getLayout(), getOpenMeshDims());
}

LogicalResult DistributeOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayoutUse(*this, "layout", getLayout(), getType(), tables);
}

/// Rewrites `layout` with non-negative shard dims; true when it changed.
static bool normalizeInPlace(Operation *op, StringRef name, LayoutAttr layout,
                             int64_t rank) {
  LayoutAttr normalized = layout.getNormalized(rank);
  if (normalized == layout)
    return false;
  op->setAttr(name, normalized);
  return true;
}

OpFoldResult DistributeOp::fold(FoldAdaptor) {
  // The annotation itself never folds away; only its spelling is normalised.
  if (normalizeInPlace(*this, getLayoutAttrName(), getLayout(),
                       getType().getRank()))
    return getResult();
  return {};
}

LogicalResult ToLayoutOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayoutUse(*this, "layout", getLayout(), getType(), tables);
}

OpFoldResult ToLayoutOp::fold(FoldAdaptor) {
  // A request for a layout, kept until propagation resolves it.
  if (normalizeInPlace(*this, getLayoutAttrName(), getLayout(),
                       getType().getRank()))
    return getResult();
  return {};
}

LogicalResult RedistributeOp::verify() {
  if (getSource().getMesh() != getTarget().getMesh())
    return emitOpError() << "source layout is on " << getSource().getMesh()
                         << " but target layout is on " << getTarget().getMesh()
                         << "; both must use the same mesh";
  return success();
}

LogicalResult RedistributeOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (failed(verifyLayoutUse(*this, "source layout", getSource(), getType(),
                             tables)))
    return failure();
  return verifyLayoutUse(*this, "target layout", getTarget(), getType(),
                         tables);
}

OpFoldResult RedistributeOp::fold(FoldAdaptor) {
  int64_t rank = getType().getRank();
  bool changed =
      normalizeInPlace(*this, getSourceAttrName(), getSource(), rank);
  changed |= normalizeInPlace(*this, getTargetAttrName(), getTarget(), rank);
  if (getSource() == getTarget())
    return getInput();
  return changed ? getResult() : OpFoldResult();
}

//===----------------------------------------------------------------------===//
// Ops of both levels
//===----------------------------------------------------------------------===//

/// True when two dim sizes may be equal: equal, or either one dynamic.
static bool compatibleSizes(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks a row index operand of write_rows: a 1-D tensor of i32 or i64
/// with one element per row of `values`.
static LogicalResult verifyRowIndices(WriteRowsOp op, StringRef name,
                                      RankedTensorType type,
                                      RankedTensorType values) {
  if (type.getRank() != 1)
    return op.emitOpError()
           << name << " must be a 1-D tensor, not rank " << type.getRank();
  Type element = type.getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return op.emitOpError()
           << name << " element type " << element << " is not i32 or i64";
  if (!compatibleSizes(type.getDimSize(0), values.getDimSize(0)))
    return op.emitOpError()
           << name << " has " << type.getDimSize(0)
           << " elements but values has " << values.getDimSize(0)
           << " rows; each row needs one";
  return success();
}

LogicalResult WriteRowsOp::verify() {
  RankedTensorType values = getValues().getType();
  RankedTensorType cache = getCache().getType();
  if (cache.getRank() < 2)
    return emitOpError() << "cache must have rank 2 or more ([slots, "
                            "positions, ...]), not "
                         << cache.getRank();
  if (values.getRank() != cache.getRank())
    return emitOpError() << "values rank " << values.getRank()
                         << " differs from cache rank " << cache.getRank();
  if (values.getElementType() != cache.getElementType())
    return emitOpError() << "values element type " << values.getElementType()
                         << " differs from cache element type "
                         << cache.getElementType();
  for (int64_t dim = 2; dim < cache.getRank(); ++dim)
    if (!compatibleSizes(values.getDimSize(dim), cache.getDimSize(dim)))
      return emitOpError() << "values dim " << dim << " has size "
                           << values.getDimSize(dim) << " but cache dim " << dim
                           << " has size " << cache.getDimSize(dim)
                           << "; the dims after the first two must match";
  int64_t rows = values.getDimSize(1), positions = cache.getDimSize(1);
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(positions) &&
      rows > positions)
    return emitOpError() << "writes " << rows
                         << " consecutive positions per row into a cache of "
                         << positions << " positions";
  if (failed(verifyRowIndices(*this, "slots", getSlots().getType(), values)))
    return failure();
  return verifyRowIndices(*this, "positions", getPositions().getType(), values);
}

LogicalResult AttentionOp::verify() {
  using namespace attention_shapes;
  Operand query{"query", getQuery(), getQueryDims()},
      key{"key", getKey(), getKeyDims()},
      value{"value", getValue(), getValueDims()},
      init{"init", getInit(), getResultDims()};
  if (getResult().getType() != getInit().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from init type " << getInit().getType();
  Type element = getQuery().getType().getElementType();
  if (failed(verifyOperandTypes(*this, {query, key, value, init}, element)))
    return failure();
  FailureOr<Sizes> sizes =
      verifyShapes(*this, query, key, value, init,
                   /*sameBatch=*/!getRows(), " (without rows)", "result");
  if (failed(sizes) ||
      failed(verifyBatchIndices(*this, "rows", getRows(), sizes->batch)) ||
      failed(
          verifyBatchIndices(*this, "positions", getPositions(), sizes->batch)))
    return failure();
  if (getPositions() && !getCausal())
    return emitOpError() << "positions need causal";
  int64_t batch = sizes->batch, heads = sizes->heads, queries = sizes->queries;
  if (Value lseInit = getLogSumExpInit()) {
    auto type = cast<RankedTensorType>(lseInit.getType());
    if (type.getRank() != 3 || type.getElementType() != element ||
        differ(type.getDimSize(0), batch) ||
        differ(type.getDimSize(1), heads) ||
        differ(type.getDimSize(2), queries))
      return emitOpError() << "log_sum_exp must be [B, H, L] in logical "
                              "order, of the query's element type";
    if (!getLogSumExp() || getLogSumExp().getType() != type)
      return emitOpError() << "the log-sum-exp result must have the type of "
                              "its init";
  } else if (getLogSumExp()) {
    return emitOpError() << "a log-sum-exp result needs a log_sum_exp init";
  }
  if (getAccumulate() && !getLogSumExpInit())
    return emitOpError() << "accumulate needs a log_sum_exp init";
  return verifyMask(*this, getMask(), *sizes, element);
}

//===----------------------------------------------------------------------===//
// Local-level ops
//===----------------------------------------------------------------------===//

LogicalResult dtensor::detail::verifyMeshDimList(Operation *op,
                                                 ArrayRef<int64_t> meshDims) {
  if (meshDims.empty())
    return op->emitOpError("needs at least one mesh dim");
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t meshDim : meshDims) {
    if (meshDim < 0)
      return op->emitOpError() << "mesh dim " << meshDim << " is negative";
    if (!seen.insert(meshDim).second)
      return op->emitOpError() << "mesh dim " << meshDim << " is listed twice";
  }
  return success();
}

template <typename OpT>
LogicalResult
dtensor::detail::verifyMeshGroupOp(OpT op, SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, op.getMeshAttr(), &tables);
  if (!mesh)
    return op.emitOpError()
           << op.getMeshAttr() << " does not name a dtensor.mesh";
  ArrayRef<int64_t> meshDims = op.getMeshDims();
  for (int64_t meshDim : meshDims)
    if (meshDim < 0 || meshDim >= mesh.getRank())
      return op.emitOpError()
             << "mesh dim " << meshDim << " is out of range for mesh @"
             << mesh.getSymName() << " with " << mesh.getRank() << " dims";
  // Symbol uses are checked after every op's own verifier, so the mesh's
  // device count is known not to overflow here.
  return op.verifyGroupShapes(mesh, mesh.getGroupSize(meshDims));
}

namespace {
/// How verifier messages name the input and result of one input/result pair:
/// "input"/"result" on single-tensor ops, "input #i"/"result #i" on the
/// variadic collectives.
struct PairNames {
  std::string input;
  std::string result;
  /// The input as the object of "differs from ...".
  std::string theInput;

  static PairNames single() { return {"input", "result", "the input"}; }
  static PairNames indexed(unsigned index) {
    std::string suffix = " #" + std::to_string(index);
    return {"input" + suffix, "result" + suffix, "input" + suffix};
  }
};
} // namespace

/// Checks that `dim`, the value of attribute `name`, names a dim of
/// `tensor`, a rank-`rank` tensor.
static LogicalResult verifyTensorDim(Operation *op, StringRef name, int64_t dim,
                                     int64_t rank, StringRef tensor = "") {
  if (dim < 0 || dim >= rank) {
    InFlightDiagnostic diag = op->emitOpError()
                              << name << " " << dim << " is out of range for ";
    if (!tensor.empty())
      diag << tensor << ", ";
    return diag << "a rank-" << rank << " tensor";
  }
  return success();
}

/// Checks that input and result differ at most in their dim sizes.
static LogicalResult verifySameRankAndElementType(Operation *op,
                                                  RankedTensorType input,
                                                  RankedTensorType result,
                                                  const PairNames &names) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << names.result << " element type " << result.getElementType()
           << " differs from " << names.input << " element type "
           << input.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError()
           << names.result << " rank " << result.getRank() << " differs from "
           << names.input << " rank " << input.getRank();
  return success();
}

/// Checks the shape of a collective's result: dim `grown` (if any) is the
/// input's multiplied by the group size, dim `shrunk` (if any) divided by it,
/// every other dim unchanged. Static sizes claim the same size on every rank,
/// so a split that is uneven across the group needs a dynamic result dim.
static LogicalResult verifyRegroupedShape(Operation *op, RankedTensorType input,
                                          RankedTensorType result,
                                          int64_t groupSize,
                                          std::optional<int64_t> grown,
                                          std::optional<int64_t> shrunk,
                                          const PairNames &names) {
  for (int64_t dim = 0, rank = input.getRank(); dim < rank; ++dim) {
    int64_t in = input.getDimSize(dim);
    int64_t out = result.getDimSize(dim);
    bool bothStatic = !ShapedType::isDynamic(in) && !ShapedType::isDynamic(out);
    if (dim == grown) {
      int64_t gathered;
      if (!ShapedType::isDynamic(in) &&
          llvm::MulOverflow(in, groupSize, gathered))
        return op->emitOpError()
               << names.result << " dim " << dim << " would hold " << in
               << " on each of " << groupSize
               << " ranks, more than a 64-bit size can hold";
      if (bothStatic && out != gathered)
        return op->emitOpError()
               << names.result << " dim " << dim << " has size " << out
               << "; expected " << in * groupSize << " (" << in
               << " on each of " << groupSize << " ranks)";
      continue;
    }
    if (dim == shrunk) {
      if (!bothStatic)
        continue;
      if (in % groupSize != 0)
        return op->emitOpError()
               << names.input << " dim " << dim << " of size " << in
               << " does not split evenly over " << groupSize << " ranks; the "
               << names.result << " dim must be dynamic";
      if (out != in / groupSize)
        return op->emitOpError()
               << names.result << " dim " << dim << " has size " << out
               << "; expected " << in / groupSize << " (" << in
               << " split over " << groupSize << " ranks)";
      continue;
    }
    if (in != out)
      return op->emitOpError()
             << names.result << " dim " << dim << " differs from "
             << names.theInput << "; only the communicated dim may change";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Variadic collectives
//===----------------------------------------------------------------------===//

/// Parses the input types of an all_reduce, which are its result types too.
static ParseResult parseInputTypes(OpAsmParser &parser,
                                   SmallVectorImpl<Type> &inputTypes,
                                   SmallVectorImpl<Type> &resultTypes) {
  if (parser.parseTypeList(inputTypes))
    return failure();
  resultTypes.assign(inputTypes.begin(), inputTypes.end());
  return success();
}

static void printInputTypes(OpAsmPrinter &printer, Operation *,
                            TypeRange inputTypes, TypeRange) {
  llvm::interleaveComma(inputTypes, printer);
}

/// Checks what every variadic collective needs: at least one input, one
/// result per input, and one element type for all of them (one buffer type
/// on the wire).
static LogicalResult verifyInputResultPairs(Operation *op, ValueRange inputs,
                                            ValueRange results) {
  if (inputs.empty())
    return op->emitOpError("needs at least one input");
  if (inputs.size() != results.size())
    return op->emitOpError()
           << "has " << inputs.size() << " inputs but " << results.size()
           << " results; each input gives one result";
  Type elementType =
      cast<RankedTensorType>(inputs[0].getType()).getElementType();
  for (auto [index, input] : llvm::enumerate(inputs.drop_front())) {
    Type other = cast<RankedTensorType>(input.getType()).getElementType();
    if (other != elementType)
      return op->emitOpError()
             << "input #" << index + 1 << " element type " << other
             << " differs from input #0 element type " << elementType
             << "; the inputs of one collective share an element type";
  }
  return success();
}

/// The input/result pairs of a variadic collective, as ranked tensor types.
static auto getTypePairs(ValueRange inputs, ValueRange results) {
  return llvm::map_range(
      llvm::zip_equal(inputs.getTypes(), results.getTypes()), [](auto pair) {
        auto [input, result] = pair;
        return std::make_pair(cast<RankedTensorType>(input),
                              cast<RankedTensorType>(result));
      });
}

/// Checks the rank, element type and the communicated dim of every pair of a
/// gather or scatter along `dim`, the value of attribute `dimName`.
static LogicalResult verifyRegroupedPairs(Operation *op, ValueRange inputs,
                                          ValueRange results, StringRef dimName,
                                          int64_t dim) {
  if (failed(verifyInputResultPairs(op, inputs, results)))
    return failure();
  for (auto [index, pair] : llvm::enumerate(getTypePairs(inputs, results))) {
    auto [input, result] = pair;
    PairNames names = PairNames::indexed(index);
    if (failed(verifySameRankAndElementType(op, input, result, names)) ||
        failed(
            verifyTensorDim(op, dimName, dim, result.getRank(), names.result)))
      return failure();
  }
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyInputResultPairs(*this, getInputs(), getResults())))
    return failure();
  for (auto [index, pair] :
       llvm::enumerate(getTypePairs(getInputs(), getResults()))) {
    auto [input, result] = pair;
    if (input != result)
      return emitOpError() << "result #" << index << " type " << result
                           << " differs from input #" << index << " type "
                           << input;
  }
  return success();
}

LogicalResult AllReduceOp::verifyGroupShapes(MeshOp, int64_t) {
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyRegroupedPairs(*this, getInputs(), getResults(), "gather_dim",
                              getGatherDim());
}

LogicalResult AllGatherOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  for (auto [index, pair] :
       llvm::enumerate(getTypePairs(getInputs(), getResults()))) {
    auto [input, result] = pair;
    if (failed(verifyRegroupedShape(*this, input, result, groupSize,
                                    getGatherDim(), std::nullopt,
                                    PairNames::indexed(index))))
      return failure();
  }
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifyRegroupedPairs(*this, getInputs(), getResults(), "scatter_dim",
                              getScatterDim());
}

LogicalResult ReduceScatterOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  for (auto [index, pair] :
       llvm::enumerate(getTypePairs(getInputs(), getResults()))) {
    auto [input, result] = pair;
    if (failed(verifyRegroupedShape(*this, input, result, groupSize,
                                    std::nullopt, getScatterDim(),
                                    PairNames::indexed(index))))
      return failure();
  }
  return success();
}

LogicalResult ShiftOp::verify() {
  if (failed(verifyRegroupedPairs(*this, getInputs(), getResults(), "dim",
                                  getDim())))
    return failure();
  if (getMeshDims().size() != 1)
    return emitOpError() << "shifts along one mesh dim, not "
                         << getMeshDims().size();
  int64_t dimSize = getDimSizeAttr().getInt(), step = getStepAttr().getInt();
  if (dimSize < 0 || step < 0)
    return emitOpError() << "dim_size " << dimSize << " and step " << step
                         << " must not be negative";
  for (auto [index, pair] :
       llvm::enumerate(getTypePairs(getInputs(), getResults()))) {
    auto [input, result] = pair;
    for (int64_t dim = 0; dim < input.getRank(); ++dim)
      if (dim != static_cast<int64_t>(getDim()) &&
          input.getDimSize(dim) != result.getDimSize(dim))
        return emitOpError() << "result #" << index << " dim " << dim
                             << " differs from input #" << index
                             << "; only the shifted dim may change";
  }
  return success();
}

LogicalResult ShiftOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  // torch.chunk pieces of dim_size over the group: a static size claims the
  // same piece on every rank, so it must be the size of every piece.
  int64_t whole = getDimSizeAttr().getInt();
  int64_t chunk = groupSize > 0 ? (whole + groupSize - 1) / groupSize : 0;
  bool even = groupSize > 0 && whole % groupSize == 0;
  for (auto [index, pair] :
       llvm::enumerate(getTypePairs(getInputs(), getResults()))) {
    auto [input, result] = pair;
    for (auto [name, type] :
         {std::pair<StringRef, RankedTensorType>{"input", input},
          {"result", result}}) {
      int64_t size = type.getDimSize(getDim());
      if (ShapedType::isDynamic(size))
        continue;
      if (!even)
        return emitOpError()
               << name << " #" << index << " dim " << getDim()
               << " is static, but " << whole << " does not split evenly over "
               << groupSize << " ranks; it must be dynamic";
      if (size != chunk)
        return emitOpError()
               << name << " #" << index << " dim " << getDim() << " has size "
               << size << "; expected " << chunk << " (" << whole
               << " split over " << groupSize << " ranks)";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Single-tensor collectives and chunk
//===----------------------------------------------------------------------===//

LogicalResult AllToAllOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType(), PairNames::single())) ||
      failed(verifyTensorDim(*this, "split_dim", getSplitDim(), rank)) ||
      failed(verifyTensorDim(*this, "concat_dim", getConcatDim(), rank)))
    return failure();
  if (getSplitDim() == getConcatDim())
    return emitOpError("split_dim and concat_dim must differ");
  return success();
}

LogicalResult AllToAllOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(), groupSize,
                              getConcatDim(), getSplitDim(),
                              PairNames::single());
}

LogicalResult BroadcastOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  int64_t root = getRootAttr().getInt();
  if (root < 0 || root >= groupSize)
    return emitOpError() << "root " << root
                         << " is out of range for a group of " << groupSize
                         << " ranks";
  return success();
}

LogicalResult ChunkOp::verify() {
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType(), PairNames::single())))
    return failure();
  return verifyTensorDim(*this, "dim", getDim(), getType().getRank());
}

LogicalResult ChunkOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(), groupSize,
                              std::nullopt, getDim(), PairNames::single());
}

LogicalResult MeshCoordOp::verifyGroupShapes(MeshOp, int64_t) {
  return success();
}

LogicalResult MeshCoordOp::verify() {
  if (getCoords().size() != getMeshDims().size())
    return emitOpError() << "has " << getCoords().size() << " results for "
                         << getMeshDims().size() << " mesh dims";
  return success();
}

#define GET_OP_CLASSES
#include "dtensor/Dialect/DTensor/DTensorOps.cpp.inc"
