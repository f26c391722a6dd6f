//===- MemoryAnalysis.cpp - Memory account of per-rank programs -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Reports/MemoryAnalysis.h"

#include "dtensor/Analysis/BufferLastUse.h"
#include "dtensor/Analysis/ElementBytes.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <optional>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::memory;

namespace {
/// Evaluates the index values and dims of one entry on one rank: constants,
/// integer arithmetic, the rank's mesh coordinates and the local shapes of
/// the entry's arguments, which is how partitioning writes the sizes of
/// uneven shards.
class RankEvaluator {
public:
  RankEvaluator(const llvm::StringMap<std::vector<int64_t>> &coords,
                Block &body, const MemoryAnalysis::BufferShapes &arguments)
      : coords(coords), body(body), arguments(arguments) {}

  std::optional<int64_t> value(Value v) {
    auto it = values.find(v);
    if (it != values.end())
      return it->second;
    std::optional<int64_t> result = compute(v);
    values[v] = result;
    return result;
  }

  /// Dim `d` of a tensor or memref value.
  std::optional<int64_t> dim(Value v, unsigned d) {
    auto type = cast<ShapedType>(v.getType());
    if (!type.isDynamicDim(d))
      return type.getDimSize(d);
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body || arg.getArgNumber() >= arguments.size())
        return std::nullopt;
      int64_t size = arguments[arg.getArgNumber()][d];
      return size < 0 ? std::nullopt : std::optional<int64_t>(size);
    }
    Operation *op = v.getDefiningOp();
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      return value(empty.getDynamicSize(d));
    if (isa<memref::AllocOp, memref::AllocaOp>(op))
      return value(
          op->getOperand(cast<MemRefType>(v.getType()).getDynamicDimIndex(d)));
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      return dim(dps.getTiedOpOperand(cast<OpResult>(v))->get(), d);
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
      return expandedDim(expand.getSrc(), expand.getReassociationIndices(),
                         expand.getResultType().getShape(), d);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      return expandedDim(expand.getSrc(), expand.getReassociationIndices(),
                         expand.getResultType().getShape(), d);
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op))
      return collapsedDim(collapse.getSrc(),
                          collapse.getReassociationIndices()[d]);
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      return collapsedDim(collapse.getSrc(),
                          collapse.getReassociationIndices()[d]);
    // This rank's piece of a dim split over mesh dims.
    if (auto chunk = dyn_cast<ChunkOp>(op))
      return d == chunk.getDim()
                 ? piece(op, chunk.getMeshAttr(), chunk.getMeshDims(),
                         dim(chunk.getInput(), d))
                 : dim(chunk.getInput(), d);
    if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
      Value input = scatter.getInputs()[cast<OpResult>(v).getResultNumber()];
      return d == scatter.getScatterDim()
                 ? piece(op, scatter.getMeshAttr(), scatter.getMeshDims(),
                         dim(input, d))
                 : dim(input, d);
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      // The value the dtensor.start's body yields.
      auto start = wait->getOperand(0).getDefiningOp<StartOp>();
      if (!start)
        return std::nullopt;
      Operation *yield = start.getBody().front().getTerminator();
      if (yield->getNumOperands() != 1)
        return std::nullopt;
      return dim(yield->getOperand(0), d);
    }
    // A view or an op that keeps its operand's shape (a collective that
    // reduces in place): an operand of the same type has the same dims.
    for (Value operand : op->getOperands())
      if (operand.getType() == v.getType())
        return dim(operand, d);
    return std::nullopt;
  }

  /// Bytes of a tensor or memref value on this rank.
  std::optional<int64_t> bytes(Value v) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank())
      return std::nullopt;
    int64_t total = getElementBytes(type);
    for (unsigned d = 0; d < type.getRank(); ++d) {
      std::optional<int64_t> size = dim(v, d);
      if (!size)
        return std::nullopt;
      total *= *size;
    }
    return total;
  }

private:
  /// Dim `d` of the expansion of `source` into `shape`: the dynamic dim of
  /// its group takes what the group's static sizes leave of the source dim.
  std::optional<int64_t> expandedDim(Value source,
                                     ArrayRef<ReassociationIndices> groups,
                                     ArrayRef<int64_t> shape, unsigned d) {
    for (auto [sourceDim, group] : llvm::enumerate(groups)) {
      if (!llvm::is_contained(group, static_cast<int64_t>(d)))
        continue;
      std::optional<int64_t> size = dim(source, sourceDim);
      int64_t rest = 1;
      for (int64_t other : group) {
        if (other == static_cast<int64_t>(d))
          continue;
        if (ShapedType::isDynamic(shape[other]))
          return std::nullopt;
        rest *= shape[other];
      }
      if (!size || rest == 0)
        return std::nullopt;
      return *size / rest;
    }
    return std::nullopt;
  }

  /// The product of the dims `group` of `source`.
  std::optional<int64_t> collapsedDim(Value source,
                                      const ReassociationIndices &group) {
    int64_t product = 1;
    for (int64_t sourceDim : group) {
      std::optional<int64_t> size = dim(source, sourceDim);
      if (!size)
        return std::nullopt;
      product *= *size;
    }
    return product;
  }

  /// This rank's piece of `size` split as dtensor.chunk splits it.
  std::optional<int64_t> piece(Operation *op, FlatSymbolRefAttr meshName,
                               ArrayRef<int64_t> meshDims,
                               std::optional<int64_t> size) {
    MeshOp mesh = lookupMesh(op, meshName);
    auto coord = coords.find(meshName.getValue());
    if (!size || !mesh || coord == coords.end())
      return std::nullopt;
    for (int64_t meshDim : meshDims)
      size = layout::chunkRange(*size, mesh.getShape()[meshDim],
                                coord->second[meshDim])
                 .size();
    return size;
  }

  std::optional<int64_t> compute(Value v) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
        return integer.getInt();
    if (auto coord = dyn_cast<MeshCoordOp>(op)) {
      auto it = coords.find(coord.getMesh());
      if (it == coords.end())
        return std::nullopt;
      int64_t meshDim =
          coord.getMeshDims()[cast<OpResult>(v).getResultNumber()];
      return it->second[meshDim];
    }
    // What --dtensor-lower-mesh-coords makes of dtensor.mesh_coord: a call
    // of the runtime with the mesh's id (its position in the module's
    // dtensor.comm_meshes) and the mesh dim.
    if (auto call = dyn_cast<func::CallOp>(op);
        call && call.getCallee() == "dtensor_rt_mesh_coord" &&
        call.getNumOperands() == 2) {
      std::optional<int64_t> meshId = value(call.getOperand(0));
      std::optional<int64_t> meshDim = value(call.getOperand(1));
      auto module = op->getParentOfType<ModuleOp>();
      auto meshes = module->getAttrOfType<ArrayAttr>(
          DTensorDialect::getCommMeshesAttrName());
      if (!meshId || !meshDim || !meshes || *meshId < 0 ||
          *meshId >= static_cast<int64_t>(meshes.size()))
        return std::nullopt;
      auto it =
          coords.find(cast<FlatSymbolRefAttr>(meshes[*meshId]).getValue());
      if (it == coords.end() || *meshDim < 0 ||
          *meshDim >= static_cast<int64_t>(it->second.size()))
        return std::nullopt;
      return it->second[*meshDim];
    }
    // tensor.dim and memref.dim: (source, index).
    if (isa<tensor::DimOp, memref::DimOp>(op)) {
      std::optional<int64_t> index = value(op->getOperand(1));
      return index ? dim(op->getOperand(0), *index) : std::nullopt;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(op))
      return value(op->getOperand(0));
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      std::optional<int64_t> condition = value(select.getCondition());
      if (!condition)
        return std::nullopt;
      return value(*condition ? select.getTrueValue() : select.getFalseValue());
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    std::optional<int64_t> a = value(op->getOperand(0));
    std::optional<int64_t> b = value(op->getOperand(1));
    if (!a || !b)
      return std::nullopt;
    return binary(op, *a, *b);
  }

  static std::optional<int64_t> binary(Operation *op, int64_t a, int64_t b) {
    auto floorDiv = [](int64_t x, int64_t y) {
      return x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
    };
    if (isa<arith::AddIOp>(op))
      return a + b;
    if (isa<arith::SubIOp>(op))
      return a - b;
    if (isa<arith::MulIOp>(op))
      return a * b;
    if (isa<arith::MinSIOp, arith::MinUIOp>(op))
      return std::min(a, b);
    if (isa<arith::MaxSIOp, arith::MaxUIOp>(op))
      return std::max(a, b);
    if (b == 0)
      return std::nullopt;
    if (isa<arith::DivSIOp, arith::DivUIOp>(op))
      return a / b;
    if (isa<arith::FloorDivSIOp>(op))
      return floorDiv(a, b);
    if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
      return -floorDiv(-a, b);
    if (isa<arith::RemSIOp, arith::RemUIOp>(op))
      return a % b;
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      switch (cmp.getPredicate()) {
      case arith::CmpIPredicate::eq:
        return a == b;
      case arith::CmpIPredicate::ne:
        return a != b;
      case arith::CmpIPredicate::slt:
      case arith::CmpIPredicate::ult:
        return a < b;
      case arith::CmpIPredicate::sle:
      case arith::CmpIPredicate::ule:
        return a <= b;
      case arith::CmpIPredicate::sgt:
      case arith::CmpIPredicate::ugt:
        return a > b;
      case arith::CmpIPredicate::sge:
      case arith::CmpIPredicate::uge:
        return a >= b;
      }
    }
    return std::nullopt;
  }

  const llvm::StringMap<std::vector<int64_t>> &coords;
  Block &body;
  const MemoryAnalysis::BufferShapes &arguments;
  llvm::DenseMap<Value, std::optional<int64_t>> values;
};
} // namespace

/// The local shape on a rank of a tensor that `attrs` describes (global
/// shape and layout), or of `type` when they do not; -1 for a dim that
/// stays unknown. A rank outside the layout's mesh holds nothing.
static std::vector<int64_t>
localShape(Operation *from, Type type, DictionaryAttr attrs,
           const llvm::StringMap<std::vector<int64_t>> &rankCoords) {
  auto shaped = cast<ShapedType>(type);
  std::vector<int64_t> shape;
  for (int64_t size : shaped.getShape())
    shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
  if (!attrs)
    return shape;
  auto layout = attrs.getAs<LayoutAttr>(DTensorDialect::getLayoutAttrName());
  auto global =
      attrs.getAs<DenseI64ArrayAttr>(DTensorDialect::getGlobalShapeAttrName());
  if (!layout || !global)
    return shape;
  MeshOp mesh = lookupMesh(from, layout.getMesh());
  if (!mesh)
    return shape;
  auto coord = rankCoords.find(mesh.getSymName());
  if (coord == rankCoords.end())
    return std::vector<int64_t>(shape.size(), 0);
  std::vector<int64_t> globalShape(global.asArrayRef());
  return layout::localShard(globalShape, layout.getLayoutPlacements(),
                            mesh.getLayoutMesh(), coord->second)
      .shape;
}

/// Bytes of `shape` elements of `type`'s element type; none when a dim is
/// unknown.
static std::optional<int64_t> shapeBytes(Type type,
                                         const std::vector<int64_t> &shape) {
  int64_t total = getElementBytes(type);
  for (int64_t size : shape) {
    if (size < 0)
      return std::nullopt;
    total *= size;
  }
  return total;
}

/// The operation of `body` that holds `op` (itself when in `body`).
static Operation *topLevel(Block &body, Operation *op) {
  return body.findAncestorOpInBlock(*op);
}

/// The gradients of a training step: what the parameters' updates read.
/// An update op is an elementwise linalg op (no reduction) that reads a
/// parameter, optimizer state or another update op's result; walking back
/// from the updated values through update ops, the first operands of the
/// updated rank that no update op computes are the gradients (with
/// accumulation: the call's gradient that the accumulator adds). A
/// gradient computed elementwise from its own parameter would be taken
/// for part of the update and not counted.
static llvm::SetVector<Value> findGradients(func::FuncOp function) {
  Block &body = function.getBody().front();
  llvm::DenseMap<Operation *, bool> updateOps;
  std::function<bool(Value)> isUpdated = [&](Value v) -> bool {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      DictionaryAttr attrs = function.getArgAttrDict(arg.getArgNumber());
      return arg.getOwner() == &body && attrs &&
             (attrs.contains(DTensorDialect::getWeightAttrName()) ||
              attrs.contains(DTensorDialect::getStateAttrName()));
    }
    auto op = v.getDefiningOp<linalg::LinalgOp>();
    if (!op || op.getNumReductionLoops() != 0)
      return false;
    auto [it, inserted] = updateOps.try_emplace(op, false);
    if (!inserted)
      return it->second;
    bool reads = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
      return isUpdated(in->get());
    });
    updateOps[op] = reads;
    return reads;
  };
  Operation *terminator = body.getTerminator();
  SmallVector<Value> work;
  // An updated value that no update op computes (a state passed through)
  // leads to no gradient.
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (function.getResultAttr(i, DTensorDialect::getUpdatesAttrName()) &&
        isUpdated(terminator->getOperand(i)))
      work.push_back(terminator->getOperand(i));
  llvm::DenseSet<Value> visited;
  llvm::SetVector<Value> gradients;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (isa<BlockArgument>(v) || !visited.insert(v).second)
      continue;
    if (!isUpdated(v)) {
      gradients.insert(v);
      continue;
    }
    auto op = v.getDefiningOp<linalg::LinalgOp>();
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    for (OpOperand *in : op.getDpsInputOperands())
      if (auto type = dyn_cast<RankedTensorType>(in->get().getType());
          type && type.getRank() == rank && rank > 0)
        work.push_back(in->get());
  }
  return gradients;
}

MemoryAnalysis::MemoryAnalysis(ModuleOp module,
                               llvm::ArrayRef<std::string> names,
                               int64_t worldSize) {
  for (int64_t rank = 0; rank < worldSize; ++rank) {
    llvm::StringMap<std::vector<int64_t>> rankCoords;
    for (MeshOp mesh : module.getOps<MeshOp>())
      if (std::optional<std::vector<int64_t>> coord =
              mesh.getLayoutMesh().coordOfDevice(rank))
        rankCoords[mesh.getSymName()] = *coord;
    coords.push_back(std::move(rankCoords));
  }
  bool trainingModule =
      static_cast<bool>(module->getAttr(DTensorDialect::getTrainingAttrName()));
  for (const std::string &name : names) {
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function || function.isExternal())
      continue;
    Block &body = function.getBody().front();
    EntryMemory entry;
    entry.name = name;
    // A training step updates a parameter (a weight).
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      if (auto updates = function.getResultAttrOfType<IntegerAttr>(
              i, DTensorDialect::getUpdatesAttrName()))
        entry.training |= static_cast<bool>(function.getArgAttr(
            updates.getInt(), DTensorDialect::getWeightAttrName()));
    llvm::SetVector<Value> gradients;
    if (entry.training)
      gradients = findGradients(function);
    std::vector<BufferShapes> entryShapes;
    for (int64_t rank = 0; rank < worldSize; ++rank) {
      RankMemory memory;
      memory.rank = rank;
      BufferShapes buffers;
      auto count = [&](int64_t &figure, std::optional<int64_t> bytes) {
        if (bytes)
          figure += *bytes;
        else
          ++memory.unknownSizes;
      };
      for (BlockArgument arg : body.getArguments()) {
        DictionaryAttr attrs = function.getArgAttrDict(arg.getArgNumber());
        buffers.push_back(
            localShape(function, arg.getType(), attrs, coords[rank]));
        std::optional<int64_t> bytes =
            shapeBytes(arg.getType(), buffers.back());
        if (attrs && attrs.contains(DTensorDialect::getWeightAttrName()))
          count(memory.parameters, bytes);
        else if (attrs && attrs.contains(DTensorDialect::getStateAttrName()))
          count(trainingModule ? memory.optimizerState : memory.otherState,
                bytes);
        else
          count(memory.inputsOutputs, bytes);
      }
      for (unsigned i = 0; i < function.getNumResults(); ++i) {
        if (function.getResultAttr(i, DTensorDialect::getUpdatesAttrName()))
          continue;
        Type type = function.getResultTypes()[i];
        buffers.push_back(localShape(
            function, type, function.getResultAttrDict(i), coords[rank]));
        count(memory.inputsOutputs, shapeBytes(type, buffers.back()));
      }
      RankEvaluator evaluate(coords[rank], body, buffers);
      for (Value gradient : gradients)
        count(memory.gradients, evaluate.bytes(gradient));
      entry.ranks.push_back(memory);
      entryShapes.push_back(std::move(buffers));
    }
    entries.push_back(std::move(entry));
    shapes.push_back(std::move(entryShapes));
    argumentCounts.push_back(function.getNumArguments());
  }
}

/// The top level op of `body` that computes the loss, the entry's result 0,
/// into the buffer `out` (its out-param): the last op before the end that
/// uses (other than to free it) the buffer copied into `out`, or `out`
/// itself when the loss is computed in place.
static Operation *findLossOp(Block &body, Value out) {
  Value loss = out;
  for (Operation *user : out.getUsers())
    if (auto copy = dyn_cast<memref::CopyOp>(user);
        copy && copy.getTarget() == out)
      loss = copy.getSource();
  Operation *lossOp = nullptr;
  for (Value alias : findBufferLastUse(loss, body).aliases)
    for (Operation *user : alias.getUsers()) {
      auto copy = dyn_cast<memref::CopyOp>(user);
      if ((copy && copy.getTarget() == out) || isa<memref::DeallocOp>(user))
        continue;
      Operation *ancestor = topLevel(body, user);
      if (ancestor != body.getTerminator() &&
          (!lossOp || lossOp->isBeforeInBlock(ancestor)))
        lossOp = ancestor;
    }
  return lossOp;
}

void MemoryAnalysis::addBufferizedProgram(ModuleOp bufferized) {
  for (auto [entry, entryShapes, argumentCount] :
       llvm::zip(entries, shapes, argumentCounts)) {
    auto function = bufferized.lookupSymbol<func::FuncOp>(entry.name);
    if (!function || function.isExternal())
      continue;
    Block &body = function.getBody().front();
    llvm::DenseMap<Operation *, int64_t> points;
    for (Operation &op : body)
      points[&op] = points.size();
    int64_t last = static_cast<int64_t>(points.size()) - 1;
    // Each allocation is live until the program frees it (its last use,
    // the dealloc included) and, for the last-use peak, until its last use
    // as --dtensor-free-after-last-use finds it (BufferLastUse.h), or until
    // freed where that use cannot be followed.
    struct Allocation {
      Value buffer;
      LiveRange freed, used;
    };
    auto pointOf = [&](Operation *op) {
      Operation *ancestor = topLevel(body, op);
      return ancestor == body.getTerminator() ? last : points[ancestor];
    };
    SmallVector<Allocation> allocations;
    function.walk([&](Operation *op) {
      if (!isa<memref::AllocOp, memref::AllocaOp>(op))
        return;
      Allocation allocation{op->getResult(0), {}, {}};
      allocation.freed.begin = allocation.used.begin = allocation.freed.end =
          pointOf(op);
      BufferLastUse uses = findBufferLastUse(op->getResult(0), body);
      for (Value alias : uses.aliases)
        for (Operation *user : alias.getUsers())
          allocation.freed.end = std::max(allocation.freed.end, pointOf(user));
      if (uses.lastUse)
        allocation.freed.end =
            std::max(allocation.freed.end, pointOf(uses.lastUse));
      allocation.used.end =
          uses.lastUse ? pointOf(uses.lastUse) : allocation.freed.end;
      allocations.push_back(allocation);
    });
    // The forward ends at the loss; its buffers still live after it are
    // what the backward reads.
    std::optional<int64_t> lossPoint;
    if (entry.training && argumentCount < body.getNumArguments())
      if (Operation *lossOp = findLossOp(body, body.getArgument(argumentCount)))
        lossPoint = points[lossOp];
    for (auto [memory, buffers] : llvm::zip(entry.ranks, entryShapes)) {
      RankEvaluator evaluate(coords[memory.rank], body, buffers);
      std::vector<LiveRange> freed, used;
      if (entry.training && !lossPoint)
        ++memory.unknownSizes;
      for (const Allocation &allocation : allocations) {
        std::optional<int64_t> bytes = evaluate.bytes(allocation.buffer);
        if (!bytes) {
          ++memory.unknownSizes;
          continue;
        }
        freed.push_back({allocation.freed.begin, allocation.freed.end, *bytes});
        used.push_back({allocation.used.begin, allocation.used.end, *bytes});
        if (lossPoint && allocation.used.begin <= *lossPoint &&
            *lossPoint < allocation.used.end)
          memory.savedActivations += *bytes;
      }
      memory.cachedBuffers = exactSizeCacheBytes(freed);
      memory.transientPeak = peakLiveBytes(std::move(freed));
      memory.lastUsePeak = peakLiveBytes(std::move(used));
    }
  }
}
