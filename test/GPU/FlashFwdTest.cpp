//===- FlashFwdTest.cpp - GPU parity suite for flash_fwd (JIT and AOT) ----===//
//
// tile-gpu-tests [--seed N] [--quick] [--no-aot] [--tile PATH]
// (the .tile path also from $TILEC_FLASH_FWD_TILE)
//
// Compiles examples/attention/flash_fwd.tile for every (dtype, causal, head
// dim), through the JIT (memory + disk cache) and through tile::compile →
// AOT bundle → loadBundle, and checks each against an fp64 CPU reference
// (TESTING.md): rel-L2 ≤ 1e-5 (f32) / 1e-2 (f16, bf16), LSE within
// 1e-5·(1+|lse|) / 1e-3·(1+|lse|), output poisoned with NaN first and every
// element written, rows past seqlen untouched, bitwise-equal over 5 runs.
// Edge cases: seqlen 0, batch·heads > SM count, fp32 logits up to 1e4.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "tile/Compiler.h"
#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {

constexpr int kSkip = 77;
constexpr int kRepeats = 5;

//===----------------------------------------------------------------------===//
// Configurations and compiled variants
//===----------------------------------------------------------------------===//

struct Config {
  DType dtype;
  bool causal;
  int d;
  std::string name() const {
    return std::string(dtypeName(dtype)) + (causal ? "_causal" : "_full") +
           "_d" + std::to_string(d);
  }
  Defines defines() const {
    return {{"T", dtypeName(dtype)},
            {"CAUSAL", causal ? "true" : "false"},
            {"D", std::to_string(d)}};
  }
  double tolerance() const { return dtype == DType::F32 ? 1e-5 : 1e-2; }
  double lseTolerance() const { return dtype == DType::F32 ? 1e-5 : 1e-3; }
};

/// One way of getting the kernel: "JIT" or "AOT".
struct Variant {
  std::string path;
  Kernel kernel;
  std::string ptx;
  int bm = 0;
};

struct Totals {
  int cases = 0, failed = 0;
  std::vector<std::string> failures;
  bool fatal = false; ///< a launch fault: the context is unusable
};

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// BM from the manifest (needed for the grid).
bool blockRows(const Manifest &m, int &bm, std::string &error) {
  auto it = m.constants.find("BM");
  if (it == m.constants.end()) {
    error = "the manifest has no constant BM, so the grid cannot be sized";
    return false;
  }
  bm = std::atoi(it->second.c_str());
  if (bm <= 0) {
    error = "the manifest's BM is '" + it->second + "'";
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// One problem on the GPU
//===----------------------------------------------------------------------===//

struct DeviceProblem {
  DeviceBuffer q, k, v, o, lse;
  std::size_t oElems = 0, lseElems = 0;         ///< checked region
  std::size_t oGuardElems = 0, lseGuardElems = 0; ///< must stay poisoned
};

Status allocate(const Device &dev, const Config &c, const Problem &p,
                int guardRows, const std::vector<float> &q,
                const std::vector<float> &k, const std::vector<float> &v,
                DeviceProblem &out) {
  std::size_t eb = dtypeBytes(c.dtype);
  out.oElems = std::size_t(p.bh) * p.s * p.d;
  out.lseElems = std::size_t(p.bh) * p.s;
  out.oGuardElems = std::size_t(guardRows) * p.d;
  out.lseGuardElems = std::size_t(guardRows);
  // Inputs get a guard too, so that seqlen 0 still passes real pointers.
  std::size_t inElems = out.oElems + out.oGuardElems;
  struct {
    DeviceBuffer *buf;
    std::size_t bytes;
  } allocs[] = {{&out.q, inElems * eb},
                {&out.k, inElems * eb},
                {&out.v, inElems * eb},
                {&out.o, (out.oElems + out.oGuardElems) * eb},
                {&out.lse, (out.lseElems + out.lseGuardElems) * 4}};
  for (auto &a : allocs) {
    Expected<DeviceBuffer> b = DeviceBuffer::allocate(dev, a.bytes);
    if (!b)
      return b.status();
    *a.buf = b.take();
  }
  for (auto [buf, host] : {std::pair{&out.q, &q}, std::pair{&out.k, &k},
                           std::pair{&out.v, &v}}) {
    if (Status s = buf->fill(0); !s.ok())
      return s;
    std::vector<std::uint8_t> bytes = encode(c.dtype, *host);
    if (Status s = buf->copyFromHost(bytes.data(), bytes.size()); !s.ok())
      return s;
  }
  return Status();
}

/// Poisons O and LSE with 0xFF bytes (NaN in every dtype), launches, waits,
/// and reads both back whole (guards included).
Status runOnce(const Device &dev, const Variant &var, const Config &c,
               const Problem &p, DeviceProblem &dp, std::array<unsigned, 3> grid,
               std::vector<std::uint8_t> &o, std::vector<std::uint8_t> &lse) {
  if (Status s = dp.o.fill(0xFF); !s.ok())
    return s;
  if (Status s = dp.lse.fill(0xFF); !s.ok())
    return s;
  const char *t = dtypeName(c.dtype);
  std::vector<KernelArg> args = {
      KernelArg::pointer(dp.q, t),       KernelArg::pointer(dp.k, t),
      KernelArg::pointer(dp.v, t),       KernelArg::pointer(dp.o, t),
      KernelArg::pointer(dp.lse, "f32"), KernelArg::int32(p.s),
      KernelArg::float32(p.smScale)};
  if (Status s = var.kernel.launch(grid, args); !s.ok())
    return s;
  if (Status s = dev.synchronize(); !s.ok())
    return s.withContext("after the launch");
  o.resize(dp.o.size());
  lse.resize(dp.lse.size());
  if (Status s = dp.o.copyToHost(o.data(), o.size()); !s.ok())
    return s;
  return dp.lse.copyToHost(lse.data(), lse.size());
}

bool allBytes(const std::vector<std::uint8_t> &b, std::size_t from,
              std::uint8_t value) {
  for (std::size_t i = from; i < b.size(); ++i)
    if (b[i] != value)
      return false;
  return true;
}

std::string where(const Problem &p, std::size_t index, int perRow) {
  std::size_t row = index / std::size_t(perRow);
  return "bh=" + std::to_string(row / std::size_t(std::max(p.s, 1))) +
         " row=" + std::to_string(row % std::size_t(std::max(p.s, 1))) +
         (perRow > 1 ? " col=" + std::to_string(index % perRow) : "");
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

struct CaseSpec {
  Problem p;
  float qScale = 1.0f;      ///< > 1: the large-logit case
  std::string label;        ///< extra words for the result line
};

void report(Totals &totals, const std::string &line, bool pass,
            const std::string &why) {
  ++totals.cases;
  std::printf("%s %s%s\n", line.c_str(), pass ? "PASS" : "FAIL",
              why.empty() ? "" : ("  (" + why + ")").c_str());
  std::fflush(stdout);
  if (!pass) {
    ++totals.failed;
    totals.failures.push_back(line + "  " + why);
  }
}

void runCase(const Device &dev, std::vector<Variant *> variants,
             const Config &c, const CaseSpec &spec, std::mt19937_64 &rng,
             Totals &totals) {
  Problem p = spec.p;
  std::size_t n = std::size_t(p.bh) * p.s * p.d;
  std::vector<float> q = randomNormal(rng, n, spec.qScale);
  std::vector<float> k = randomNormal(rng, n), v = randomNormal(rng, n);
  roundTo(c.dtype, q);
  roundTo(c.dtype, k);
  roundTo(c.dtype, v);
  std::vector<double> oRef, lseRef;
  double maxLogit = 0;
  referenceAttention(p, q, k, v, oRef, lseRef, &maxLogit);
  double naiveMaxAbs = -1;
  if (spec.qScale != 1.0f) { // FlashAttention's rule for the extreme case
    std::vector<float> naive;
    naiveAttentionF32(p, q, k, v, naive);
    naiveMaxAbs = compare(naive, oRef).maxAbs;
  }

  int guardRows = 0;
  for (Variant *var : variants)
    guardRows = std::max(guardRows, var->bm);
  DeviceProblem dp;
  if (Status s = allocate(dev, c, p, guardRows, q, k, v, dp); !s.ok()) {
    report(totals, "     " + c.name() + " S=" + std::to_string(p.s), false,
           s.message());
    return;
  }

  char head[160];
  std::vector<std::uint8_t> firstO;
  for (Variant *var : variants) {
    std::snprintf(head, sizeof(head), "%-4s %-5s %-6s %4d %6d %5d %-9s",
                  var->path.c_str(), dtypeName(c.dtype),
                  c.causal ? "causal" : "full", p.d, p.s, p.bh,
                  spec.label.c_str());
    unsigned gx = unsigned((p.s + var->bm - 1) / var->bm);
    if (p.s == 0)
      gx = 1; // really launch: every row is masked, nothing may be written
    std::array<unsigned, 3> grid = {gx, unsigned(p.bh), 1};

    std::vector<std::uint8_t> o0, lse0, o, lse;
    std::string why;
    int differingRun = 0;
    for (int r = 0; r < kRepeats; ++r) {
      Status s = runOnce(dev, *var, c, p, dp, grid, r ? o : o0, r ? lse : lse0);
      if (!s.ok()) {
        report(totals, head, false, "run " + std::to_string(r) + ": " + s.message());
        totals.fatal = true; // a fault leaves the context unusable
        return;
      }
      if (r && !differingRun && (o != o0 || lse != lse0))
        differingRun = r;
    }

    std::size_t eb = dtypeBytes(c.dtype);
    std::vector<float> out = decode(c.dtype, o0.data(), dp.oElems);
    std::vector<float> lseOut = decode(DType::F32, lse0.data(), dp.lseElems);
    ErrorStats e = compare(out, oRef);
    ErrorStats le = compareScaled(lseOut, lseRef);

    bool pass = true;
    auto fail = [&](const std::string &w) {
      pass = false;
      why += (why.empty() ? "" : "; ") + w;
    };
    if (e.nonFinite)
      fail(std::to_string(e.nonFinite) + " O elements not written or NaN/inf, "
           "first at " + where(p, e.firstNonFinite, p.d));
    if (le.nonFinite)
      fail(std::to_string(le.nonFinite) + " LSE values not written or "
           "NaN/inf, first at " + where(p, le.firstNonFinite, 1));
    if (!allBytes(o0, dp.oElems * eb, 0xFF))
      fail("O written past the last row (rows >= seqlen must stay untouched)");
    if (!allBytes(lse0, dp.lseElems * 4, 0xFF))
      fail("LSE written past the last row");
    if (differingRun)
      fail("run " + std::to_string(differingRun) + " differs bitwise from run 0");
    if (spec.qScale != 1.0f) {
      double bound = 2 * naiveMaxAbs + 1e-5;
      if (e.relL2 > c.tolerance() && e.maxAbs > bound)
        fail("max-abs " + fmt(e.maxAbs) + " > 2*naive-fp32 + 1e-5 = " +
             fmt(bound) + " and rel-L2 > " + fmt(c.tolerance()));
      why += std::string(why.empty() ? "" : "; ") + "max |logit| " +
             fmt(maxLogit) + ", naive fp32 max-abs " + fmt(naiveMaxAbs);
    } else if (e.relL2 > c.tolerance()) {
      fail("rel-L2 > " + fmt(c.tolerance()));
    }
    if (le.maxAbs > c.lseTolerance())
      fail("LSE error > " + fmt(c.lseTolerance()) + "*(1+|lse|)");
    if (!firstO.empty() && o0 != firstO)
      why += std::string(why.empty() ? "" : "; ") +
             "note: differs bitwise from the JIT result";
    if (firstO.empty())
      firstO = o0;

    std::string line = std::string(head) + " " + fmt(e.relL2) + "  " +
                       fmt(e.maxAbs) + "  " + fmt(le.maxAbs);
    report(totals, line, pass, why);
  }
}

/// seqlen 0 through the runtime: an empty grid launches nothing.
void runEmptyGrid(const Device &dev, Variant &var, const Config &c,
                  Totals &totals) {
  Problem p;
  p.bh = 4;
  p.s = 0;
  p.d = c.d;
  DeviceProblem dp;
  std::string head = var.path + " " + c.name() + " S=0 grid (0, 4, 1)";
  if (Status s = allocate(dev, c, p, var.bm, {}, {}, {}, dp); !s.ok())
    return report(totals, head, false, s.message());
  std::vector<std::uint8_t> o, lse;
  Status s = runOnce(dev, var, c, p, dp, {0, 4, 1}, o, lse);
  bool pass = s.ok() && allBytes(o, 0, 0xFF) && allBytes(lse, 0, 0xFF);
  report(totals, head, pass, s.ok() ? (pass ? "" : "memory was written")
                                    : s.message());
}

//===----------------------------------------------------------------------===//
// Compilation: JIT and AOT
//===----------------------------------------------------------------------===//

struct Options {
  std::string tilePath = TILEC_FLASH_FWD_TILE;
  unsigned long long seed = 0;
  bool seedGiven = false, quick = false, aot = true;
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
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-aot") {
      o.aot = false;
    } else {
      std::fprintf(stderr, "usage: %s [--seed N] [--quick] [--no-aot] "
                           "[--tile PATH]\n", argv[0]);
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

std::string makeTempDir(const char *name) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / (std::string(name) + "-XXXXXX"))
          .string();
  return ::mkdtemp(tmpl.data()) ? tmpl : std::string();
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parseArgs(argc, argv, opt))
    return 2;
  if (!opt.seedGiven)
    opt.seed = std::random_device()() ^
               std::uint64_t(std::chrono::steady_clock::now()
                                 .time_since_epoch()
                                 .count());

  Expected<Device> dev = Device::open();
  if (!dev) {
    std::printf("SKIPPED: no CUDA driver/GPU: %s\n", dev.error().c_str());
    return kSkip;
  }
  if (!dev->isSupported()) {
    std::printf("SKIPPED: %s: tilec needs compute capability 8.0 or newer\n",
                dev->description().c_str());
    return kSkip;
  }
  std::string source, error;
  if (!readFile(opt.tilePath, source, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  const std::string arch = dev->archString();
  std::printf("tile-gpu-tests: %s, arch %s, seed %llu (rerun: --seed %llu)\n",
              dev->description().c_str(), arch.c_str(), opt.seed, opt.seed);
  std::printf("kernel: %s\n", opt.tilePath.c_str());

  std::string tmp = makeTempDir("tilec-gpu-tests");
  JITOptions jo;
  jo.cacheDir = tmp + "/jit-cache";
  jo.arch = arch;
  JIT jit(jo);
  std::string ptxas = findPtxas();

  std::vector<Config> configs;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (bool causal : {false, true})
      for (int d : {64, 128})
        if (!opt.quick || d == 64)
          configs.push_back({t, causal, d});

  std::vector<int> seqlens = {1, 17, 113, 239, 1024, 4097};
  if (opt.quick)
    seqlens = {17, 239};

  Totals totals;
  std::mt19937_64 rng(opt.seed);
  std::printf("%-4s %-5s %-6s %4s %6s %5s %-9s %-9s %-9s %-9s result\n", "path",
              "dtype", "mask", "D", "S", "BH", "case", "rel-L2", "max-abs",
              "lse-err");
  for (const Config &c : configs) {
    // JIT (compiled once per config, then cached).
    auto t0 = std::chrono::steady_clock::now();
    Expected<CompiledKernelRef> compiled =
        jit.compileFile(opt.tilePath, c.defines());
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0).count();
    Variant jitVar{"JIT", {}, {}, 0};
    if (!compiled) {
      report(totals, "JIT compile " + c.name(), false, compiled.error());
      continue;
    }
    if (!loadVariant(jitVar, jit.load(*dev, **compiled), (*compiled)->ptx,
                     "JIT load " + c.name(), totals))
      continue;
    std::printf("# %s: JIT %.2fs, block %d, smem %d B, BM %d, loaded %s\n",
                c.name().c_str(), seconds, jitVar.kernel.manifest().blockSize,
                jitVar.kernel.manifest().sharedMemoryBytes, jitVar.bm,
                jitVar.kernel.loadedFrom().c_str());

    // AOT: tile::compile → bundle on disk → loadBundle.
    Variant aotVar{"AOT", {}, {}, 0};
    std::vector<Variant *> variants = {&jitVar};
    if (opt.aot) {
      CompileOptions co;
      co.arch = arch;
      co.defines = c.defines();
      co.ptxasPath = ptxas;
      CompileResult r = compile(source, opt.tilePath, co,
                                ptxas.empty() ? EmitStage::PTX : EmitStage::Cubin);
      std::string prefix = tmp + "/aot-" + c.name();
      if (!r.ok) {
        report(totals, "AOT compile " + c.name(), false, r.diagnostics);
      } else if (Status s = writeBundle(prefix, r.manifest, r.ptx, r.cubin);
                 !s.ok()) {
        report(totals, "AOT bundle " + c.name(), false, s.message());
      } else if (loadVariant(aotVar, loadBundle(*dev, prefix), r.ptx,
                             "AOT load " + c.name(), totals)) {
        variants.push_back(&aotVar);
        std::printf("# %s: AOT bundle %s (loaded %s), PTX %s the JIT's\n",
                    c.name().c_str(), prefix.c_str(),
                    aotVar.kernel.loadedFrom().c_str(),
                    r.ptx == jitVar.ptx ? "byte-identical to" : "DIFFERS from");
        report(totals, "AOT/JIT same PTX " + c.name(), r.ptx == jitVar.ptx,
               r.ptx == jitVar.ptx ? "" : "same source and flags gave different PTX");
      }
    }

    for (int s : seqlens) {
      CaseSpec spec;
      spec.p = {s >= 4097 ? 2 : (s >= 1024 ? 4 : 3), s, c.d, c.causal,
                float(1.0 / std::sqrt(double(c.d)))};
      runCase(*dev, variants, c, spec, rng, totals);
      if (totals.fatal)
        break;
    }
    if (!totals.fatal && !opt.quick) { // more programs than SMs
      CaseSpec spec;
      spec.p = {2 * dev->smCount() + 1, 64, c.d, c.causal,
                float(1.0 / std::sqrt(double(c.d)))};
      spec.label = "BH>SMs";
      runCase(*dev, variants, c, spec, rng, totals);
    }
    if (!totals.fatal) { // seqlen 0: a real launch with every row masked
      CaseSpec spec;
      spec.p = {4, 0, c.d, c.causal, float(1.0 / std::sqrt(double(c.d)))};
      spec.label = "S=0";
      runCase(*dev, variants, c, spec, rng, totals);
      runEmptyGrid(*dev, jitVar, c, totals);
    }
    if (!totals.fatal && c.dtype == DType::F32) { // logits up to ~1e4
      CaseSpec spec;
      spec.p = {2, 239, c.d, c.causal, float(1.0 / std::sqrt(double(c.d)))};
      spec.qScale = 2500.0f;
      spec.label = "logit1e4";
      runCase(*dev, variants, c, spec, rng, totals);
    }
    if (totals.fatal) {
      std::printf("stopping: a launch failed, the CUDA context is unusable\n");
      break;
    }
  }

  // The cache: compiling everything again compiles nothing; a fresh JIT on
  // the same directory reads every kernel from disk.
  JITStats before = jit.stats();
  bool recompiled = false;
  for (const Config &c : configs)
    recompiled |= !jit.compileFile(opt.tilePath, c.defines());
  JITStats after = jit.stats();
  report(totals, "JIT cache: second pass", !recompiled &&
             after.compilations == before.compilations,
         std::to_string(after.compilations - before.compilations) +
             " new compilations, " +
             std::to_string(after.memoryHits - before.memoryHits) +
             " memory hits");
  JIT fresh(jo);
  for (const Config &c : configs)
    (void)fresh.compileFile(opt.tilePath, c.defines());
  report(totals, "JIT cache: fresh JIT, same dir",
         fresh.stats().compilations == 0 &&
             fresh.stats().diskHits == configs.size(),
         std::to_string(fresh.stats().diskHits) + " disk hits, " +
             std::to_string(fresh.stats().compilations) + " compilations");

  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  std::printf("\nsummary: %d checks, %d passed, %d failed (seed %llu)\n",
              totals.cases, totals.cases - totals.failed, totals.failed,
              opt.seed);
  for (const std::string &f : totals.failures)
    std::printf("  FAILED: %s\n", f.c_str());
  return totals.failed ? 1 : 0;
}
