//===- FlashFwdTest.cpp - GPU parity suite for flash_fwd (JIT and AOT) ----===//
//
//   tile-gpu-tests [--seed N] [--quick] [--no-aot] [--tile PATH] [--only NAME]
//                  [--define NAME=VALUE]...   (extra -D for every config)
//   tile-gpu-tests --write-bundles DIR --arch sm_80|sm_90a   (no GPU needed)
//   tile-gpu-tests[-aot] --bundles DIR [--seed N] [--quick] [--only NAME]
//
// Compiles examples/attention/flash_fwd.tile ($TILEC_FLASH_FWD_TILE, --tile)
// for every (dtype, causal, head dim) through the JIT (memory + disk cache)
// and through tile::compile → AOT bundle → loadBundle, and checks each
// against an fp64 CPU reference (docs/testing.md): rel-L2 ≤ 1e-5 (f32) / 1e-2
// (f16, bf16), LSE within 1e-5·(1+|lse|) / 1e-3·(1+|lse|), output poisoned
// with NaN first and every element written, rows past seqlen untouched,
// bitwise-equal over 5 runs. Edge cases: seqlen 0, batch·heads > SM count,
// fp32 logits up to 1e4. NAME selects configs by substring
// ("bf16_causal", "f32_full_d128").
//
// --bundles runs the same sweep on prebuilt bundles DIR/flash_fwd_<config>
// (written by --write-bundles); tile-gpu-tests-aot is that mode alone,
// linked without the compiler, for GPU machines without LLVM.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "TestDevice.h"

#include "tile/Compiler.h"
#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {


struct Options {
  std::string tilePath = TILEC_FLASH_FWD_TILE;
  std::string only;         ///< run the configs whose name contains this
  std::string bundles;      ///< run prebuilt bundles DIR/flash_fwd_<config>
  std::string writeBundles; ///< write those bundles for --arch, then exit
  std::string arch;         ///< for --write-bundles
  unsigned long long seed = 0;
  bool seedGiven = false, quick = false, aot = true;
  tile::Defines defines;    ///< --define NAME=VALUE, added to every config
  tile::Schedule schedule;  ///< --schedule name=value,...
  std::string configTable;  ///< --config-table PATH
  int64_t tableSeqlen = 2048; ///< --table-seqlen N: the launch to look up
};

bool parseArgs(int argc, char **argv, Options &o) {
  if (const char *env = std::getenv("TILEC_FLASH_FWD_TILE"); env && *env)
    o.tilePath = env; // a relocated bundle points at its copy of the source
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
      o.seedGiven = true;
    } else if (a == "--tile" && i + 1 < argc) {
      o.tilePath = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      o.only = argv[++i];
    } else if (a == "--bundles" && i + 1 < argc) {
      o.bundles = argv[++i];
    } else if (a == "--write-bundles" && i + 1 < argc) {
      o.writeBundles = argv[++i];
    } else if (a == "--arch" && i + 1 < argc) {
      o.arch = argv[++i];
    } else if (a == "--define" && i + 1 < argc) {
      std::string kv = argv[++i];
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "--define wants NAME=VALUE, got '%s'\n", kv.c_str());
        return false;
      }
      o.defines[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--schedule" && i + 1 < argc) {
      std::string why = o.schedule.parse(argv[++i]);
      if (why.empty())
        why = o.schedule.validate();
      if (!why.empty()) {
        std::fprintf(stderr, "--schedule: %s\n", why.c_str());
        return false;
      }
    } else if (a == "--config-table" && i + 1 < argc) {
      o.configTable = argv[++i];
    } else if (a == "--table-seqlen" && i + 1 < argc) {
      o.tableSeqlen = std::strtoll(argv[++i], nullptr, 10);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-aot") {
      o.aot = false;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seed N] [--quick] [--no-aot] [--tile PATH] "
                   "[--only NAME] [--bundles DIR] [--define NAME=VALUE]...\n"
                   "       [--schedule name=value,...] [--config-table PATH "
                   "[--table-seqlen N]]\n"
                   "       %s --write-bundles DIR --arch sm_80|sm_90a "
                   "[--tile PATH] [--only NAME]\n"
                   "NAME: part of a config name, e.g. bf16_causal_d128\n",
                   argv[0], argv[0]);
      return false;
    }
  }
  return true;
}

bool loadVariant(Variant &var, Expected<Kernel> kernel, const std::string &ptx,
                 const std::string &what, Totals &totals) {
  std::string error;
  if (!kernel) {
    report(totals, what, false, kernel.error());
    return false;
  }
  var.kernel = kernel.take();
  var.ptx = ptx;
  if (!blockRows(var.kernel.manifest(), var.bm, error)) {
    report(totals, what, false, error);
    return false;
  }
  return true;
}

/// A prebuilt bundle DIR/flash_fwd_<config> (--bundles).
bool bundleVariant(const Device &dev, const Options &opt, const Config &c,
                   Variant &var, Totals &totals) {
  std::string prefix = opt.bundles + "/flash_fwd_" + c.name();
  if (!loadVariant(var, loadBundle(dev, prefix), "", "bundle " + prefix,
                   totals))
    return false;
  std::printf("# %s: bundle %s, block %d, smem %d B, BM %d, %zu tensor maps, "
              "loaded %s\n",
              c.name().c_str(), prefix.c_str(), var.kernel.manifest().blockSize,
              var.kernel.manifest().sharedMemoryBytes, var.bm,
              var.kernel.manifest().tensorMaps.size(),
              var.kernel.loadedFrom().c_str());
  return true;
}

/// Every case for one config, on the variants that loaded.
void runSweep(const Device &dev, const Options &opt, const Config &c,
              std::vector<Variant *> variants, std::mt19937_64 &rng,
              Totals &totals) {
  const float scale = float(1.0 / std::sqrt(double(c.d)));
  std::vector<int> seqlens = {1, 17, 113, 239, 1024, 4097};
  if (opt.quick)
    seqlens = {17, 239};
  std::vector<CaseSpec> specs;
  for (int s : seqlens) // batch·heads kept small where the reference is slow
    specs.push_back(
        {{s >= 4097 ? 2 : (s >= 1024 ? 4 : 3), s, c.d, c.causal, scale},
         1.0f,
         ""});
  if (!opt.quick) // more programs than SMs
    specs.push_back(
        {{2 * dev.smCount() + 1, 64, c.d, c.causal, scale}, 1.0f, "BH>SMs"});
  // seqlen 0: a real launch (grid x = 1) with every row masked.
  specs.push_back({{4, 0, c.d, c.causal, scale}, 1.0f, "S=0"});
  if (c.dtype == DType::F32) // q scaled so that |logits| reach ~1e4
    specs.push_back({{2, 239, c.d, c.causal, scale}, 2500.0f, "logit1e4"});

  for (const CaseSpec &spec : specs) {
    runCase(dev, variants, c, spec, rng, totals);
    if (totals.fatal)
      return;
  }
  runEmptyGrid(dev, *variants.front(), c, totals);
}

#ifndef TILEC_GPU_TESTS_NO_COMPILER
/// --write-bundles: compile every config for --arch (no GPU needed).
int writeAllBundles(const Options &opt, const std::vector<Config> &configs) {
  std::string source, error;
  if (!readFile(opt.tilePath, source, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  if (opt.arch.empty()) {
    std::printf("FAIL: --write-bundles needs --arch sm_80 or sm_90a\n");
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(opt.writeBundles, ec);
  int failed = 0;
  for (const Config &c : configs) {
    CompileOptions co;
    co.arch = opt.arch;
    co.defines = c.defines();
    co.schedule = c.schedule();
    co.ptxasPath = findPtxas();
    CompileResult r =
        compile(source, opt.tilePath, co,
                co.ptxasPath.empty() ? EmitStage::PTX : EmitStage::Cubin);
    std::string prefix = opt.writeBundles + "/flash_fwd_" + c.name();
    Status s = r.ok ? writeBundle(prefix, r.manifest, r.ptx, r.cubin)
                    : Status::error(r.diagnostics);
    std::printf("%s %s%s\n", prefix.c_str(), s.ok() ? "written" : "FAILED: ",
                s.ok() ? (r.cubin.empty() ? " (ptx)" : " (ptx + cubin)")
                       : s.message().c_str());
    failed += !s.ok();
  }
  return failed ? 1 : 0;
}

/// JIT: compile (cached) and load. False (reported) on failure.
bool jitVariant(JIT &jit, const Device &dev, const Options &opt,
                const Config &c, Variant &var, Totals &totals) {
  auto t0 = std::chrono::steady_clock::now();
  Expected<CompiledKernelRef> compiled =
      jit.compileFile(opt.tilePath, c.defines(), "", "", c.schedule());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (!compiled) {
    report(totals, "JIT compile " + c.name(), false, compiled.error());
    return false;
  }
  if (!loadVariant(var, jit.load(dev, **compiled), (*compiled)->ptx,
                   "JIT load " + c.name(), totals))
    return false;
  const Manifest &m = var.kernel.manifest();
  std::printf("# %s: JIT %.2fs, block %d, smem %d B, BM %d, %zu tensor maps, "
              "loaded %s\n",
              c.name().c_str(), seconds, m.blockSize, m.sharedMemoryBytes,
              var.bm, m.tensorMaps.size(), var.kernel.loadedFrom().c_str());
  return true;
}

/// AOT: tile::compile → bundle in `dir` → loadBundle. False (reported) on
/// failure.
bool aotVariant(const std::string &source, const Device &dev,
                const Options &opt, const std::string &dir, const Config &c,
                const Variant &jitVar, Variant &var, Totals &totals) {
  CompileOptions co;
  co.arch = dev.archString();
  co.defines = c.defines();
  co.schedule = c.schedule();
  co.ptxasPath = findPtxas();
  CompileResult r =
      compile(source, opt.tilePath, co,
              co.ptxasPath.empty() ? EmitStage::PTX : EmitStage::Cubin);
  std::string prefix = dir + "/aot-" + c.name();
  if (!r.ok) {
    report(totals, "AOT compile " + c.name(), false, r.diagnostics);
    return false;
  }
  if (Status s = writeBundle(prefix, r.manifest, r.ptx, r.cubin); !s.ok()) {
    report(totals, "AOT bundle " + c.name(), false, s.message());
    return false;
  }
  if (!loadVariant(var, loadBundle(dev, prefix), r.ptx, "AOT load " + c.name(),
                   totals))
    return false;
  bool same = r.ptx == jitVar.ptx;
  std::printf("# %s: AOT bundle %s (loaded %s)\n", c.name().c_str(),
              prefix.c_str(), var.kernel.loadedFrom().c_str());
  report(totals, "AOT/JIT same PTX " + c.name(), same,
         same ? "" : "same source and flags gave different PTX");
  return true;
}

/// Compiling again compiles nothing; a fresh JIT on the same directory
/// reads every kernel from disk.
void checkCache(JIT &jit, const JITOptions &jo, const Options &opt,
                const std::vector<Config> &compiled, Totals &totals) {
  if (compiled.empty())
    return;
  JITStats before = jit.stats();
  for (const Config &c : compiled)
    (void)jit.compileFile(opt.tilePath, c.defines(), "", "", c.schedule());
  JITStats after = jit.stats();
  unsigned again = after.compilations - before.compilations;
  report(totals, "JIT cache: second pass compiles nothing", again == 0,
         std::to_string(again) + " new compilations, " +
             std::to_string(after.memoryHits - before.memoryHits) +
             " memory hits");
  JIT fresh(jo);
  for (const Config &c : compiled)
    (void)fresh.compileFile(opt.tilePath, c.defines(), "", "", c.schedule());
  JITStats f = fresh.stats();
  report(totals, "JIT cache: fresh JIT reads the disk",
         f.compilations == 0 && f.diskHits == compiled.size(),
         std::to_string(f.diskHits) + " disk hits, " +
             std::to_string(f.compilations) + " compilations, " +
             std::to_string(f.diskRejected) + " rejected entries");
}

#endif // TILEC_GPU_TESTS_NO_COMPILER

std::string makeTempDir(const char *name) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / (std::string(name) + "-XXXXXX"))
          .string();
  return ::mkdtemp(tmpl.data()) ? tmpl : std::string();
}

std::vector<Config> selectConfigs(const Options &opt) {
  std::vector<Config> configs;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (bool causal : {false, true})
      for (int d : {64, 128}) {
        Config c{t, causal, d};
        if ((!opt.quick || d == 64) &&
            c.name().find(opt.only) != std::string::npos)
          configs.push_back(c);
      }
  return configs;
}

void printHeader() {
  std::printf("%-4s %-5s %-6s %4s %6s %5s %-9s %-9s %-9s %-9s result\n", "path",
              "dtype", "mask", "D", "S", "BH", "case", "rel-L2", "max-abs",
              "lse-err");
}

/// --bundles: the sweep on prebuilt AOT bundles (no compiler involved).
void runBundles(const Device &dev, const Options &opt,
                const std::vector<Config> &configs, std::mt19937_64 &rng,
                Totals &totals) {
  printHeader();
  for (const Config &c : configs) {
    Variant var{"AOT", {}, {}, 0};
    if (!bundleVariant(dev, opt, c, var, totals))
      continue;
    runSweep(dev, opt, c, {&var}, rng, totals);
    if (totals.fatal)
      return;
  }
}

#ifndef TILEC_GPU_TESTS_NO_COMPILER
/// The sweep on kernels compiled here: JIT (cached) and AOT (bundle on
/// disk), then the cache checks.
void runCompiled(const Device &dev, const Options &opt,
                 const std::vector<Config> &configs, const std::string &tmp,
                 std::mt19937_64 &rng, Totals &totals) {
  std::string source, error;
  if (!readFile(opt.tilePath, source, error))
    return report(totals, "read " + opt.tilePath, false, error);
  JITOptions jo;
  jo.cacheDir = tmp + "/jit-cache";
  jo.arch = dev.archString();
  JIT jit(jo);

  std::vector<Config> compiled;
  printHeader();
  for (const Config &c : configs) {
    Variant jitVar{"JIT", {}, {}, 0}, aotVar{"AOT", {}, {}, 0};
    if (!jitVariant(jit, dev, opt, c, jitVar, totals))
      continue;
    compiled.push_back(c);
    std::vector<Variant *> variants = {&jitVar};
    if (opt.aot && aotVariant(source, dev, opt, tmp, c, jitVar, aotVar, totals))
      variants.push_back(&aotVar);
    runSweep(dev, opt, c, variants, rng, totals);
    if (totals.fatal)
      return;
  }
  checkCache(jit, jo, opt, compiled, totals);
}
#endif

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parseArgs(argc, argv, opt))
    return 2;
  setExtraDefines(opt.defines);
  setSchedule(opt.schedule);
  if (!opt.configTable.empty()) {
    tile::ConfigTable table;
    std::string why;
    if (!tile::ConfigTable::load(opt.configTable, table, why)) {
      std::printf("FAIL: %s\n", why.c_str());
      return 1;
    }
    setConfigTable(table, opt.tableSeqlen);
    std::printf("# configs from %s at seqlen %lld\n", opt.configTable.c_str(),
                (long long)opt.tableSeqlen);
  }
  if (!opt.seedGiven)
    opt.seed = std::random_device()() ^
               std::uint64_t(
                   std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<Config> configs = selectConfigs(opt);
#ifdef TILEC_GPU_TESTS_NO_COMPILER
  if (opt.bundles.empty()) {
    std::printf("FAIL: this build has no compiler: pass --bundles DIR (made "
                "by tile-gpu-tests --write-bundles DIR --arch ...)\n");
    return 2;
  }
#else
  if (!opt.writeBundles.empty())
    return writeAllBundles(opt, configs);
#endif

  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::string tmp = makeTempDir("tilec-gpu-tests");
  if (tmp.empty()) {
    std::printf("FAIL: cannot create a temporary directory\n");
    return 1;
  }
  std::printf("tile-gpu-tests: %s, arch %s, seed %llu (rerun: --seed %llu)\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed);
  std::printf("kernel: %s; temporary files: %s\n",
              opt.bundles.empty() ? opt.tilePath.c_str()
                                  : (opt.bundles + " (prebuilt)").c_str(),
              tmp.c_str());

  Totals totals;
  std::mt19937_64 rng(opt.seed);
  if (!opt.bundles.empty())
    runBundles(*dev, opt, configs, rng, totals);
#ifndef TILEC_GPU_TESTS_NO_COMPILER
  else
    runCompiled(*dev, opt, configs, tmp, rng, totals);
#endif
  if (totals.fatal)
    std::printf("stopped early: a launch failed, the CUDA context is "
                "unusable\n");

  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  std::printf("\nsummary: %d checks, %d passed, %d failed (seed %llu)\n",
              totals.cases, totals.cases - totals.failed, totals.failed,
              opt.seed);
  for (const std::string &f : totals.failures)
    std::printf("  FAILED: %s\n", f.c_str());
  return totals.failed || totals.fatal ? 1 : 0;
}
