//===- Pipelines.h - The named pipelines of the compiler --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The distribute pipeline: propagation, partitioning and collective fusion,
// global program in, per-rank program out. dtensor-compile runs it before the
// target's lowering (dtensor/Codegen/CPU/CpuCodegen.h, GPU/GpuCodegen.h);
// dtensor-opt runs it as --dtensor-distribute.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_DRIVER_PIPELINES_H
#define DTENSOR_DRIVER_PIPELINES_H

#include "dtensor/Driver/TargetCapabilities.h"

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::driver {

/// Which stages explain their decisions as remarks (`dtensor-compile
/// --explain=propagate,partition,fuse`, or DTENSOR_LOG).
struct ExplainCategories {
  /// Propagation: each redistribute it inserts, the op whose strategy
  /// demands it and that op's strategies priced.
  bool propagate = false;
  /// Partitioning: the steps each redistribute is lowered to, with costs.
  bool partition = false;
  /// Collective fusion: each rewrite (named) and each bucket.
  bool fuse = false;

  bool any() const { return propagate || partition || fuse; }
  static ExplainCategories all() { return {true, true, true}; }
};

/// The categories of `text`: a comma-separated list of propagate, partition
/// and fuse, or "all"; empty entries are ignored. On an unknown name, `error`
/// gets a message listing the names and nullopt is returned.
std::optional<ExplainCategories> parseExplainCategories(llvm::StringRef text,
                                                        std::string &error);

struct DistributeOptions {
  /// Collective fusion (see --dtensor-fuse-collectives).
  uint64_t bucketBytes = 25 * 1024 * 1024;
  bool overlap = true;
  /// Print the communication report of the per-rank program: "text" or
  /// "json"; "" for none.
  std::string commReport;
  /// Values to show with --dtensor-visualize-sharding after propagation
  /// (dtensor.name or IR names); none: the pass does not run.
  std::vector<std::string> visualize;
  /// With `visualize`: also write SVG pictures into this folder ("": no).
  std::string visualizeSvgDir;
  /// Which stages explain their decisions as remarks (their `explain`
  /// options).
  ExplainCategories explain;
  /// Propagation and collective fusion report what they did as remarks
  /// (their `statistics` option).
  bool statistics = false;
  /// The topology file of the cost model of propagation and partitioning
  /// (their `topology` option, docs/topology.md); "" for none.
  std::string topology;
  /// Per-rank compute rate propagation weighs collectives against, in
  /// GFLOP/s (its `compute-gflops` option); 0: the topology file's
  /// compute_gflops, else propagation's assumed rate.
  double computeGflops = 0.0;
  /// What the target computes as one op. Without `attentionKernel`,
  /// dtensor.attention is decomposed into linalg before propagation
  /// (--dtensor-decompose-attention). With it, the kernel's ops stay whole;
  /// right after partitioning the views around them are folded in
  /// (--dtensor-fold-attention-views) and attention over gathered keys is
  /// computed as a ring (--dtensor-ring-attention), so that collective
  /// fusion, the report and the numbered sites see the ring's shifts.
  TargetCapabilities target;
};

/// Global program (layouts on arguments, distribute constraints) -> per-rank
/// program: --dtensor-decompose-attention (what the target's kernel does not
/// run), --dtensor-propagate, --dtensor-visualize-sharding when asked,
/// --dtensor-partition, the attention passes when the target has the kernel
/// (`target.attentionKernel`), --dtensor-fuse-collectives, and
/// --dtensor-comm-report when asked.
void buildDistributePipeline(mlir::OpPassManager &pm,
                             const DistributeOptions &options);

/// Registers the pipeline `dtensor-distribute` for dtensor-opt.
void registerDistributePipeline();

} // namespace dtensor::driver

#endif // DTENSOR_DRIVER_PIPELINES_H
