//===- ImportJson.cpp - JSON model plan to global IR ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reads the plan and its entries, then imports each entry as one function
// of the module (FunctionImporter.h).
//
// Grouped-query attention: a colwise key/value projection whose key/value
// heads the style's mesh dim does not divide is applied replicated (as vLLM
// replicates KV heads); the head count is known once the attention op is
// emitted, so such a plan is imported a second time.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/ImportJson.h"

#include "FunctionImporter.h"
#include "ModuleTree.h"
#include "TrainingSection.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Frontend/ModelPlan.h"
#include "dtensor/Frontend/PlanEntries.h"
#include "dtensor/InitAllDialects.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

#include <memory>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

/// Gives `mesh` the shapes of `overrides` that fit it (the others are for
/// the caller to report).
static void applyMeshOverrides(MeshDecl &mesh,
                               llvm::ArrayRef<MeshShapeOverride> overrides) {
  for (const MeshShapeOverride &override : overrides) {
    if (override.mesh.empty() || override.mesh == "mesh") {
      if (override.shape.size() == mesh.shape.size())
        mesh.shape.assign(override.shape.begin(), override.shape.end());
      continue;
    }
    auto *it = llvm::find(mesh.names, override.mesh);
    if (it != mesh.names.end() && override.shape.size() == 1)
      mesh.shape[it - mesh.names.begin()] = override.shape.front();
  }
}

OwningOpRef<ModuleOp>
dtensor::frontend::importModelPlan(llvm::SourceMgr &sourceMgr,
                                   MLIRContext *context,
                                   const ImportOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();

  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef filename = buffer->getBufferIdentifier();
  JsonLocator locator(context, filename);

  JsonParseError parseError;
  std::optional<JsonNode> root = parseJson(buffer->getBuffer(), parseError);
  if (!root) {
    emitError(FileLineColLoc::get(context, filename, parseError.line,
                                  parseError.column))
        << "malformed JSON: " << parseError.message;
    return nullptr;
  }
  FailureOr<PlanEntries> entries = readPlanEntries(*root, locator);
  if (failed(entries))
    return nullptr;

  // Each entry is the plan with its dims' sizes written in. An error that
  // only one entry's sizes cause names the entry.
  struct EntryPlan {
    const EntryDecl *entry;
    std::unique_ptr<JsonNode> root;
    ModelPlan plan;
    std::optional<ModuleTree> tree;
  };
  std::vector<EntryPlan> plans;
  plans.reserve(entries->entries.size());
  const EntryDecl *current = nullptr;
  ScopedDiagnosticHandler noteEntry(context, [&](Diagnostic &diag) {
    if (current && current->node &&
        diag.getSeverity() == DiagnosticSeverity::Error)
      diag.attachNote(locator.get(*current->node))
          << "in entry '" << current->name << "' (" << describeDims(*current)
          << ")";
    return failure(); // Reported by the enclosing handler.
  });
  for (const EntryDecl &entry : entries->entries) {
    current = entries->listed && !entry.dims.empty() ? &entry : nullptr;
    EntryPlan &entryPlan = plans.emplace_back();
    entryPlan.entry = &entry;
    entryPlan.root = std::make_unique<JsonNode>(specializePlan(*root, entry));
    FailureOr<ModelPlan> plan = readModelPlan(*entryPlan.root, locator);
    if (failed(plan))
      return nullptr;
    if (entries->listed)
      plan->name = entry.name;
    applyMeshOverrides(plan->mesh, options.meshOverrides);
    int64_t devices = 1;
    for (int64_t size : plan->mesh.shape)
      devices *= size;
    if (options.worldSize > 0 && devices > options.worldSize) {
      current = nullptr;
      locator.emitError(*plan->mesh.node->get("shape"))
          << "the mesh has " << devices << " devices but the world has only "
          << options.worldSize << " rank(s)";
      return nullptr;
    }
    entryPlan.plan = std::move(*plan);
    FailureOr<ModuleTree> tree = ModuleTree::build(entryPlan.plan, locator);
    if (failed(tree))
      return nullptr;
    entryPlan.tree = std::move(*tree);
  }

  // Each import may find key/value projections to replicate, which change
  // the layouts of values emitted before it found them: then again, with
  // them. Each round only adds some, so this ends.
  ReplicatedProjections replicated;
  for (;;) {
    OwningOpRef<ModuleOp> module =
        ModuleOp::create(FileLineColLoc::get(context, filename, 1, 1));
    ReplicatedProjections discovered;
    for (EntryPlan &entryPlan : plans) {
      current = entries->listed && !entryPlan.entry->dims.empty()
                    ? entryPlan.entry
                    : nullptr;
      FunctionImporter importer(entryPlan.plan, *entryPlan.tree, locator,
                                *module, replicated);
      if (failed(importer.run()))
        return nullptr;
      for (const auto &projection : importer.getDiscovered())
        discovered[projection.getKey()] = projection.getValue();
    }
    current = nullptr;
    if (!discovered.empty()) {
      for (const auto &projection : discovered)
        replicated[projection.getKey()] = projection.getValue();
      continue;
    }
    if (entries->listed && plans.size() > 1)
      (*module)->setAttr(DTensorDialect::getDefaultEntryAttrName(),
                         StringAttr::get(context, plans.front().plan.name));
    // The plan's rotation of context parallelism, for
    // --dtensor-ring-attention (entries share the plan's setting).
    for (EntryPlan &entryPlan : plans)
      if (entryPlan.plan.contextParallel &&
          !entryPlan.plan.contextParallel->rotateMethod.empty())
        (*module)->setAttr(
            DTensorDialect::getRotateMethodAttrName(),
            StringAttr::get(context,
                            entryPlan.plan.contextParallel->rotateMethod));
    // The training plan, of the default entry's forward.
    if (const JsonNode *training = plans.front().plan.trainingNode)
      if (failed(
              addTrainingPlan(*module, plans.front().plan, *training, locator)))
        return nullptr;
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }
}

void dtensor::frontend::registerImportJsonTranslation() {
  static llvm::cl::opt<int64_t> worldSize(
      "import-world-size",
      llvm::cl::desc("--import-json: ranks the program will run on; a larger "
                     "mesh is an error (default: any)"),
      llvm::cl::init(0));
  TranslateToMLIRRegistration registration(
      "import-json", "Import a JSON model plan (docs/model-plan.md)",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        ImportOptions options;
        options.worldSize = worldSize;
        return OwningOpRef<Operation *>(
            importModelPlan(sourceMgr, context, options).release());
      },
      registerAllDialects);
}
