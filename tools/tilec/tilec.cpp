//===- tilec.cpp - the .tile compiler driver ------------------------------===//
//
//   tilec FILE.tile [-o OUT] [-emit=ast|tile|...|ptx|cubin] [-D NAME=VALUE]...
//         [-arch=sm_80|sm_90a] [--kernel NAME]
//
// Reads the source, runs tile::compile up to the requested stage, prints
// the diagnostics to stderr and the result to stdout or to files:
//   -o NAME with a stage >= ptx writes NAME.ptx, NAME.manifest.json and,
//   when ptxas produced one, NAME.cubin; with an earlier stage -o FILE
//   writes the stage's text to FILE. -o - (or no -o) prints the stage's
//   text, or the PTX, to stdout and writes no file; a cubin is binary and
//   needs a name.
//
//===----------------------------------------------------------------------===//
#include "ScheduleFlags.h"
#include "tile/Compiler.h"
#include "lib/Target/PTX.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace llvm;

static cl::OptionCategory category("tilec options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<input .tile file>"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputName("o", cl::value_desc("name"), cl::cat(category),
               cl::desc("Output: NAME.ptx/.manifest.json/.cubin for stages "
                        ">= ptx, else the file to write"));
static cl::opt<std::string>
    emitName("emit", cl::init("ptx"), cl::value_desc("stage"), cl::cat(category),
             cl::desc("Stop after this stage: ast, tile, optimize, layout, "
                      "gpu, nvvm, llvm, ptx (default) or cubin"));
static cl::list<std::string>
    defines("D", cl::Prefix, cl::value_desc("NAME=VALUE"), cl::cat(category),
            cl::desc("Override a compile-time parameter"));
static cl::list<std::string>
    includeDirs("I", cl::Prefix, cl::value_desc("dir"), cl::cat(category),
                cl::desc("Where `import \"path\";` looks after the importing "
                         "file's directory (repeatable)"));
static cl::opt<std::string> arch("arch", cl::init("sm_80"),
                                 cl::value_desc("sm_80|sm_90a"),
                                 cl::desc("Target GPU architecture"),
                                 cl::cat(category));
static cl::opt<std::string> kernel("kernel", cl::value_desc("name"),
                                   cl::desc("Kernel to compile when the file "
                                            "has several"),
                                   cl::cat(category));
static cl::opt<bool>
    remarks("remarks", cl::cat(category),
            cl::desc("Say, at its location, why a dot operand load in a "
                     "loop stays off the sm_90a TMA rings (and, with "
                     "cp_async, off the cp.async rings), and why an fp8 "
                     "dot multiplies as f16"));
static cl::opt<bool>
    timeStages("time-stages", cl::cat(category),
               cl::desc("Print the wall time of each compile stage to stderr"));
static cl::opt<bool>
    llvmO3("llvm-o3", cl::cat(category),
           cl::desc("Run all of LLVM's O3 before NVPTX code generation, not "
                    "only the passes that change tilec's kernels"));
static cl::opt<std::string> ptxas("ptxas", cl::value_desc("path"),
                                  cl::desc("ptxas to use for -emit=cubin"),
                                  cl::cat(category));

static int fail(const Twine &msg) {
  WithColor::error(errs(), "tilec") << msg << "\n";
  return 1;
}

static bool writeFile(StringRef path, StringRef data, bool binary) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, binary ? sys::fs::OF_None : sys::fs::OF_Text);
  if (ec) {
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  os << data;
  return true;
}

/// A compile allocates and frees large blocks (MLIR and LLVM maps that
/// grow): glibc serves them with fresh mmaps, page-faulted in each time.
/// Kept in the heap and never trimmed, their pages are faulted once; the
/// process is short-lived. flash_fwd to PTX: ~5 % less wall time.
static void tuneMalloc() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's maximum
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

int main(int argc, char **argv) {
  tuneMalloc();
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&category, &tilec::scheduleCategory()});
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << tile::versionString() << "\n"; });
  cl::ParseCommandLineOptions(argc, argv, "tilec: the .tile compiler\n");
  // Ctrl-C or kill during -emit=cubin stops ptxas and removes its files.
  ::tile::target::enableSignalCleanup();

  tile::EmitStage stage;
  if (!tile::parseEmitStage(emitName, stage))
    return fail("unknown -emit stage '" + emitName + "' (expected one of: " +
                tile::emitStageNames() + ")");
  if (arch != "sm_80" && arch != "sm_90a")
    return fail("unsupported -arch '" + arch + "' (supported: sm_80, sm_90a)");
  if (stage == tile::EmitStage::Cubin &&
      (outputName.empty() || outputName == "-"))
    return fail("-emit=cubin writes a binary; give an output name with -o "
                "(standard output, '-o -', takes text stages only)");

  tile::CompileOptions options;
  options.arch = arch;
  options.kernel = kernel;
  options.ptxasPath = ptxas;
  options.timeStages = timeStages;
  options.llvmO3 = llvmO3;
  options.remarks = ::remarks;
  options.includeDirs.assign(includeDirs.begin(), includeDirs.end());
  std::string badSchedule = tilec::scheduleFromFlags(options.schedule);
  if (!badSchedule.empty())
    return fail(badSchedule);
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("-D expects NAME=VALUE, got '" + d + "'");
    options.defines[d.substr(0, eq)] = d.substr(eq + 1);
  }

  ErrorOr<std::unique_ptr<MemoryBuffer>> input =
      MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!input)
    return fail("cannot read '" + inputFile + "': " +
                input.getError().message());

  tile::CompileResult result = tile::compile((*input)->getBuffer().str(),
                                             inputFile, options, stage);
  errs() << result.diagnostics;
  if (timeStages) {
    double total = 0;
    for (const tile::StageTime &t : result.stageTimes) {
      errs() << format("%-10s %8.1f ms\n", t.stage.c_str(), t.ms);
      total += t.ms;
    }
    errs() << format("%-10s %8.1f ms\n", "total", total);
  }
  if (!result.ok) {
    if (result.diagnostics.empty())
      return fail("compilation failed");
    return 1;
  }

  if (stage < tile::EmitStage::PTX) {
    if (outputName.empty() || outputName == "-") {
      outs() << result.text;
      return 0;
    }
    return writeFile(outputName, result.text, false) ? 0 : 1;
  }
  if (outputName.empty() || outputName == "-") { // the PTX only: no manifest
    outs() << result.ptx;
    return 0;
  }
  // `-o foo.ptx` and `-o foo` both name the outputs foo.*.
  StringRef base = outputName;
  for (StringRef ext : {".ptx", ".cubin"})
    base.consume_back(ext);
  bool ok = writeFile((base + ".ptx").str(), result.ptx, false) &&
            writeFile((base + ".manifest.json").str(),
                      result.manifest.toJSON(), false);
  if (ok && !result.cubin.empty())
    ok = writeFile((base + ".cubin").str(), result.cubin, true);
  return ok ? 0 : 1;
}
