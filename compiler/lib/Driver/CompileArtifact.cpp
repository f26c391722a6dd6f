//===- CompileArtifact.cpp - Global program to artifact -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the pipeline of DESIGN.md on a global-level module: propagate,
// partition, fuse collectives, lower to the CPU target and emit the shared
// object; builds the single-device reference program from a copy taken
// before any of it; and writes the manifest describing both. Everything is
// written to a temporary directory first and renamed into place at the end,
// so a failure leaves no half-written artifact.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Driver/CompileArtifact.h"

#include "IndexBounds.h"
#include "MemoryReport.h"
#include "RowWrites.h"

#include "CustomOpKernels.h"
#include "dtensor/Formats/Manifest.h"

#include "dtensor/Attention/Passes.h"
#include "dtensor/Autodiff/Passes.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Driver/Pipelines.h"
#include "dtensor/Partition/Passes.h"
#include "dtensor/Reports/Passes.h"
#include "dtensor/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"

#include <optional>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::driver;

static constexpr llvm::StringLiteral kLibraryName = "program.so";
static constexpr llvm::StringLiteral kReferenceName = "reference.so";

std::string dtensor::driver::parseMeshOverride(llvm::StringRef text,
                                               MeshOverride &override) {
  override = {};
  auto [name, shape] = text.rsplit('=');
  if (shape.empty() && !text.contains('=')) {
    shape = name;
    name = "";
  }
  override.mesh = name.str();
  llvm::SmallVector<llvm::StringRef> sizes;
  shape.split(sizes, 'x');
  for (llvm::StringRef size : sizes) {
    int64_t value;
    if (size.getAsInteger(10, value) || value <= 0)
      return "--mesh '" + text.str() +
             "': expected [NAME=]SHAPE with SHAPE like 4 or 2x2 (positive "
             "sizes)";
    override.shape.push_back(value);
  }
  return "";
}

/// An error about the command line or the files around the program: a
/// message without a location in the program (and without the program
/// printed after it).
static InFlightDiagnostic emitToolError(ModuleOp module) {
  return mlir::emitError(UnknownLoc::get(module.getContext()));
}

/// `@name [a, b]` for each mesh (its dim names, `?` for unnamed dims).
static std::string describeMeshes(ArrayRef<MeshOp> meshes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(meshes, os, [&](MeshOp mesh) {
    os << "@" << mesh.getSymName() << " [";
    for (int64_t dim = 0; dim < mesh.getRank(); ++dim) {
      if (dim)
        os << ", ";
      std::optional<ArrayAttr> names = mesh.getDimNames();
      if (names && dim < static_cast<int64_t>(names->size()))
        os << cast<StringAttr>((*names)[dim]).getValue();
      else
        os << "?";
    }
    os << "]";
  });
  return text;
}

/// The index of the dim of `mesh` named `name`, if any.
static std::optional<int64_t> findMeshDim(MeshOp mesh, llvm::StringRef name) {
  std::optional<ArrayAttr> names = mesh.getDimNames();
  if (!names)
    return std::nullopt;
  for (auto [index, attr] : llvm::enumerate(*names))
    if (cast<StringAttr>(attr).getValue() == name)
      return index;
  return std::nullopt;
}

/// Gives the overridden meshes their new shapes (row-major device ids). A
/// name is a mesh's symbol (the whole shape), else the name of one mesh
/// dim (its size alone): `--mesh tp=4` for a plan whose mesh dim is tp.
static LogicalResult applyMeshOverrides(ModuleOp module,
                                        ArrayRef<MeshOverride> overrides) {
  auto meshes = llvm::to_vector(module.getOps<MeshOp>());
  for (const MeshOverride &override : overrides) {
    std::string flag =
        "--mesh " + (override.mesh.empty() ? "" : override.mesh + "=");
    for (auto [i, size] : llvm::enumerate(override.shape))
      flag += (i ? "x" : "") + std::to_string(size);
    MeshOp mesh;
    if (override.mesh.empty()) {
      if (meshes.size() != 1)
        return emitToolError(module)
               << flag
               << ": without a name, --mesh needs a program with exactly "
                  "one mesh; this one has "
               << meshes.size()
               << (meshes.empty() ? "" : ": " + describeMeshes(meshes));
      mesh = meshes.front();
    } else {
      auto it = llvm::find_if(meshes, [&](MeshOp candidate) {
        return candidate.getSymName() == override.mesh;
      });
      if (it != meshes.end()) {
        mesh = *it;
      } else {
        // A mesh dim's name.
        SmallVector<std::pair<MeshOp, int64_t>> dims;
        for (MeshOp candidate : meshes)
          if (std::optional<int64_t> dim =
                  findMeshDim(candidate, override.mesh))
            dims.push_back({candidate, *dim});
        if (dims.empty())
          return emitToolError(module)
                 << flag << ": the program has no mesh @" << override.mesh
                 << " and no mesh dim named '" << override.mesh << "'"
                 << (meshes.empty()
                         ? std::string("; it has no mesh")
                         : "; its meshes: " + describeMeshes(meshes));
        if (dims.size() > 1)
          return emitToolError(module)
                 << flag << ": several meshes have a dim named '"
                 << override.mesh << "' (" << describeMeshes(meshes)
                 << "); give the whole shape of one with MESH=SHAPE";
        if (override.shape.size() != 1)
          return emitToolError(module)
                 << flag << ": '" << override.mesh << "' is a dim of @"
                 << dims.front().first.getSymName()
                 << "; give it one size, e.g. " << override.mesh << "="
                 << override.shape.front();
        auto [dimMesh, dim] = dims.front();
        SmallVector<int64_t> shape(dimMesh.getShape());
        shape[dim] = override.shape.front();
        dimMesh.setShape(shape);
        dimMesh.removeDeviceIdsAttr();
        continue;
      }
    }
    if (static_cast<int64_t>(override.shape.size()) != mesh.getRank())
      return emitToolError(module)
             << flag << ": @" << mesh.getSymName() << " has " << mesh.getRank()
             << " dims (" << describeMeshes({mesh}) << "); the new shape has "
             << override.shape.size();
    mesh.setShape(override.shape);
    mesh.removeDeviceIdsAttr();
  }
  // Layouts are checked against the new shapes.
  return verify(module);
}

/// The entry function: `name`, else `main`, else the only public function
/// with a body.
/// The entry functions, every public function with a body, and the default
/// one among them (`name`, else @main, else the only one) first.
static FailureOr<SmallVector<func::FuncOp>> findEntries(ModuleOp module,
                                                        llvm::StringRef name) {
  SmallVector<func::FuncOp> entries;
  for (auto function : module.getOps<func::FuncOp>())
    if (function.isPublic() && !function.isExternal())
      entries.push_back(function);
  llvm::StringRef defaultName = name;
  if (auto attr = module->getAttrOfType<StringAttr>(
          DTensorDialect::getDefaultEntryAttrName());
      defaultName.empty() && attr)
    defaultName = attr.getValue();
  if (defaultName.empty()) {
    if (llvm::any_of(entries,
                     [](func::FuncOp f) { return f.getSymName() == "main"; }))
      defaultName = "main";
    else if (entries.size() == 1)
      defaultName = entries.front().getSymName();
  }
  auto *it = llvm::find_if(entries, [&](func::FuncOp f) {
    return !defaultName.empty() && f.getSymName() == defaultName;
  });
  if (it == entries.end()) {
    if (!name.empty())
      emitToolError(module) << "no function @" << name
                            << " with a body to use as the entry point";
    else
      emitToolError(module) << "cannot tell the entry function: there is no "
                               "@main and "
                            << entries.size()
                            << " public functions with a body; pick one with "
                               "--entry";
    return failure();
  }
  std::rotate(entries.begin(), it, it + 1);
  return entries;
}

/// The runtime's name for a tensor element type.
static std::optional<rt::DType> getDType(Type type) {
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isSignlessInteger(32))
    return rt::DType::I32;
  if (type.isSignlessInteger(64))
    return rt::DType::I64;
  if (type.isSignlessInteger(8))
    return rt::DType::I8;
  if (type.isSignlessInteger(1))
    return rt::DType::Bool;
  return std::nullopt;
}

/// Meshes in module order: the ids the generated code uses.
static std::vector<rt::MeshInfo> collectMeshes(ModuleOp module) {
  std::vector<rt::MeshInfo> meshes;
  for (MeshOp mesh : module.getOps<MeshOp>()) {
    rt::MeshInfo info;
    info.name = mesh.getSymName().str();
    info.shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    if (auto names = mesh.getDimNames())
      for (Attribute name : *names)
        info.dimNames.push_back(cast<StringAttr>(name).str());
    layout::Mesh layoutMesh = mesh.getLayoutMesh();
    for (int64_t i = 0, e = layoutMesh.size(); i < e; ++i)
      info.deviceIds.push_back(layoutMesh.deviceAt(layoutMesh.coordOfIndex(i)));
    meshes.push_back(std::move(info));
  }
  return meshes;
}

/// One argument or result of the partitioned entry function as the runtime
/// sees it: global shape, dtype and layout.
static FailureOr<rt::TensorInfo>
describeTensor(func::FuncOp function, Type type, DictionaryAttr attrs,
               rt::TensorRole role, llvm::StringRef what, unsigned index,
               const std::vector<rt::MeshInfo> &meshes) {
  auto emitError = [&]() {
    return function.emitError() << what << " #" << index << ": ";
  };
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "the runtime passes ranked tensors only, not "
                       << type;
  rt::TensorInfo info;
  info.role = role;
  std::optional<rt::DType> dtype = getDType(tensorType.getElementType());
  if (!dtype)
    return emitError() << "element type " << tensorType.getElementType()
                       << " is not one the runtime supports (f32, f64, f16, "
                          "bf16, i32, i64, i8, i1)";
  info.dtype = *dtype;
  auto name = attrs ? attrs.getAs<StringAttr>(DTensorDialect::getNameAttrName())
                    : StringAttr();
  info.name = name ? name.str()
                   : (role == rt::TensorRole::Output ? "result" : "arg") +
                         std::to_string(index);

  auto layoutAttr =
      attrs ? attrs.getAs<LayoutAttr>(DTensorDialect::getLayoutAttrName())
            : LayoutAttr();
  auto globalShape = attrs ? attrs.getAs<DenseI64ArrayAttr>(
                                 DTensorDialect::getGlobalShapeAttrName())
                           : DenseI64ArrayAttr();
  if (globalShape)
    info.shape.assign(globalShape.asArrayRef().begin(),
                      globalShape.asArrayRef().end());
  else
    info.shape.assign(tensorType.getShape().begin(),
                      tensorType.getShape().end());
  if (llvm::any_of(info.shape, ShapedType::isDynamic))
    return emitError() << "the global shape must be static, not " << type;

  if (!layoutAttr) {
    // No layout: the whole tensor on every rank of the first mesh.
    info.mesh = 0;
    info.placements.assign(meshes.empty() ? 1 : meshes.front().shape.size(),
                           "R");
    return info;
  }
  llvm::StringRef meshName = layoutAttr.getMesh().getValue();
  auto it = llvm::find_if(
      meshes, [&](const rt::MeshInfo &mesh) { return mesh.name == meshName; });
  if (it == meshes.end())
    return emitError() << "unknown mesh @" << meshName;
  info.mesh = it - meshes.begin();
  for (const layout::Placement &placement : layoutAttr.getLayoutPlacements())
    info.placements.push_back(placement.str());
  return info;
}

/// The manifest's form of a weight's initializer.
static rt::Initializer toInitializer(InitAttr init) {
  rt::Initializer initializer;
  switch (init.getKind()) {
  case InitKind::Zeros:
    initializer.kind = rt::InitKind::Zeros;
    break;
  case InitKind::Ones:
    initializer.kind = rt::InitKind::Ones;
    break;
  case InitKind::Constant:
    initializer.kind = rt::InitKind::Constant;
    break;
  case InitKind::Normal:
    initializer.kind = rt::InitKind::Normal;
    break;
  case InitKind::Uniform:
    initializer.kind = rt::InitKind::Uniform;
    break;
  }
  initializer.params[0] = init.getParam(0);
  initializer.params[1] = init.getParam(1);
  return initializer;
}

/// Whether two descriptions of a shared tensor agree (all but the entry).
static bool sameTensor(const rt::TensorInfo &a, const rt::TensorInfo &b) {
  return a.role == b.role && a.dtype == b.dtype && a.shape == b.shape &&
         a.mesh == b.mesh && a.placements == b.placements && a.init == b.init;
}

static std::string describePlacements(const rt::TensorInfo &info) {
  std::string text = "[";
  for (size_t i = 0; i < info.placements.size(); ++i)
    text += (i ? ", " : "") + info.placements[i];
  return text + "]";
}

/// Adds entry `function` (after partitioning) to the manifest: its inputs
/// and outputs (named after the entry when there are several), and the
/// weights and state it shares with the entries before it, which must agree
/// with them. A result updating state is not an output; it must keep the
/// state's layout. Its row writes on inputs are recorded for the runtime to
/// check (RowWrites.h).
/// Describes entry `function` in `manifest`, with the index bounds `bounds`
/// of its arguments; the weights its results update (trained parameters)
/// are added to `trained` as tensor indices.
static LogicalResult describeEntry(func::FuncOp function, bool multiEntry,
                                   rt::Manifest &manifest,
                                   llvm::ArrayRef<IndexBound> bounds,
                                   llvm::SetVector<int64_t> &trained) {
  rt::EntryInfo entry;
  entry.name = function.getSymName().str();
  std::string owner = multiEntry ? entry.name : std::string();
  std::vector<rt::TensorInfo> stateArgs(function.getNumArguments());
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    DictionaryAttr attrs = function.getArgAttrDict(index);
    rt::TensorRole role = rt::TensorRole::Input;
    if (attrs && attrs.get(DTensorDialect::getWeightAttrName()))
      role = rt::TensorRole::Weight;
    else if (attrs && attrs.get(DTensorDialect::getStateAttrName()))
      role = rt::TensorRole::State;
    auto info = describeTensor(function, type, attrs, role, "argument", index,
                               manifest.meshes);
    if (failed(info))
      return failure();
    if (auto init = function.getArgAttrOfType<InitAttr>(
            index, DTensorDialect::getInitAttrName()))
      info->init = toInitializer(init);
    if (role == rt::TensorRole::State || role == rt::TensorRole::Weight)
      stateArgs[index] = *info;
    if (role == rt::TensorRole::Input) {
      info->entry = owner;
    } else {
      // Shared: the first entry that takes it describes it.
      auto it = llvm::find_if(manifest.tensors, [&](const rt::TensorInfo &t) {
        return t.entry.empty() && t.name == info->name;
      });
      if (it != manifest.tensors.end()) {
        if (!sameTensor(*it, *info))
          return function.emitError()
                 << "argument #" << index << ": the "
                 << rt::tensorRoleName(role) << " '" << info->name
                 << "' differs from the " << rt::tensorRoleName(it->role)
                 << " of that name another entry takes (role, dtype, "
                    "shape, layout "
                 << describePlacements(*it) << " vs "
                 << describePlacements(*info) << " and initializer must agree)";
        entry.arguments.push_back(it - manifest.tensors.begin());
        continue;
      }
    }
    entry.arguments.push_back(manifest.tensors.size());
    manifest.tensors.push_back(std::move(*info));
  }
  for (auto [index, type] : llvm::enumerate(function.getResultTypes())) {
    auto info = describeTensor(
        function, type, function.getResultAttrDict(index),
        rt::TensorRole::Output, "result", index, manifest.meshes);
    if (failed(info))
      return failure();
    if (auto updates = function.getResultAttrOfType<IntegerAttr>(
            index, DTensorDialect::getUpdatesAttrName())) {
      const rt::TensorInfo &state = stateArgs[updates.getInt()];
      const char *what =
          state.role == rt::TensorRole::Weight ? "weight" : "state";
      if (info->mesh != state.mesh || info->placements != state.placements)
        return function.emitError()
               << "result #" << index << " updates the " << what << " '"
               << state.name << "' laid out as " << describePlacements(state)
               << " with a value laid out as " << describePlacements(*info)
               << "; give the result the " << what << "'s dtensor.layout";
      if (state.role == rt::TensorRole::Weight)
        trained.insert(entry.arguments[updates.getInt()]);
      continue;
    }
    info->entry = owner;
    entry.results.push_back(manifest.tensors.size());
    manifest.tensors.push_back(std::move(*info));
  }
  std::vector<const rt::TensorInfo *> arguments;
  for (int64_t index : entry.arguments)
    arguments.push_back(&manifest.tensors[index]);
  entry.rowWrites = collectRowWrites(function, arguments);
  for (const IndexBound &bound : bounds)
    if (bound.argument < arguments.size() &&
        arguments[bound.argument]->role == rt::TensorRole::Input)
      entry.indexBounds.push_back({arguments[bound.argument]->name, bound.bound,
                                   bound.table, bound.ignoreIndex});
  manifest.entries.push_back(std::move(entry));
  return success();
}

/// The groups the lowered program's runtime calls name, from the module
/// attributes the CPU lowering records.
static LogicalResult collectGroups(ModuleOp module,
                                   const std::vector<rt::MeshInfo> &meshes,
                                   std::vector<rt::GroupInfo> &groups) {
  auto commMeshes =
      module->getAttrOfType<ArrayAttr>(DTensorDialect::getCommMeshesAttrName());
  auto commGroups =
      module->getAttrOfType<ArrayAttr>(DTensorDialect::getCommGroupsAttrName());
  // Mesh ids in the code must be the manifest's: both are module order.
  if (commMeshes)
    for (auto [index, mesh] : llvm::enumerate(commMeshes))
      if (index >= meshes.size() ||
          cast<FlatSymbolRefAttr>(mesh).getValue() != meshes[index].name)
        return emitToolError(module)
               << "internal error: the lowered program numbers meshes "
                  "differently from the module";
  if (!commGroups)
    return success();
  for (Attribute entry : commGroups) {
    auto dict = cast<DictionaryAttr>(entry);
    llvm::StringRef meshName = dict.getAs<FlatSymbolRefAttr>("mesh").getValue();
    auto it = llvm::find_if(meshes, [&](const rt::MeshInfo &mesh) {
      return mesh.name == meshName;
    });
    if (it == meshes.end())
      return emitToolError(module)
             << "internal error: group on unknown mesh @" << meshName;
    rt::GroupInfo group;
    group.mesh = it - meshes.begin();
    auto dims = dict.getAs<DenseI64ArrayAttr>("mesh_dims").asArrayRef();
    group.meshDims.assign(dims.begin(), dims.end());
    groups.push_back(std::move(group));
  }
  return success();
}

/// The collective sites --dtensor-number-collective-sites recorded.
static void collectSites(ModuleOp module,
                         std::vector<rt::CollectiveSiteInfo> &sites) {
  auto table = module->getAttrOfType<ArrayAttr>(
      DTensorDialect::getCollectiveSitesAttrName());
  if (!table)
    return;
  for (Attribute entry : table) {
    auto dict = cast<DictionaryAttr>(entry);
    rt::CollectiveSiteInfo site;
    auto text = [&](llvm::StringRef key) {
      auto value = dict.getAs<StringAttr>(key);
      return value ? value.str() : std::string();
    };
    site.kind = text("kind");
    site.reduction = text("reduction");
    site.module = text("module");
    site.position = text("position");
    if (auto bytes = dict.getAs<IntegerAttr>("bytes_sent"))
      site.bytesSent = bytes.getInt();
    sites.push_back(std::move(site));
  }
}

/// Writes `module` to `path`.
static LogicalResult writeModule(ModuleOp module, llvm::StringRef path) {
  std::string message;
  auto file = openOutputFile(path, &message);
  if (!file)
    return emitToolError(module) << "cannot write " << path << ": " << message;
  module.print(file->os());
  file->keep();
  return success();
}

namespace {
/// A directory removed on destruction unless kept.
class TemporaryDirectory {
public:
  explicit TemporaryDirectory(std::string path) : path(std::move(path)) {}
  ~TemporaryDirectory() {
    if (!kept)
      llvm::sys::fs::remove_directories(path);
  }
  const std::string &str() const { return path; }
  void keep() { kept = true; }

private:
  std::string path;
  bool kept = false;
};
} // namespace

/// Moves the finished artifact into place, replacing an older artifact but
/// nothing else.
static LogicalResult publish(ModuleOp module, TemporaryDirectory &staging,
                             llvm::StringRef output) {
  if (llvm::sys::fs::exists(output)) {
    llvm::SmallString<256> manifest(output);
    llvm::sys::path::append(manifest, "manifest.json");
    if (!llvm::sys::fs::is_directory(output) ||
        !llvm::sys::fs::exists(manifest))
      return emitToolError(module)
             << "refusing to replace " << output
             << ": it exists and is not a dtensor artifact directory";
    if (std::error_code error = llvm::sys::fs::remove_directories(output))
      return emitToolError(module)
             << "cannot replace " << output << ": " << error.message();
  }
  if (std::error_code error = llvm::sys::fs::rename(staging.str(), output))
    return emitToolError(module) << "cannot move the artifact to " << output
                                 << ": " << error.message();
  staging.keep();
  return success();
}

/// Lets the caller set up each pass manager (IR printing, timing,
/// statistics, crash reproducers: MLIR's command-line options).
static LogicalResult configure(const CompileOptions &options, PassManager &pm) {
  if (!options.configurePassManager)
    return success();
  return options.configurePassManager(pm);
}

LogicalResult dtensor::driver::compileArtifact(ModuleOp module,
                                               const CompileOptions &options,
                                               llvm::StringRef output) {
  MLIRContext *context = module.getContext();
  if (options.target != "cpu" && options.target != "cuda")
    return emitToolError(module) << "unknown target '" << options.target
                                 << "' (expected cpu or cuda)";
  codegen::GpuLoweringOptions gpu = options.gpu;
  if (options.target == "cuda") {
    if (gpu.toolkit.empty())
      gpu.toolkit = codegen::findCudaToolkit();
    llvm::SmallString<256> ptxas(gpu.toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (gpu.toolkit.empty() || !llvm::sys::fs::can_execute(ptxas))
      return emitToolError(module)
             << "--target cuda needs the CUDA toolkit (ptxas, libdevice): "
             << (gpu.toolkit.empty()
                     ? std::string("none found in $CUDA_PATH or "
                                   "/usr/local/cuda")
                     : "no executable " + ptxas.str().str())
             << "; name its root with --cuda-toolkit";
    if (!llvm::StringRef(gpu.chip).starts_with("sm_"))
      return emitToolError(module) << "--gpu-arch '" << gpu.chip
                                   << "': expected an architecture like sm_90";
  }
  if (failed(applyMeshOverrides(module, options.meshOverrides)))
    return failure();
  // The default entry is chosen among the functions the user wrote.
  std::string defaultEntry = options.entry;
  bool training =
      static_cast<bool>(module->getAttr(DTensorDialect::getTrainingAttrName()));
  if ((!options.gradients.empty() || training) && defaultEntry.empty()) {
    FailureOr<SmallVector<func::FuncOp>> written =
        findEntries(module, options.entry);
    if (failed(written))
      return failure();
    defaultEntry = written->front().getSymName().str();
  }
  if (!options.gradients.empty()) {
    // Gradient functions are global functions like the others: they are
    // partitioned, compiled and described as entries with them.
    PassManager differentiate(context);
    if (failed(configure(options, differentiate)))
      return failure();
    for (const CompileOptions::Gradient &gradient : options.gradients) {
      DifferentiateOptions differentiateOptions;
      differentiateOptions.function = gradient.function;
      differentiateOptions.result = gradient.result;
      differentiate.addPass(createDifferentiate(differentiateOptions));
    }
    if (failed(differentiate.run(module)))
      return failure();
  }
  // The token ids of the training entries, checked by the runtime before
  // each step (IndexBounds.h).
  llvm::StringMap<std::vector<IndexBound>> indexBounds;
  if (training) {
    // The training plan's train_step and eval_step, entries beside the
    // forward that serve from the same (trained) weights.
    PassManager train(context);
    if (failed(configure(options, train)))
      return failure();
    train.addPass(createBuildTrainStep());
    if (failed(train.run(module)))
      return failure();
    for (llvm::StringRef name : {"train_step", "eval_step"})
      if (auto function = module.lookupSymbol<func::FuncOp>(name))
        indexBounds[name] = collectIndexBounds(function);
  }
  FailureOr<SmallVector<func::FuncOp>> entries =
      findEntries(module, defaultEntry);
  if (failed(entries))
    return failure();
  std::string entryName = entries->front().getSymName().str();
  SmallVector<std::string> entryNames;
  for (func::FuncOp entry : *entries)
    entryNames.push_back(entry.getSymName().str());

  rt::Manifest manifest;
  manifest.compilerVersion = DTENSOR_VERSION;
  manifest.target = options.target;
  if (options.target == "cuda") {
    manifest.gpuArch = gpu.chip;
    manifest.referenceTarget = "cpu";
  }
  manifest.targetCpu = options.cpu.cpu.empty()
                           ? llvm::sys::getHostCPUName().str()
                           : options.cpu.cpu;
  manifest.entry = entryName;
  manifest.library = kLibraryName.str();
  manifest.meshes = collectMeshes(module);
  int64_t largestMesh = 1;
  for (const rt::MeshInfo &mesh : manifest.meshes)
    largestMesh = std::max(largestMesh, layout::Mesh(mesh.shape).size());
  manifest.worldSize = options.worldSize ? options.worldSize : largestMesh;
  if (manifest.worldSize < largestMesh)
    return emitToolError(module)
           << "--world-size " << manifest.worldSize
           << " is smaller than a mesh of " << largestMesh << " devices";
  if (manifest.meshes.empty())
    manifest.meshes.push_back({"world", {manifest.worldSize}, {}, {}});
  if (manifest.meshes.front().deviceIds.empty())
    for (int64_t i = 0; i < manifest.worldSize; ++i)
      manifest.meshes.front().deviceIds.push_back(i);

  if (failed(collectCustomOpKernels(module, options.target,
                                    options.customOpLibraries, manifest)))
    return failure();

  // The single-device program, from the module as the user wrote it.
  OwningOpRef<ModuleOp> reference;
  if (options.reference)
    reference = module.clone();

  PassManager distribute(context);
  DistributeOptions distributeOptions;
  distributeOptions.bucketBytes = options.bucketBytes;
  distributeOptions.overlap = options.overlap;
  distributeOptions.commReport = options.commReport;
  distributeOptions.visualize = options.visualize;
  distributeOptions.visualizeSvgDir = options.visualizeSvgDir;
  distributeOptions.explain = options.explain;
  distributeOptions.topology = options.topology;
  distributeOptions.computeGflops = options.computeGflops;
  distributeOptions.statistics = options.statistics;
  distributeOptions.target =
      getTargetCapabilities(options.target, options.fusedAttention,
                            options.lowering.emulateGpuKernels);
  buildDistributePipeline(distribute, distributeOptions);
  // Numbered for the runtime's trace (dtensor-run --comm-trace).
  distribute.addPass(createNumberCollectiveSites());
  if (failed(configure(options, distribute)))
    return failure();
  if (failed(distribute.run(module)))
    return failure();
  if (!options.dumpPerRank.empty() &&
      failed(writeModule(module, options.dumpPerRank)))
    return failure();
  // Weights that an entry trains are parameters (format version 2).
  llvm::SetVector<int64_t> trained;
  for (const std::string &name : entryNames)
    if (failed(describeEntry(module.lookupSymbol<func::FuncOp>(name),
                             entryNames.size() > 1, manifest,
                             indexBounds.lookup(name), trained)))
      return failure();
  for (int64_t index : trained)
    manifest.tensors[index].role = rt::TensorRole::Parameter;
  manifest.formatVersion = rt::formatVersionFor(manifest.tensors);
  collectSites(module, manifest.collectiveSites);

  std::string staging =
      (output + ".tmp." + llvm::Twine(llvm::sys::Process::getProcessId()))
          .str();
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code error = llvm::sys::fs::create_directories(staging))
    return emitToolError(module)
           << "cannot create " << staging << ": " << error.message();
  TemporaryDirectory stagingDir(staging);

  // The memory account: roles, gradients and saved activations from the
  // per-rank tensor program, allocations from the same program once the
  // lowering has bufferized it.
  std::optional<memory::MemoryAnalysis> memoryAnalysis;
  codegen::CpuLoweringOptions lowering = options.lowering;
  if (!options.memoryReport.empty()) {
    memoryAnalysis.emplace(module, entryNames, manifest.worldSize);
    lowering.afterBufferization = gpu.afterBufferization =
        readAllocationsInto(*memoryAnalysis);
  }
  PassManager lower(context);
  if (failed(configure(options, lower)))
    return failure();
  if (options.target == "cuda") {
    gpu.fuseElementwise = options.lowering.fuseElementwise;
    gpu.matmulToRuntime = options.lowering.matmulToRuntime;
    codegen::buildGpuLoweringPipeline(lower, gpu);
  } else {
    codegen::buildCpuLoweringPipeline(lower, lowering);
  }
  if (failed(lower.run(module)) ||
      failed(collectGroups(module, manifest.meshes, manifest.groups)))
    return failure();
  if (memoryAnalysis &&
      failed(writeMemoryReport(module, *memoryAnalysis, options.memoryReport,
                               options.memoryReportFile)))
    return failure();
  llvm::SmallString<256> libraryPath(staging);
  llvm::sys::path::append(libraryPath, manifest.library);
  if (failed(codegen::emitCpuSharedObject(module, options.cpu, libraryPath)))
    return failure();

  if (reference) {
    PassManager single(context);
    if (failed(configure(options, single)))
      return failure();
    single.addPass(createStripLayouts());
    // The reference is plain CPU code whatever the target: what --check
    // compares the target's results with. Its attention uses the CPU's
    // kernel unless the user turned fused attention off.
    DecomposeAttentionOptions decompose;
    decompose.kernel = getTargetCapabilities("cpu", options.fusedAttention,
                                             /*emulateGpuKernels=*/false)
                           .attentionKernel;
    single.addNestedPass<func::FuncOp>(createDecomposeAttention(decompose));
    if (decompose.kernel)
      single.addNestedPass<func::FuncOp>(createFoldAttentionViews());
    codegen::CpuLoweringOptions referenceLowering = options.lowering;
    referenceLowering.emulateGpuKernels = false;
    codegen::buildCpuLoweringPipeline(single, referenceLowering);
    if (failed(single.run(*reference)))
      return failure();
    manifest.referenceLibrary = kReferenceName.str();
    llvm::SmallString<256> referencePath(staging);
    llvm::sys::path::append(referencePath, manifest.referenceLibrary);
    if (failed(codegen::emitCpuSharedObject(*reference, options.cpu,
                                            referencePath)))
      return failure();
  }

  if (std::string error = rt::writeManifest(manifest, staging); !error.empty())
    return emitToolError(module) << error;
  return publish(module, stagingDir, output);
}
