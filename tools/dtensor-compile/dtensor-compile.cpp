//===- dtensor-compile.cpp - global program to artifact ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-compile model.mlir -o model.dtc [--target cpu] [--mesh 2x2] ...
// dtensor-compile model.json -o model.dtc ...
//
// Compiles a global-level program, or a JSON model plan (a file whose name
// ends in .json, imported as `dtensor-translate --import-json` does), into
// an artifact directory that dtensor-run (or a host through the runtime's
// C API) runs on every rank.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/GPU/GpuCodegen.h"
#include "dtensor/Driver/CompileArtifact.h"
#include "dtensor/Driver/DebugOutput.h"
#include "dtensor/Formats/Topology.h"
#include "dtensor/Frontend/ImportJson.h"
#include "dtensor/InitAllDialects.h"
#include "dtensor/InitAllPasses.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("dtensor-compile options");

static cl::opt<std::string>
    inputFile(cl::Positional,
              cl::desc("<global program .mlir, or model plan .json>"),
              cl::Required, cl::cat(category));
static cl::opt<std::string> outputDir("o", cl::desc("Artifact directory"),
                                      cl::value_desc("dir"), cl::Required,
                                      cl::cat(category));
static cl::opt<std::string> target("target",
                                   cl::desc("Code generation target: cpu, or "
                                            "cuda (NVIDIA GPUs)"),
                                   cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("With --target cuda: the GPU architecture (default "
                     "sm_90, H100 and H200)"),
            cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("With --target cuda: the CUDA toolkit's root, for ptxas and "
             "libdevice (default: $CUDA_PATH, the one found when dtensor "
             "was built, /usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> parallelLoops(
    "parallel-loops",
    cl::desc("With --target cpu: run each large parallel loop nest on the "
             "runtime's worker threads (default true; "
             "--parallel-loops=false keeps every nest on the calling "
             "thread)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> emulateGpuKernels(
    "emulate-gpu-kernels",
    cl::desc("With --target cpu: lower loop nests to kernels as --target "
             "cuda does and run each kernel's threads as loops (tests the "
             "kernel mapping without a GPU; slower code)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noFusedAttention(
    "no-fused-attention",
    cl::desc("With --target cpu: keep attention as linalg loop nests rather "
             "than calls of the runtime's fused kernel (for comparisons)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> gpuBlockSize(
    "gpu-block-size",
    cl::desc("With --target cuda: threads per block of the generated "
             "kernels (1 to 1024)"),
    cl::init(256), cl::cat(category));
static cl::list<std::string>
    meshes("mesh",
           cl::desc("Give a mesh a new shape, e.g. 4, 2x2 or tp=4 (the mesh "
                    "name may be left out when the module has one mesh); "
                    "repeatable"),
           cl::value_desc("[name=]shape"), cl::cat(category));
static cl::opt<int64_t>
    worldSize("world-size",
              cl::desc("Ranks the program runs on (default: the largest mesh)"),
              cl::init(0), cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Entry function (default: main, else the only public "
                   "function)"),
          cl::cat(category));
static cl::list<std::string> gradients(
    "gradient",
    cl::desc("Add the gradient function FUNCTION_grad of FUNCTION's result "
             "RESULT (default 0; the loss, a float of one element) with "
             "respect to its weights as one more entry "
             "(--dtensor-differentiate); repeatable"),
    cl::value_desc("function[:result]"), cl::cat(category));
static cl::opt<std::string> commReport(
    "comm-report",
    cl::desc("Print the communication report of the per-rank program "
             "(text, or --comm-report=json)"),
    cl::ValueOptional, cl::cat(category));
static cl::opt<std::string> memoryReport(
    "memory-report",
    cl::desc("Print each entry's memory per rank as the compiler accounts "
             "it: parameters, optimizer and other state, inputs and "
             "outputs, gradients, saved activations and the peaks of the "
             "step's own buffers (text, or --memory-report=json; "
             "docs/memory-report.md)"),
    cl::ValueOptional, cl::cat(category));
static cl::opt<std::string> memoryReportFile(
    "memory-report-file",
    cl::desc("With --memory-report: write the report to FILE rather than "
             "standard output"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::list<std::string> visualize(
    "visualize",
    cl::desc("Print which rank holds which block of value NAME after "
             "propagation: an input, parameter or output name, or an IR "
             "name (%3); repeatable, or NAME,NAME"),
    cl::value_desc("NAME"), cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string> visualizeSvg(
    "visualize-svg",
    cl::desc("With --visualize: also write each view as an SVG picture "
             "into DIR"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string> explain(
    "explain",
    cl::desc("Explain decisions as remarks, by stage (default all; also "
             "from the DTENSOR_LOG environment variable): propagate (each "
             "redistribute propagation inserts, at the op that needs it, "
             "with the layouts, the cost and that op's strategies and their "
             "costs), partition (the collectives each redistribute becomes, "
             "with their costs), fuse (each collective that fusion cancels, "
             "strength-reduces or buckets)"),
    cl::value_desc("propagate,partition,fuse"), cl::ValueOptional,
    cl::cat(category));
static cl::opt<std::string> topology(
    "topology",
    cl::desc("Topology file (docs/topology.md): link classes with their "
             "latency and bandwidth, and which mesh dims cross which; "
             "propagation and the redistribute planner price each "
             "collective by the slowest class its group crosses (default: "
             "every mesh dim alike)"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<double> computeGflops(
    "compute-gflops",
    cl::desc("Per-rank compute rate in GFLOP/s that propagation weighs "
             "collectives against (the duplicated compute of a replicated "
             "op, the saved compute of a sharded one); overrides the "
             "topology file's compute_gflops (default: that, else an "
             "assumed 100)"),
    cl::value_desc("X"), cl::init(0.0), cl::cat(category));
static cl::list<std::string> customOpLibraries(
    "custom-op-library",
    cl::desc("Shared library with the kernels of the program's custom ops "
             "(docs/custom-ops.md); checked now and recorded in the manifest "
             "by its absolute path, which the runtime opens at load; "
             "repeatable"),
    cl::value_desc("PATH"), cl::cat(category));
static cl::opt<bool>
    noReference("no-reference",
                cl::desc("Do not build the single-device reference program "
                         "(dtensor-run --check needs it)"),
                cl::init(false), cl::cat(category));
static cl::opt<uint64_t>
    bucketBytes("bucket-bytes",
                cl::desc("Largest bucket of fused collectives in bytes; 0 "
                         "turns bucketing off"),
                cl::init(25 * 1024 * 1024), cl::cat(category));
static cl::opt<bool> passStatistics(
    "pass-statistics",
    cl::desc("Print what propagation and collective fusion did: the "
             "redistributes inserted, the collectives cancelled, bucketed "
             "and overlapped (as remarks)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noOverlap(
    "no-overlap",
    cl::desc("Do not split collectives into start/wait to overlap compute"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string>
    cpu("cpu", cl::desc("Target CPU, as LLVM names it (default: this host's)"),
        cl::cat(category));
static cl::opt<std::string>
    cpuFeatures("cpu-features",
                cl::desc("Target features, e.g. +avx2,-avx512f (added to "
                         "the host's when --cpu is not given)"),
                cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level"),
                                  cl::init(3), cl::Prefix, cl::cat(category));
static cl::opt<std::string>
    dumpPerRank("dump-per-rank",
                cl::desc("Write the per-rank program (after collective "
                         "fusion) to this file"),
                cl::value_desc("file"), cl::cat(category));

/// MLIR's own options, shown by --help in a category of their own:
/// printing IR before and after passes, timing, statistics, crash
/// reproducers, the context's threading and diagnostics.
static cl::OptionCategory
    mlirCategory("MLIR options (pass manager, IR printing, timing, context)");

static void registerMlirOptions() {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-"))
      entry.second->addCategory(mlirCategory);
}

/// Applies MLIR's pass-manager options to each pass manager the compiler
/// runs.
static LogicalResult configurePassManager(PassManager &pm) {
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Pass names for --mlir-print-ir-before/after and reproducers: registered
  // before those options, which list the passes known when they are made.
  mlir::registerAllPasses();
  dtensor::registerAllPasses();
  registerMlirOptions();
  // --debug and --debug-only (hidden, as in LLVM): shown by --help-hidden
  // with the tool's own options, which HideUnrelatedOptions keeps.
  dtensor::driver::registerDebugOutputOptions();
  for (llvm::StringRef name : {"debug", "debug-only"})
    if (cl::Option *option = cl::getRegisteredOptions().lookup(name))
      option->addCategory(category);
  cl::HideUnrelatedOptions({&category, &mlirCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dtensor-compile: compile a global program into a dtensor artifact\n");

  dtensor::driver::CompileOptions options;
  options.target = target;
  options.entry = entry;
  for (llvm::StringRef text : gradients) {
    auto [function, result] = text.split(':');
    dtensor::driver::CompileOptions::Gradient gradient{function.str(), 0};
    if (function.empty() ||
        (!result.empty() && result.getAsInteger(10, gradient.result))) {
      llvm::errs() << "dtensor-compile: --gradient '" << text
                   << "': expected FUNCTION or FUNCTION:RESULT (a result "
                      "number)\n";
      return 1;
    }
    options.gradients.push_back(std::move(gradient));
  }
  options.worldSize = worldSize;
  options.reference = !noReference;
  options.customOpLibraries.assign(customOpLibraries.begin(),
                                   customOpLibraries.end());
  if (commReport.getNumOccurrences())
    options.commReport = commReport.empty() ? "text" : commReport.getValue();
  if (options.commReport != "" && options.commReport != "text" &&
      options.commReport != "json") {
    llvm::errs() << "dtensor-compile: --comm-report takes text or json, not '"
                 << options.commReport << "'\n";
    return 1;
  }
  if (memoryReport.getNumOccurrences())
    options.memoryReport =
        memoryReport.empty() ? "text" : memoryReport.getValue();
  if (options.memoryReport != "" && options.memoryReport != "text" &&
      options.memoryReport != "json") {
    llvm::errs() << "dtensor-compile: --memory-report takes text or json, "
                    "not '"
                 << options.memoryReport << "'\n";
    return 1;
  }
  if (!memoryReportFile.empty() && options.memoryReport.empty()) {
    llvm::errs() << "dtensor-compile: --memory-report-file needs "
                    "--memory-report\n";
    return 1;
  }
  options.memoryReportFile = memoryReportFile;
  options.visualize.assign(visualize.begin(), visualize.end());
  options.topology = topology;
  // A file that does not read is reported before anything is compiled (the
  // passes read it again, against each mesh).
  if (!topology.empty()) {
    dtensor::rt::Topology file;
    if (std::string error = dtensor::rt::readTopologyFile(topology, file);
        !error.empty()) {
      llvm::errs() << "dtensor-compile: --topology: " << error << "\n";
      return 1;
    }
  }
  if (computeGflops.getNumOccurrences() &&
      !(computeGflops > 0 && std::isfinite(computeGflops))) {
    llvm::errs() << "dtensor-compile: --compute-gflops must be a positive "
                    "number, not "
                 << computeGflops << "\n";
    return 1;
  }
  options.computeGflops = computeGflops;
  options.visualizeSvgDir = visualizeSvg;
  // DTENSOR_LOG and --explain add up; a bare --explain is every stage.
  const char *log = std::getenv("DTENSOR_LOG");
  for (auto [source, text] :
       {std::pair<const char *, std::string>{"DTENSOR_LOG", log ? log : ""},
        {"--explain",
         explain.getNumOccurrences()
             ? (explain.empty() ? std::string("all") : explain.getValue())
             : std::string()}}) {
    std::string error;
    std::optional<dtensor::driver::ExplainCategories> categories =
        dtensor::driver::parseExplainCategories(text, error);
    if (!categories) {
      llvm::errs() << "dtensor-compile: " << source << ": " << error << "\n";
      return 1;
    }
    options.explain.propagate |= categories->propagate;
    options.explain.partition |= categories->partition;
    options.explain.fuse |= categories->fuse;
  }
  if (!visualizeSvg.empty() && visualize.empty()) {
    llvm::errs() << "dtensor-compile: --visualize-svg needs --visualize\n";
    return 1;
  }
  if (worldSize < 0) {
    llvm::errs() << "dtensor-compile: --world-size must be positive\n";
    return 1;
  }
  options.bucketBytes = bucketBytes;
  options.overlap = !noOverlap;
  options.statistics = passStatistics;
  options.cpu.cpu = cpu;
  options.cpu.features = cpuFeatures;
  options.cpu.optLevel = optLevel;
  options.dumpPerRank = dumpPerRank;
  options.configurePassManager = configurePassManager;
  if (target != "cuda" &&
      (gpuArch.getNumOccurrences() || cudaToolkit.getNumOccurrences() ||
       gpuBlockSize.getNumOccurrences())) {
    llvm::errs() << "dtensor-compile: --gpu-arch, --cuda-toolkit and "
                    "--gpu-block-size apply to --target cuda only\n";
    return 1;
  }
  if (gpuBlockSize < 1 || gpuBlockSize > 1024) {
    llvm::errs() << "dtensor-compile: --gpu-block-size " << gpuBlockSize
                 << " is outside [1, 1024]\n";
    return 1;
  }
  if (emulateGpuKernels && target != "cpu") {
    llvm::errs() << "dtensor-compile: --emulate-gpu-kernels applies to "
                    "--target cpu only\n";
    return 1;
  }
  options.lowering.emulateGpuKernels = emulateGpuKernels;
  options.lowering.parallelLoops = parallelLoops;
  options.fusedAttention = !noFusedAttention;
  options.gpu.chip = gpuArch;
  options.gpu.toolkit = cudaToolkit;
  options.gpu.blockSize = gpuBlockSize;
  for (const std::string &text : meshes) {
    dtensor::driver::MeshOverride override;
    if (std::string error = dtensor::driver::parseMeshOverride(text, override);
        !error.empty()) {
      llvm::errs() << "dtensor-compile: " << error << "\n";
      return 1;
    }
    options.meshOverrides.push_back(std::move(override));
  }

  DialectRegistry registry;
  dtensor::registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  // The NVVM target, which serializes the CUDA target's kernels.
  dtensor::codegen::registerGpuTargetInterfaces(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point into the plan or the MLIR file; the op in MLIR's
  // generic form after each is noise to a plan's author. Shown on request
  // (--mlir-print-op-on-diagnostic).
  if (!cl::getRegisteredOptions()
           .lookup("mlir-print-op-on-diagnostic")
           ->getNumOccurrences())
    context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // Errors about the command line or the files around the program have no
  // location in it: one line, named after the tool.
  ScopedDiagnosticHandler toolDiagnostics(
      &context, [](Diagnostic &diag) -> LogicalResult {
        if (!isa<UnknownLoc>(diag.getLocation()))
          return failure();
        const char *kind =
            diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
            : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                                : "note";
        llvm::errs() << "dtensor-compile: " << kind << ": " << diag << "\n";
        return success();
      });
  std::string message;
  auto file = openInputFile(inputFile, &message);
  if (!file) {
    llvm::errs() << "dtensor-compile: " << message << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  if (llvm::StringRef(inputFile).ends_with(".json")) {
    // A mesh given on the command line replaces the plan's, so the world
    // size is checked against it later, by compileArtifact.
    dtensor::frontend::ImportOptions import;
    if (meshes.empty())
      import.worldSize = worldSize;
    for (const dtensor::driver::MeshOverride &override : options.meshOverrides)
      import.meshOverrides.push_back({override.mesh, override.shape});
    module = dtensor::frontend::importModelPlan(sourceMgr, &context, import);
  } else {
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;
  if (failed(dtensor::driver::compileArtifact(*module, options, outputDir)))
    return 1;
  return 0;
}
