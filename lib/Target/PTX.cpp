//===- PTX.cpp - LLVM IR, PTX and cubin emission --------------------------===//
#include "lib/Target/PTX.h"
#include "lib/Target/InterleaveExp.h"

#include "lib/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <atomic>
#include <csignal>
#include <mutex>

#include <sys/types.h>

using namespace tile;

static const char *kTriple = "nvptx64-nvidia-cuda";

std::unique_ptr<llvm::Module>
target::translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context) {
  mlir::gpu::GPUModuleOp gpuModule;
  module.walk([&](mlir::gpu::GPUModuleOp m) {
    if (m.getName() == mlir::tile::kGpuModuleName)
      gpuModule = m;
  });
  if (!gpuModule) {
    module.emitError("no gpu.module @tile_kernels to translate");
    return nullptr;
  }
  return mlir::translateModuleToLLVMIR(gpuModule, context, "tile_kernels");
}

/// LLVM's O3 pipeline (`opt -passes='default<O3>' -print-pipeline-passes`)
/// less the passes that leave the PTX of our kernels unchanged: the IR that
/// MLIR emits has no calls, allocas, globals or vectorizable loops, so the
/// inliner, SROA, the vectorizers, DSE and the rest only cost time. Found by
/// dropping O3's passes one at a time while 30 configurations (flash_fwd
/// on both targets, every dtype, the tuned producer / persistent /
/// cta_programs ones; a flex_fwd variant; test kernels) kept byte-identical PTX;
/// 45 -> 30 ms of a flash_fwd compile. The order
/// and options are O3's own.
static const char *const kOptPipeline =
    "function<eager-inv>("
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;"
    "no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;"
    "keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;"
    "no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>,"
    "early-cse<>),"
    "ipsccp,"
    "function<eager-inv>(instcombine<max-iterations=1;no-verify-fixpoint>),"
    "cgscc(devirt<4>(function<eager-inv;no-rerun>("
    "early-cse<memssa>,"
    "speculative-execution<only-if-divergent-target>,"
    "instcombine<max-iterations=1;no-verify-fixpoint>,"
    "reassociate,"
    "constraint-elimination,"
    "loop-mssa(loop-rotate<header-duplication;no-prepare-for-lto>),"
    "loop(indvars),"
    "gvn<>,"
    "sccp,"
    "correlated-propagation,"
    "loop-mssa(licm<allowspeculation>),"
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;"
    "switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;"
    "keep-loops;hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;"
    "sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>))),"
    "function<eager-inv>("
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>),"
    "infer-alignment,"
    "loop-unroll<O3>,"
    "infer-alignment,"
    "instcombine<max-iterations=1;no-verify-fixpoint>,"
    "div-rem-pairs,"
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;"
    "switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;"
    "keep-loops;no-hoist-common-insts;hoist-loads-stores-with-cond-faulting;"
    "no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "speculate-unpredictables>)";

static void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

bool target::emitPTX(llvm::Module &module, const std::string &arch,
                     bool fullO3, StageClock &clock, std::string &ptx,
                     std::string &error) {
  initNVPTX();
  llvm::Triple triple(kTriple);
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return false;
  // sm_80: PTX ISA 8.0 (CUDA 12+ ptxas and drivers take it). sm_90a: 8.7
  // (CUDA 12.8+), for tensormap.replace (8.3+) with byte global strides
  // (older ptxas wanted them divided by 16). Code generation at Default,
  // not Aggressive (which runs GVN where Default runs EarlyCSE among NVPTX's
  // IR passes): ~5 % of a flash_fwd compile, PTX identical for the default
  // configurations and as fast elsewhere.
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, arch, arch == "sm_90a" ? "+ptx87" : "+ptx80", llvm::TargetOptions(), std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Default));
  if (!tm) {
    error = "cannot create an NVPTX target machine for " + arch;
    return false;
  }
  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (fullO3)
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  else if (llvm::Error e = pb.parsePassPipeline(mpm, kOptPipeline)) {
    error = "bad LLVM pass pipeline: " + llvm::toString(std::move(e));
    return false;
  }
  mpm.run(module, mam);
  clock.mark("llvm-opt");

  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr,
                              llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX backend cannot emit assembly";
    return false;
  }
  codegen.run(module);
  ptx = std::string(buffer.str());
  clock.mark("codegen");
  // Measured on sm_90a only (H100); sm_80 PTX keeps the backend's order.
  if (arch == "sm_90a") {
    interleaveExpChains(ptx);
    clock.mark("ptx-order");
  }
  return true;
}

std::string target::findPtxas(const std::string &hint) {
  if (!hint.empty())
    return llvm::sys::fs::can_execute(hint) ? hint : std::string();
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  if (auto p = llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *p;
  return {};
}

namespace {
/// With signal cleanup on (tilec): the running ptxas, killed by an
/// interrupt; temporary files are registered with LLVM's
/// RemoveFileOnSignal. A library host (the JIT) keeps its own handlers.
std::atomic<bool> signalCleanup{false};
std::atomic<int> childPid{0};
std::atomic<bool> interrupted{false};

void onInterrupt() {
  interrupted = true;
  if (int pid = childPid.load())
    ::kill(pid, SIGKILL); // async-signal-safe
}

/// A temporary file that is removed on every path, and on SIGINT/SIGTERM
/// when signal cleanup is on.
struct TempFile {
  llvm::SmallString<128> path;
  bool keep = false;
  TempFile(llvm::StringRef prefix, llvm::StringRef suffix) {
    llvm::sys::fs::createTemporaryFile(prefix, suffix, path);
    if (signalCleanup)
      llvm::sys::RemoveFileOnSignal(path);
  }
  ~TempFile() {
    if (signalCleanup)
      llvm::sys::DontRemoveFileOnSignal(path);
    if (!keep)
      llvm::sys::fs::remove(path);
  }
};
} // namespace

void target::enableSignalCleanup() {
  signalCleanup = true;
  llvm::sys::SetInterruptFunction(onInterrupt);
}

/// Runs `argv`, returning its exit code and merged output; -3 when the
/// process was interrupted (the child is killed, not left running).
static int run(llvm::ArrayRef<llvm::StringRef> argv, std::string &output) {
  TempFile log("tilec-ptxas", "log");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(),
                                                log.path.str()};
  std::string err;
  bool failed = false;
  llvm::sys::ProcessInfo pi = llvm::sys::ExecuteNoWait(
      argv[0], argv, std::nullopt, redirects, 0, &err, &failed);
  int rc = -1;
  if (!failed) {
    childPid = pi.Pid;
    if (interrupted)
      onInterrupt();
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(pi, /*SecondsToWait=*/300, &err);
    childPid = 0;
    rc = done.ReturnCode;
  }
  if (auto buf = llvm::MemoryBuffer::getFile(log.path))
    output = (*buf)->getBuffer().str();
  output += err;
  return interrupted ? -3 : rc;
}

std::string target::ptxasVersion(const std::string &ptxas) {
  if (ptxas.empty())
    return "unknown";
  std::string out;
  if (run({ptxas, "--version"}, out) != 0)
    return "unknown";
  size_t at = out.find("release ");
  if (at == std::string::npos)
    return "unknown";
  size_t end = out.find_first_of(",\n", at);
  return out.substr(at, end - at);
}

/// The name of the first kernel in `ptx` (`.entry NAME(`), for messages.
static std::string firstEntryName(const std::string &ptx) {
  size_t at = ptx.find(".entry ");
  if (at == std::string::npos)
    return "?";
  at += 7;
  size_t end = ptx.find_first_of("( \t\n", at);
  return ptx.substr(at, end == std::string::npos ? end : end - at);
}

bool target::runPtxas(const std::string &ptxas, const std::string &ptx,
                      const std::string &arch, std::string &cubin,
                      std::string &error) {
  // Every message names the kernel and the target: a log of many compiles
  // (a sweep, the JIT) must say which one ptxas refused.
  std::string what = "kernel '" + firstEntryName(ptx) + "' for " + arch;
  TempFile inFile("tilec", "ptx"), outFile("tilec", "cubin");
  const llvm::SmallString<128> &in = inFile.path, &out = outFile.path;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      error = "cannot write " + in.str().str() + ": " + ec.message();
      return false;
    }
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch;
  std::string log;
  int rc = run({ptxas, archFlag, in.str(), "-o", out.str()}, log);
  if (rc == -3) {
    error = "interrupted while ptxas compiled " + what +
            " (ptxas stopped, temporary files removed)";
    return false;
  }
  if (rc != 0) {
    std::string how = rc == -1   ? "could not be run"
                      : rc == -2 ? "crashed or timed out"
                                 : "exit " + std::to_string(rc);
    error = "ptxas failed on " + what + " (" + how + "):\n" + log +
            "PTX kept at " + in.str().str() + "\nreproduce: " + ptxas + " " +
            archFlag + " " + in.str().str() + " -o /tmp/out.cubin";
    inFile.keep = true;
    return false;
  }
  // The output file exists (empty) from createTemporaryFile: a ptxas that
  // exits 0 without writing leaves it so.
  auto buf = llvm::MemoryBuffer::getFile(out);
  if (!buf || (*buf)->getBufferSize() == 0) {
    error = "ptxas '" + ptxas + "' exited 0 but wrote no cubin for " + what +
            (buf ? std::string(" (its output file is empty)")
                 : " (" + buf.getError().message() + ")") +
            (log.empty() ? std::string() : ":\n" + log);
    return false;
  }
  cubin = (*buf)->getBuffer().str();
  return true;
}
