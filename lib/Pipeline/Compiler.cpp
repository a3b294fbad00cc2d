//===- Compiler.cpp - the compile() entry point: source to any stage ------===//
//
// One function runs the whole pipeline (docs/design.md), stopping
// after the stage asked for. Diagnostics of every stage are collected as
// text with carets.
//
//===----------------------------------------------------------------------===//
#include "tile/Compiler.h"

#include "dialects/tile/TileDialect.h"
#include "lib/Analysis/AxisInfo.h"
#include "lib/Conversion/Passes.h"
#include "lib/Frontend/Frontend.h"
#include "lib/Pipeline/Registration.h"
#include "lib/Pipeline/Resources.h"
#include "lib/Target/PTX.h"
#include "lib/Target/StageClock.h"
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/GridArgs.h"
#include "tile/Version.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace tile;

namespace {
struct Stage {
  const char *name;
  EmitStage stage;
};
const Stage kStages[] = {
    {"ast", EmitStage::AST},       {"tile", EmitStage::Tile},
    {"optimize", EmitStage::TileOpt}, {"layout", EmitStage::Layout},
    {"gpu", EmitStage::GPU},       {"nvvm", EmitStage::NVVM},
    {"llvm", EmitStage::LLVM},     {"ptx", EmitStage::PTX},
    {"cubin", EmitStage::Cubin},
};

std::string print(mlir::Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

/// "ptr<bf16>", "i32", … as written in .tile source.
std::string sourceTypeName(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto p = llvm::dyn_cast<mlir::tile::PtrType>(t)) {
    mlir::Type e = p.getPointeeType();
    if (mlir::tile::isFp8(e))
      return "ptr<" + mlir::tile::fp8Name(e).str() + ">";
    os << "ptr<" << e << ">";
    return s;
  }
  if (mlir::tile::isFp8(t))
    return mlir::tile::fp8Name(t).str();
  if (t.isInteger(1))
    return "bool";
  if (t.isUnsignedInteger()) // a type parameter such as T = u32
    return "u" + std::to_string(t.getIntOrFloatBitWidth());
  os << t;
  return s;
}

/// Kernel name, parameters and compile-time values from the frontend's IR.
void describeKernel(mlir::ModuleOp module, Manifest &m) {
  module.walk([&](mlir::func::FuncOp fn) {
    if (!fn->hasAttr(mlir::tile::kKernelAttr))
      return;
    m.kernelName = fn.getName().str();
    // tile-persistent (later) appends the logical grid to these parameters.
    m.persistent = mlir::tile::getSchedule(fn).getPersistent();
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      auto name = fn.getArgAttrOfType<mlir::StringAttr>(i, "tile.name");
      // Unsigned arguments carry their source type (the IR is signless).
      auto srcType = fn.getArgAttrOfType<mlir::StringAttr>(i, "tile.type");
      m.params.push_back({name ? name.str() : "arg" + std::to_string(i),
                          srcType ? srcType.str() : sourceTypeName(t),
                          llvm::isa<mlir::tile::PtrType>(t)
                              ? int(mlir::tile::kPointerArgAlignment)
                              : 0});
    }
    if (auto params = fn->getAttrOfType<mlir::DictionaryAttr>(
            mlir::tile::kParamsAttr))
      for (mlir::NamedAttribute a : params) {
        std::string v;
        llvm::raw_string_ostream os(v);
        if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(a.getValue()))
          os << (i.getType().isInteger(1) ? (i.getInt() ? "true" : "false")
                                          : std::to_string(i.getInt()));
        else if (auto f = llvm::dyn_cast<mlir::FloatAttr>(a.getValue()))
          os << f.getValueAsDouble();
        else if (auto ty = llvm::dyn_cast<mlir::TypeAttr>(a.getValue()))
          os << sourceTypeName(ty.getValue());
        else if (auto str = llvm::dyn_cast<mlir::StringAttr>(a.getValue()))
          os << str.getValue(); // a helper function's name
        else
          os << a.getValue();
        m.constants[a.getName().str()] = v;
      }
    if (auto reqs = fn->getAttrOfType<mlir::ArrayAttr>(::tile::frontend::kRequiresAttr))
      for (mlir::Attribute a : reqs) {
        auto d = llvm::cast<mlir::DictionaryAttr>(a);
        auto str = [&](llvm::StringRef key) {
          return d.getAs<mlir::StringAttr>(key).str();
        };
        m.requirements.push_back({str("expr"), str("text"), str("loc")});
      }
    m.blockSize = 32 * int(mlir::tile::getNumWarps(fn));
  });
}

void describeGPU(mlir::ModuleOp module, Manifest &m) {
  module.walk([&](mlir::gpu::GPUFuncOp fn) {
    // Warp-specialized kernels launch a producer warpgroup besides the
    // num_warps warps describeKernel counted.
    if (mlir::DenseI32ArrayAttr block = fn.getKnownBlockSizeAttr())
      m.blockSize = int(block[0]);
    if (auto a = fn->getAttrOfType<mlir::IntegerAttr>(
            mlir::tile::kSharedMemoryAttr))
      m.sharedMemoryBytes = int(a.getInt());
    if (auto args = fn->getAttrOfType<mlir::ArrayAttr>(mlir::tile::kGridArgsAttr)) {
      m.gridArgsKnown = true;
      for (mlir::Attribute a : args)
        m.gridArgs.push_back(llvm::cast<mlir::StringAttr>(a).str());
    }
    if (auto maps = fn->getAttrOfType<mlir::ArrayAttr>(mlir::tile::kTensorMapsAttr))
      for (mlir::Attribute a : maps) {
        llvm::ArrayRef<int64_t> v = llvm::cast<mlir::DenseI64ArrayAttr>(a).asArrayRef();
        tile::TensorMapParam t{int(v[0]), int(v[1]), int(v[2]),
                               int(v[3]), int(v[4]), int(v[5])};
        for (int64_t arg : v.drop_front(6))
          t.strideArgs.push_back(int(arg));
        m.tensorMaps.push_back(t);
      }
  });
}
} // namespace


bool tile::parseEmitStage(const std::string &name, EmitStage &out) {
  for (const Stage &s : kStages)
    if (name == s.name) {
      out = s.stage;
      return true;
    }
  return false;
}

const char *tile::emitStageNames() {
  return "ast, tile, optimize, layout, gpu, nvvm, llvm, ptx, cubin";
}

std::string tile::versionString() {
  return std::string("tilec ") + TILEC_VERSION_STRING + " (LLVM " +
         TILEC_LLVM_VERSION_STRING + ")";
}

namespace {
/// Records the argument of the first pass that fails.
struct FailedPassName : mlir::PassInstrumentation {
  explicit FailedPassName(std::string &name) : name(name) {}
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    if (name.empty())
      name = pass->getArgument().str();
  }
  std::string &name;
};
} // namespace

CompileResult tile::compile(const std::string &source,
                            const std::string &filename,
                            const CompileOptions &options, EmitStage stopAt) {
  CompileResult result;
  StageClock clock(options.timeStages ? &result.stageTimes : nullptr);
  llvm::raw_string_ostream diag(result.diagnostics);
  if (options.arch != "sm_80" && options.arch != "sm_90a") {
    diag << "error: unsupported -arch '" << options.arch
         << "' (supported: sm_80, sm_90a)\n";
    return result;
  }

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // An error points at the source line; the whole function's IR after it
  // ("see current operation") would bury it.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, filename), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diag);

  if (stopAt == EmitStage::AST) {
    llvm::raw_string_ostream os(result.text);
    result.ok = frontend::dumpAST(context, sourceMgr, os);
    return result;
  }
  frontend::FrontendOptions fe;
  fe.defines = options.defines;
  fe.kernel = options.kernel;
  fe.schedule = options.schedule;
  fe.includeDirs = options.includeDirs;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      frontend::buildModule(context, sourceMgr, fe);
  clock.mark("frontend");
  if (!module)
    return result;
  (*module)->setAttr(mlir::tile::kArchAttr,
                     mlir::StringAttr::get(&context, options.arch));
  if (options.remarks)
    (*module)->setAttr(mlir::tile::kRemarksAttr, mlir::UnitAttr::get(&context));
  describeKernel(*module, result.manifest);
  // For errors after MLIR (ptxas): where the kernel is and how it was built.
  std::string kernelAt, kernelWhat;
  module->walk([&](mlir::func::FuncOp fn) {
    if (!fn->hasAttr(mlir::tile::kKernelAttr))
      return;
    if (auto l = llvm::dyn_cast<mlir::FileLineColLoc>(fn.getLoc()))
      kernelAt = (l.getFilename().str() + ":" + std::to_string(l.getLine()) +
                  ":" + std::to_string(l.getColumn()) + ": ");
    kernelWhat = kernelConfig(fn);
  });
  result.manifest.arch = options.arch;
  result.manifest.schedule = options.schedule.str();
  result.manifest.sourceHash = hashHex(source);
  result.manifest.tilecVersion = TILEC_VERSION_STRING;
  result.manifest.llvmVersion = TILEC_LLVM_VERSION_STRING;

  struct Step {
    EmitStage stage;
    const char *name;
    void (*build)(mlir::OpPassManager &);
  };
  const Step steps[] = {{EmitStage::TileOpt, "optimize", buildTileOptPipeline},
                        {EmitStage::Layout, "layout", buildLayoutPipeline},
                        {EmitStage::GPU, "gpu", buildGPUPipeline},
                        {EmitStage::NVVM, "nvvm", buildNVVMPipeline}};
  if (stopAt == EmitStage::Tile) {
    result.text = print(*module);
    result.ok = true;
    return result;
  }
  for (const Step &step : steps) {
    // The IR is verified once per step, not after every pass (~3 % of a
    // flash_fwd compile); the tile-opt tool, which the lit tests run, still
    // verifies after each pass.
    mlir::PassManager pm(&context);
    pm.enableVerifier(false);
    step.build(pm);
    std::string failedPass;
    pm.addInstrumentation(std::make_unique<FailedPassName>(failedPass));
    if (mlir::failed(pm.run(*module)) || mlir::failed(mlir::verify(*module))) {
      // A pass that fails must say why at a location; one that did not is
      // a compiler bug, reported by name rather than as a bare failure.
      if (diag.str().empty())
        diag << filename << ": error: internal compiler error: pass '"
             << (failedPass.empty() ? std::string("verifier") : failedPass)
             << "' failed without a diagnostic (stage " << step.name
             << "; please report it with the source and -D values)\n";
      return result;
    }
    clock.mark(step.name);
    if (step.stage == EmitStage::GPU) {
      if (mlir::failed(checkResources(*module, options.arch)))
        return result;
      describeGPU(*module, result.manifest);
    }
    if (step.stage == stopAt) {
      result.text = print(*module);
      result.ok = true;
      return result;
    }
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      target::translateToLLVMIR(*module, llvmContext);
  clock.mark("llvm");
  if (!llvmModule)
    return result;
  if (stopAt == EmitStage::LLVM) {
    llvm::raw_string_ostream os(result.text);
    llvmModule->print(os, nullptr);
    result.ok = true;
    return result;
  }
  std::string error;
  if (!target::emitPTX(*llvmModule, options.arch, options.llvmO3, clock,
                       result.ptx, error)) {
    diag << "error: " << error << "\n";
    return result;
  }
  // PTX does not depend on ptxas: only a cubin records its version (asking
  // ptxas costs a process, ~5 % of a flash_fwd compile); without ptxas,
  // ptxasVersion says "unknown".
  std::string ptxas = stopAt == EmitStage::PTX
                          ? std::string()
                          : target::findPtxas(options.ptxasPath);
  result.manifest.cudaVersion = target::ptxasVersion(ptxas);
  if (stopAt == EmitStage::PTX) {
    result.text = result.ptx;
    result.ok = true;
    return result;
  }
  if (ptxas.empty()) {
    diag << "error: -emit=cubin needs ptxas (not on PATH nor in "
            "/usr/local/cuda/bin)\n";
    return result;
  }
  if (!target::runPtxas(ptxas, result.ptx, options.arch, result.cubin, error)) {
    diag << kernelAt << "error: " << error << "\n"
         << kernelAt << "note: " << kernelWhat << "\n";
    return result;
  }
  clock.mark("ptxas");
  result.ok = true;
  return result;
}
