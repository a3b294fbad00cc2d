//===- VariantsTest.cpp - GPU parity of the forward variants --------------===//
//
//   tile-gpu-variants [--seed N] [--only NAME] [--quick] [--tile PATH]
//                     [--jobs N] [--compile-only ARCH]
//
// Every case (VariantsCases.cpp) is a user-style .tile file held here as a
// string: `import "flex_fwd.tile"; import "mods.tile";`, the user's own
// hooks, one `kernel variant = flex_fwd<...>;` (or flex_fwd_sparse). The JIT
// compiles it with JITOptions::includeDirs = the directory of flex_fwd.tile
// ($TILEC_FLEX_FWD_TILE, $TILEC_SOURCE_DIR/examples/attention/..., --tile),
// and the result is checked against the fp64 reference of the documented
// semantics (VariantsReference.h) by the rules of VariantsCheck.h, launched
// twice (bitwise-equal results), and once with heads_kv = heads + 1, which
// the kernel's require(...) must refuse at launch. Inputs are fresh per seed; q, k and v hold
// NaN in the pad rows after each sequence and after the buffer, so a key
// past seqlen_k that leaked into a result would show.
//
// Schedules: the kernel's defaults, and on sm_90a also "fast": BM = BN = 128
// (a case's own block size where it fixes one), num_warps=8, producer,
// persistent. A schedule the compiler refuses is printed as SKIP with its
// reason, except the defaults of a 16-bit case, which must compile.
// Compilation runs first, over --jobs threads (default: up to 8), each with
// its own JIT (one disk cache).
//
// --compile-only ARCH compiles every case for ARCH without a GPU and exits.
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "SourcePath.h"
#include "TestDevice.h"
#include "TestOptions.h"
#include "VariantsCheck.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

using namespace tile;
using namespace tilegpu;

namespace {

struct Sched {
  std::string name;
  std::string schedule; ///< Schedule::parse pairs
  int block = 0;        ///< BM = BN (0: the kernel's defaults)
};

std::vector<Sched> schedulesFor(const std::string &arch) {
  std::vector<Sched> s = {{"default", "", 0}};
  if (arch == "sm_90a")
    s.push_back({"fast", "num_warps=8,producer,persistent", 128});
  return s;
}

/// One compile: a case under a schedule.
struct Job {
  const VariantCase *c = nullptr;
  Sched sched;
  std::string name; ///< "case/schedule"
  std::optional<Expected<CompiledKernelRef>> result;
  std::string scheduleError;
};

Defines definesFor(const Job &j) {
  Defines d;
  int block = j.c->blockSize ? j.c->blockSize : j.sched.block;
  if (block) {
    d["BM"] = std::to_string(block);
    d["BN"] = std::to_string(block);
  }
  return d;
}

/// Compiles every job for `arch` over `threads` threads, one JIT each.
void compileAll(std::vector<Job> &jobs, const std::string &arch,
                const std::string &includeDir, unsigned threads) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    JITOptions o;
    o.arch = arch;
    o.includeDirs = {includeDir};
    JIT jit(o);
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      Job &j = jobs[i];
      tile::Schedule schedule;
      j.scheduleError = schedule.parse(j.sched.schedule);
      if (!j.scheduleError.empty())
        continue;
      j.result = jit.compileSource(j.c->source(),
                                   "variant_" + j.c->name + ".tile",
                                   definesFor(j), j.c->kernelName(), arch,
                                   schedule);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

/// A compile error that may be printed as SKIP (not the 16-bit defaults).
bool mayRefuse(const Job &j) {
  return j.c->dtype == DType::F32 || j.sched.name != "default";
}

std::string firstLine(const std::string &s) { return s.substr(0, s.find('\n')); }

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// Unit-variance values (uniform in +-sqrt(3)), never 0, fast enough for
/// the 90M-element cases.
std::vector<float> randomInputs(std::mt19937_64 &rng, std::size_t n,
                                float scale) {
  std::vector<float> out(n);
  std::uint64_t s = rng();
  for (float &x : out) {
    s += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double u = (double(z >> 11) + 0.5) * 0x1.0p-53; // (0, 1)
    x = float((2 * u - 1) * 1.7320508075688772) * scale;
  }
  return out;
}

/// Runs one case under every compiled schedule; one line each.
void runCase(const Device &dev, const VariantCase &c,
             std::vector<Job *> jobs, unsigned long long seed, Totals &totals,
             int &skipped) {
  // The case's own stream: --only does not change its inputs.
  std::uint64_t h = std::hash<std::string>()(c.name);
  std::seed_seq seq{unsigned(seed), unsigned(seed >> 32), unsigned(h),
                    unsigned(h >> 32)};
  std::mt19937_64 rng(seq);
  VariantProblem p = c.problem();
  VariantData data;
  data.q = randomInputs(rng, std::size_t(c.batch) * c.heads * c.sq * c.d,
                        c.qScale);
  data.k = randomInputs(rng, std::size_t(c.batch) * c.headsKv * c.sk * c.d, 1);
  data.v = randomInputs(rng, data.k.size(), 1);
  for (std::vector<float> *t : {&data.q, &data.k, &data.v})
    roundTo(c.dtype, *t);
  BlockMask mask;
  if (c.sparse) {
    mask = c.makeMask(c.blockSize, c.blockSize);
    p.blockMask = &mask;
  }
  std::vector<double> oRef, lseRef;
  ReferenceInfo info = referenceVariant(p, data.q, data.k, data.v, oRef, lseRef);
  Tolerance tol;
  tol.o = c.dtype == DType::F32 ? 1e-5 : 1e-2;
  tol.lse = c.dtype == DType::F32 ? 1e-5 : 1e-3;
  if (c.largeLogits) {
    // exp2(s * log2e - m) in f32 rounds an argument of ~|s|: an error of
    // about |s| * 2^-24 in every exponent (Cases.cpp's rule).
    double e = 4 * info.maxAbsLogit * std::ldexp(1.0, -24);
    tol.o = std::max(tol.o, 2 * e);
    tol.lse += e;
  }

  DeviceVariant dv;
  if (Status s = dv.upload(dev, c, data, c.sparse ? &mask : nullptr); !s.ok())
    return report(totals, c.name + " upload", false, s.message());
  for (Job *j : jobs) {
    char head[160];
    std::snprintf(head, sizeof(head), "%-48s %-8s", c.name.c_str(),
                  j->sched.name.c_str());
    if (!j->scheduleError.empty()) {
      report(totals, head, false, "schedule: " + j->scheduleError);
      continue;
    }
    if (!*j->result) {
      if (mayRefuse(*j)) {
        std::printf("%s SKIP (the compiler refuses it: %s)\n", head,
                    firstLine(j->result->error()).c_str());
        ++skipped;
      } else {
        report(totals, head, false, "compile: " + j->result->error() +
                                        "\nsource:\n" + c.source());
      }
      continue;
    }
    Expected<Kernel> kernel = Kernel::load(dev, (**j->result)->manifest,
                                           (**j->result)->ptx,
                                           (**j->result)->cubin);
    int bm = 0;
    std::string error;
    if (!kernel) {
      report(totals, head, false, "load: " + kernel.error());
      continue;
    }
    if (!blockRows(kernel->manifest(), bm, error)) {
      report(totals, head, false, error);
      continue;
    }
    if (c.sparse && bm != c.blockSize) {
      report(totals, head, false, "BM " + std::to_string(bm) +
                                      " is not the block mask's " +
                                      std::to_string(c.blockSize));
      continue;
    }
    std::vector<std::uint8_t> o0, lse0, o1, lse1;
    Status s = dv.run(dev, *kernel, bm, o0, lse0);
    if (s.ok())
      s = dv.run(dev, *kernel, bm, o1, lse1);
    if (!s.ok()) {
      report(totals, head, false, "launch: " + s.message());
      totals.fatal = true; // a fault leaves the context unusable
      return;
    }
    CheckResult r = checkVariant(c, dv.qLayout, o0, lse0, oRef, lseRef, tol);
    if (o0 != o1 || lse0 != lse1)
      r.failures.push_back("the second run differs bitwise from the first");
    // require(heads_kv > 0 && heads % heads_kv == 0): heads_kv = heads + 1
    // is refused before the GPU runs; the next case's launches then show
    // that the context is intact.
    Status bad = dv.launchWithHeadsKv(*kernel, bm, c.heads + 1);
    if (bad.ok() || bad.message().find("requires heads_kv > 0") == std::string::npos) {
      r.failures.push_back("heads_kv = heads + 1 was not refused: " +
                           (bad.ok() ? std::string("it launched") : bad.message()));
      (void)dev.synchronize();
    }
    for (float s : {0.0f, -0.5f}) { // require(sm_scale > 0.0)
      Status badScale = dv.launchWithScale(*kernel, bm, s);
      if (badScale.ok() ||
          badScale.message().find("requires sm_scale > 0") == std::string::npos) {
        r.failures.push_back("sm_scale = " + fmt(s) + " was not refused: " +
                             (badScale.ok() ? std::string("it launched")
                                            : badScale.message()));
        (void)dev.synchronize();
      }
    }
    std::string line = std::string(head) + " rel-L2 " + fmt(r.relL2) +
                       " max-abs/max|O| " + fmt(r.maxAbsRel) + " lse-err " +
                       fmt(r.lseErr);
    if (info.emptyRows)
      line += " empty-rows " + std::to_string(info.emptyRows);
    if (c.largeLogits)
      line += " max|logit| " + fmt(info.maxAbsLogit);
    std::string why;
    for (const std::string &f : r.failures)
      why += (why.empty() ? "" : "; ") + f;
    report(totals, line, r.failures.empty(), why);
  }
}

} // namespace

int main(int argc, char **argv) {
  // Options of this test only, then the shared ones.
  std::string compileOnly;
  unsigned jobsN = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<char *> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--compile-only" && i + 1 < argc)
      compileOnly = argv[++i];
    else if (a == "--jobs" && i + 1 < argc)
      jobsN = unsigned(std::max(1, std::atoi(argv[++i])));
    else
      rest.push_back(argv[i]);
  }
  TestOptions opt;
  opt.tilePath = sourcePath("TILEC_FLEX_FWD_TILE",
                            "examples/attention/flex_fwd.tile",
                            TILEC_FLEX_FWD_TILE);
  if (!parseTestOptions(int(rest.size()), rest.data(), opt, true,
                        "cross_br_causal/fast"))
    return 2;
  const std::string includeDir =
      std::filesystem::path(opt.tilePath).parent_path().string();

  std::optional<Device> dev;
  if (compileOnly.empty()) {
    dev = openTestDevice();
    if (!dev)
      return kSkipExit;
  }
  const std::string arch = dev ? dev->archString() : compileOnly;
  std::printf("tile-gpu-variants: %s, arch %s, seed %llu (rerun: --seed %llu)"
              "%s\nkernels: %s\n",
              dev ? dev->description().c_str() : "no GPU (--compile-only)",
              arch.c_str(), opt.seed, opt.seed, opt.quick ? ", --quick" : "",
              includeDir.c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<VariantCase> cases = makeVariantCases(rng);

  std::vector<Job> jobs;
  for (const VariantCase &c : cases) {
    if (opt.quick && !c.quick)
      continue;
    for (const Sched &s : schedulesFor(arch)) {
      std::string name = c.name + "/" + s.name;
      if (name.find(opt.only) != std::string::npos)
        jobs.push_back({&c, s, name, std::nullopt, ""});
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  compileAll(jobs, arch, includeDir, jobsN);
  double compileS = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - t0).count();
  std::printf("compiled %zu kernels in %.1f s (%u threads)\n", jobs.size(),
              compileS, jobsN);

  Totals totals;
  int skipped = 0;
  if (!dev) { // --compile-only
    for (const Job &j : jobs) {
      bool ok = j.scheduleError.empty() && j.result && *j.result;
      if (!ok && mayRefuse(j) && j.result) {
        std::printf("%-58s SKIP (%s)\n", j.name.c_str(),
                    firstLine(j.result->error()).c_str());
        ++skipped;
        continue;
      }
      report(totals, j.name, ok,
             ok ? "" : j.scheduleError + (j.result ? j.result->error() : ""));
      if (!ok && j.result)
        std::printf("source:\n%s", j.c->source().c_str());
    }
  } else {
    for (const VariantCase &c : cases) {
      std::vector<Job *> mine;
      for (Job &j : jobs)
        if (j.c == &c)
          mine.push_back(&j);
      if (mine.empty())
        continue;
      runCase(*dev, c, mine, opt.seed, totals, skipped);
      if (totals.fatal) {
        std::printf("stopped early: a launch failed, the CUDA context is "
                    "unusable\n");
        break;
      }
    }
  }
  double totalS = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - t0).count();
  std::printf("\n%d/%d passed, %d skipped (seed %llu, %.1f s)\n",
              totals.cases - totals.failed, totals.cases, skipped, opt.seed,
              totalS);
  for (const std::string &f : totals.failures)
    std::printf("  FAILED: %s\n", f.c_str());
  if (totals.cases == 0) {
    std::printf("FAIL: nothing ran (--only '%s')\n", opt.only.c_str());
    return 1;
  }
  return totals.failed || totals.fatal ? 1 : 0;
}
