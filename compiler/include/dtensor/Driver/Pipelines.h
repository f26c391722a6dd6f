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

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::driver {

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
  /// Propagation explains each redistribute it inserts, and collective
  /// fusion each rewrite and bucket, as remarks (their `explain` options).
  bool explain = false;
  /// Propagation and collective fusion report what they did as remarks
  /// (their `statistics` option).
  bool statistics = false;
};

/// Global program (layouts on arguments, distribute constraints) -> per-rank
/// program: --dtensor-propagate, --dtensor-visualize-sharding when asked,
/// --dtensor-partition, --dtensor-fuse-collectives, and
/// --dtensor-comm-report when asked.
void buildDistributePipeline(mlir::OpPassManager &pm,
                             const DistributeOptions &options);

/// Registers the pipeline `dtensor-distribute` for dtensor-opt.
void registerDistributePipeline();

} // namespace dtensor::driver

#endif // DTENSOR_DRIVER_PIPELINES_H
