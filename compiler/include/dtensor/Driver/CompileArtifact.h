//===- CompileArtifact.h - Global program to artifact -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The whole compiler behind `dtensor-compile`: a global-level module (layouts
// on arguments, distribute constraints) becomes an artifact directory
// holding the per-rank program as a shared object, the single-device
// reference program, and the manifest (docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_DRIVER_COMPILEARTIFACT_H
#define DTENSOR_DRIVER_COMPILEARTIFACT_H

#include "dtensor/Codegen/CPU/CpuCodegen.h"
#include "dtensor/Codegen/GPU/GpuCodegen.h"
#include "dtensor/Driver/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dtensor::driver {

/// A new shape for one mesh of the module (`--mesh`); an empty name means
/// the module's only mesh.
struct MeshOverride {
  std::string mesh;
  std::vector<int64_t> shape;
};

struct CompileOptions {
  /// Code generation target: "cpu", or "cuda" (host code for the CPU with
  /// embedded device code; the reference program stays CPU code).
  std::string target = "cpu";
  /// Entry function; "" picks `main`, else the only public function.
  std::string entry;
  /// Functions whose gradient function (`<name>_grad`, of the loss result
  /// `result` with respect to the weights: --dtensor-differentiate) is
  /// added as one more entry before compiling.
  struct Gradient {
    std::string function;
    unsigned result = 0;
  };
  std::vector<Gradient> gradients;
  /// Ranks the program runs on; 0 = the largest mesh.
  int64_t worldSize = 0;
  std::vector<MeshOverride> meshOverrides;
  /// Shared libraries holding the kernels of the program's custom ops
  /// (`--custom-op-library`, docs/custom-ops.md), recorded in the manifest
  /// as absolute paths for the runtime to open.
  std::vector<std::string> customOpLibraries;
  /// Also build the single-device reference program (`dtensor-run --check`).
  bool reference = true;
  /// Print the communication report ("text" or "json"); "" = none.
  std::string commReport;
  /// Print the memory account of every entry per rank ("text" or "json";
  /// "" = none; docs/memory-report.md), into `memoryReportFile` when it is
  /// set, else to standard output.
  std::string memoryReport;
  std::string memoryReportFile;
  /// Print which rank holds which block of these values after propagation
  /// (--dtensor-visualize-sharding); with `visualizeSvgDir`, also as SVG.
  std::vector<std::string> visualize;
  std::string visualizeSvgDir;
  /// Which stages explain their decisions (remarks).
  ExplainCategories explain;
  /// The topology file (docs/topology.md) the cost model of propagation
  /// and partitioning reads; "" = every mesh dim priced alike.
  std::string topology;
  /// Per-rank compute rate of the cost model, GFLOP/s; 0 = the topology
  /// file's compute_gflops, else propagation's assumed rate.
  double computeGflops = 0.0;
  /// Collective fusion (see --dtensor-fuse-collectives).
  uint64_t bucketBytes = 25 * 1024 * 1024;
  bool overlap = true;
  /// Propagation and collective fusion report what they did as remarks.
  bool statistics = false;
  /// Write the per-rank program (after fusion) to this file; "" = no.
  std::string dumpPerRank;
  /// Compute attention with the target's fused kernel where it has one
  /// (TargetCapabilities::attentionKernel); false: as linalg loop nests
  /// (dtensor-compile --no-fused-attention).
  bool fusedAttention = true;
  codegen::CpuLoweringOptions lowering;
  codegen::CpuTargetOptions cpu;
  /// Target "cuda": architecture, toolkit (empty = codegen::findCudaToolkit)
  /// and the kernels' block size.
  codegen::GpuLoweringOptions gpu;
  /// Called on each pass manager the compiler runs (the distribute
  /// pipeline, the target's lowering, the reference program's lowering)
  /// before it runs: dtensor-compile applies MLIR's pass-manager options
  /// there. A failure stops the compilation.
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
};

/// Parses "2x4", "8" or "tp=2x4" into a mesh override; "" or the error.
std::string parseMeshOverride(llvm::StringRef text, MeshOverride &override);

/// Compiles `module` (consumed: it is transformed in place) into the artifact
/// directory `output`. Errors are emitted as diagnostics; on failure nothing
/// is left at `output` (an existing artifact there is replaced only on
/// success).
mlir::LogicalResult compileArtifact(mlir::ModuleOp module,
                                    const CompileOptions &options,
                                    llvm::StringRef output);

} // namespace dtensor::driver

#endif // DTENSOR_DRIVER_COMPILEARTIFACT_H
