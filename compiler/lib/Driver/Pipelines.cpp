//===- Pipelines.cpp - The named pipelines of the compiler ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Driver/Pipelines.h"

#include "dtensor/Attention/Passes.h"
#include "dtensor/Collectives/Passes.h"
#include "dtensor/Partition/Passes.h"
#include "dtensor/Propagation/Passes.h"
#include "dtensor/Reports/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using dtensor::driver::ExplainCategories;

std::optional<ExplainCategories>
dtensor::driver::parseExplainCategories(llvm::StringRef text,
                                        std::string &error) {
  ExplainCategories categories;
  llvm::SmallVector<llvm::StringRef> names;
  text.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    name = name.trim();
    if (name == "all")
      categories = ExplainCategories::all();
    else if (name == "propagate")
      categories.propagate = true;
    else if (name == "partition")
      categories.partition = true;
    else if (name == "fuse")
      categories.fuse = true;
    else if (!name.empty()) {
      error = ("unknown category '" + name +
               "'; expected propagate, partition, fuse or all")
                  .str();
      return std::nullopt;
    }
  }
  return categories;
}

void dtensor::driver::buildDistributePipeline(
    OpPassManager &pm, const DistributeOptions &options) {
  // Attention stays one op through the stages that need it whole, and is
  // written as linalg here, before propagation, where no kernel runs it.
  DecomposeAttentionOptions decompose;
  decompose.kernel = options.target.attentionKernel;
  pm.addNestedPass<func::FuncOp>(createDecomposeAttention(decompose));
  PropagateOptions propagate;
  propagate.statistics = options.statistics;
  propagate.explain = options.explain.propagate;
  propagate.topology = options.topology;
  propagate.computeGflops = options.computeGflops;
  pm.addPass(createPropagate(propagate));
  if (!options.visualize.empty()) {
    VisualizeShardingOptions visualize;
    visualize.values.assign(options.visualize.begin(), options.visualize.end());
    visualize.svgDir = options.visualizeSvgDir;
    pm.addPass(createVisualizeSharding(visualize));
  }
  PartitionOptions partition;
  partition.explain = options.explain.partition;
  partition.topology = options.topology;
  pm.addPass(createPartition(partition));
  if (options.target.attentionKernel) {
    pm.addNestedPass<func::FuncOp>(createFoldAttentionViews());
    pm.addNestedPass<func::FuncOp>(createRingAttention());
  }
  FuseCollectivesOptions fuse;
  fuse.bucketBytes = options.bucketBytes;
  fuse.overlap = options.overlap;
  fuse.statistics = options.statistics;
  fuse.explain = options.explain.fuse;
  pm.addPass(createFuseCollectives(fuse));
  if (!options.commReport.empty()) {
    CommReportOptions report;
    report.format = options.commReport;
    pm.addPass(createCommReport(report));
  }
}

namespace {
struct DistributePipelineOptions
    : PassPipelineOptions<DistributePipelineOptions> {
  Option<uint64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Largest combined size, in bytes per rank, of one "
                     "bucketed collective; 0 disables bucketing"),
      llvm::cl::init(25 * 1024 * 1024)};
  Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Overlap collectives with independent computation"),
      llvm::cl::init(true)};
  Option<std::string> commReport{
      *this, "comm-report",
      llvm::cl::desc("Print the communication report of the per-rank "
                     "program: text or json (default: none)"),
      llvm::cl::init("")};
  ListOption<std::string> visualize{
      *this, "visualize",
      llvm::cl::desc("Show which rank holds which block of these values "
                     "after propagation (dtensor.name or IR names)")};
  Option<std::string> visualizeSvgDir{
      *this, "visualize-svg-dir",
      llvm::cl::desc("With visualize: also write SVG pictures into this "
                     "folder"),
      llvm::cl::init("")};
  Option<bool> explain{
      *this, "explain",
      llvm::cl::desc("Propagation explains each redistribute it inserts "
                     "(a remark at the op that needs it), partitioning the "
                     "steps each becomes, collective fusion each rewrite "
                     "and bucket"),
      llvm::cl::init(false)};
  Option<bool> statistics{
      *this, "statistics",
      llvm::cl::desc("Propagation and collective fusion report what they "
                     "did as remarks"),
      llvm::cl::init(false)};
  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("Topology file (docs/topology.md): propagation and "
                     "partitioning price each collective with the slowest "
                     "link class its group crosses"),
      llvm::cl::init("")};
  Option<double> computeGflops{
      *this, "compute-gflops",
      llvm::cl::desc("Per-rank compute rate propagation prices ops at, in "
                     "GFLOP/s; 0: the topology file's compute_gflops, else "
                     "an assumed 100"),
      llvm::cl::init(0.0)};
  Option<bool> attentionKernel{
      *this, "attention-kernel",
      llvm::cl::desc("The target has a fused attention kernel: keep "
                     "dtensor.attention (f32) for it rather than decompose "
                     "it, and after partitioning fold the views around it "
                     "and compute attention over gathered keys as a ring "
                     "(--dtensor-decompose-attention=kernel=true, "
                     "--dtensor-fold-attention-views, "
                     "--dtensor-ring-attention)"),
      llvm::cl::init(false)};
};
} // namespace

void dtensor::driver::registerDistributePipeline() {
  PassPipelineRegistration<DistributePipelineOptions>(
      "dtensor-distribute",
      "Global program to per-rank program: propagate layouts, partition, "
      "fuse collectives",
      [](OpPassManager &pm, const DistributePipelineOptions &options) {
        DistributeOptions distribute;
        distribute.bucketBytes = options.bucketBytes;
        distribute.overlap = options.overlap;
        distribute.commReport = options.commReport;
        distribute.visualize.assign(options.visualize.begin(),
                                    options.visualize.end());
        distribute.visualizeSvgDir = options.visualizeSvgDir;
        distribute.statistics = options.statistics;
        distribute.topology = options.topology;
        distribute.computeGflops = options.computeGflops;
        distribute.target.attentionKernel = options.attentionKernel;
        if (options.explain)
          distribute.explain = ExplainCategories::all();
        buildDistributePipeline(pm, distribute);
      });
}
