//===- FunctionPropagation.h - Propagation over one function ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The propagation of one function is split as Shardy splits it: building
// the solver's problem from the function (BuildProblem.cpp), writing the
// chosen strategies back as layouts and redistributes
// (MaterializeSolution.cpp), and the `explain` remarks that justify each
// redistribute (ExplainRedistribute.cpp). The pass (Propagate.cpp) runs it
// on each function, callees first.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PROPAGATION_FUNCTIONPROPAGATION_H
#define DTENSOR_COMPILER_PROPAGATION_FUNCTIONPROPAGATION_H

#include "RuleStrategies.h"

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Propagation/Solver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace dtensor::propagation {

/// Ops recreated in each layout their users need instead of redistributed:
/// they cost nothing to build again on every rank.
bool isRematerializable(mlir::Operation *op);

/// A user's claim that a value has a layout, and where it was made.
/// `open` (empty, or one flag per mesh dim) marks the mesh dims the claim
/// leaves to propagation (a distribute's or to_layout's `open_mesh_dims`);
/// their placements in `layout` mean nothing.
struct Assertion {
  Layout layout;
  mlir::Location loc;
  std::vector<bool> open;

  bool isOpen(size_t meshDim) const { return !open.empty() && open[meshDim]; }
  bool isClosed() const {
    return llvm::none_of(open, [](bool flag) { return flag; });
  }
  /// True when `candidate` has the claimed placement on every closed dim.
  bool admits(const Layout &candidate) const {
    for (size_t dim = 0; dim < layout.size(); ++dim)
      if (!isOpen(dim) && !(candidate[dim] == layout[dim]))
        return false;
    return true;
  }
};

/// What one node of the problem stands for.
struct NodeInfo {
  enum class Kind { Argument, Op, Result };
  Kind kind;
  /// The op (Op), or null.
  mlir::Operation *op = nullptr;
  /// Argument or result number (Argument, Result).
  unsigned index = 0;
  /// The uses each operand slot stands for.
  llvm::SmallVector<llvm::SmallVector<mlir::OpOperand *, 1>> slots;
  /// The values of the node's results, in node-result order.
  llvm::SmallVector<mlir::Value> results;
  /// Some result had to keep a layout other than a user's claim.
  bool missedClaim = false;
};

/// What propagation did (--dtensor-propagate=statistics).
struct PropagationCounts {
  unsigned functions = 0;
  unsigned redistributes = 0;
  unsigned recreated = 0;
  unsigned sweeps = 0;
};

/// Propagation over one function.
class FunctionPropagation {
public:
  FunctionPropagation(mlir::func::FuncOp func, MeshOp mesh,
                      mlir::FlatSymbolRefAttr meshRef, layout::CostParams costs,
                      ComputeParams compute, bool explain = false)
      : func(func), meshRef(meshRef), mesh(mesh.getLayoutMesh()),
        problem(this->mesh, costs), compute(compute), explain(explain) {}

  mlir::LogicalResult run(unsigned maxSweeps, PropagationCounts &counts);

private:
  // Building the problem (BuildProblem.cpp).
  mlir::LogicalResult collectAssertions();
  mlir::LogicalResult addAssertion(mlir::Value value, Layout layout,
                                   mlir::Location loc,
                                   std::vector<bool> open = {});
  /// The layouts a value of `type` claimed by `assertion` may take: its
  /// closed dims as claimed, its open dims replicated or sharded.
  std::vector<Layout> getAdmittedLayouts(mlir::RankedTensorType type,
                                         const Assertion &assertion) const;
  mlir::LogicalResult addLocalMapAssertions(LocalMapOp op);
  void addValue(mlir::Value value);
  void buildNodes();
  void addOpNode(mlir::Operation *op);
  void addNode(NodeInfo info, llvm::SmallVector<mlir::Value> operands,
               std::vector<Strategy> strategies);
  // Writing the solver's choice back (MaterializeSolution.cpp).
  void materialize(const std::vector<int> &choice, PropagationCounts &counts);
  // Explaining it (ExplainRedistribute.cpp).
  /// The `explain` remark for a redistribute of operand `slot` of node
  /// `nodeId` from `from` to `to`.
  void explainRedistribute(int nodeId, unsigned slot, int chosen,
                           const Layout &from, const Layout &to,
                           const llvm::DenseMap<mlir::Value, Layout> &produced);
  /// Fills `gradients` from the marks of the backward (BackwardMark.h).
  void findGradients();

  /// The layout a constraint claims for `value` (which has one).
  const Layout &claimed(mlir::Value value) const {
    return assertions.find(value)->second.layout;
  }
  const Assertion &getAssertion(mlir::Value value) const {
    return assertions.find(value)->second;
  }
  LayoutAttr getAttr(const Layout &layout) const {
    return getLayoutAttr(meshRef, layout);
  }

  mlir::func::FuncOp func;
  mlir::FlatSymbolRefAttr meshRef;
  layout::Mesh mesh;
  propagation::Problem problem;
  ComputeParams compute;
  bool explain = false;
  llvm::DenseMap<mlir::Value, int> valueIds;
  /// Claims made by users (distribute, redistribute's source) and by
  /// argument attributes or the layout-carrying producers.
  llvm::MapVector<mlir::Value, Assertion> assertions;
  std::vector<NodeInfo> nodes;
  /// The ops that give a weight its gradient (Autodiff/BackwardMark.h).
  unsigned numGradients = 0;
  /// With `explain`: the values that are a weight's gradient, or computed
  /// from one weight's gradient only (the optimizer's uses of it).
  struct GradientOrigin {
    std::string weight;
    bool derived = false;
  };
  llvm::DenseMap<mlir::Value, GradientOrigin> gradients;
};

} // namespace dtensor::propagation

#endif // DTENSOR_COMPILER_PROPAGATION_FUNCTIONPROPAGATION_H
