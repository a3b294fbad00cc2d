//===- flash_fwd_jit.cpp - JIT-compile flash_fwd.tile, run it, check it ---===//
//
//   flash_fwd_jit [KERNEL.tile] [--dtype bf16|f16|f32] [--causal]
//                 [--seqlen N] [--batch-heads N] [--head-dim D] [--seed S]
//                 [--iters N] [--warmup-ms MS] [--config-table PATH]
//                 [--no-table] [--schedule name=value,...]
//                 [--layout bhsd|bshd|both] [--heads H] [--no-check]
//
// Compiles the kernel for this GPU through tile::JIT (cached in
// $TILEC_CACHE_DIR or ~/.cache/tilec), runs it on seeded random data,
// compares O and LSE with an fp64 CPU reference and times it with CUDA
// events (after MS ms of untimed launches, as bench/ does: the GPU's clock
// settles under its power limit). Block sizes and schedule come from the
// kernel's config table (configs/flash_fwd.<arch>.json beside the .tile
// file) for this launch's dtype, head dim, causality and seqlen, as a
// library host would pick them; --schedule overrides fields. Exits 0 when rel-L2 ≤ 1e-2 (f16/bf16) or ≤ 1e-5 (f32), else 1;
// without a GPU it says so and exits 1.
//
// The kernels: flash_fwd<BM, BN, D, CAUSAL, T>(q, k, v, o: ptr<T>,
// lse: ptr<f32>, seqlen: i32, sm_scale: f32), tensors [BH, S, D], LSE
// [BH, S] in natural-log units, grid (ceil(S/BM), BH, 1) (--layout bhsd,
// the default); flash_fwd_bshd<same>(q, k, v, o, lse, seqlen, heads: i32,
// sm_scale) on [B, S, H, D] tensors (B = BH / H), grid (ceil(S/BM), H, B)
// (--layout bshd). --layout both runs the two on the same data, one after
// the other in one process, and prints the second's time over the first's.
// --no-check skips the fp64 reference (for timing long sequences: it costs
// BH * S^2 * D CPU multiply-adds) but still requires every output finite.
//
//===----------------------------------------------------------------------===//

#include "tile/ConfigTable.h"
#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Args {
  std::string tile = TILEC_EXAMPLES_DIR "/attention/flash_fwd.tile";
  std::string dtype = "bf16";
  bool causal = false;
  int seqlen = 1024, batchHeads = 16, headDim = 128, iters = 20;
  int warmupMs = 200;
  std::string table;    ///< empty: configs/flash_fwd.<arch>.json beside `tile`
  bool noTable = false;
  std::string schedule; ///< name=value pairs applied on top
  std::string layout = "bhsd"; ///< bhsd, bshd or both
  int heads = 0;        ///< H of [B, S, H, D] (0: a divisor of BH, <= 16)
  bool tileGiven = false;
  bool check = true;    ///< --no-check: no fp64 reference
  unsigned long long seed = 0;
  bool seedGiven = false;
};

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [flash_fwd.tile] [--dtype bf16|f16|f32] [--causal] "
               "[--seqlen N] [--batch-heads N] [--head-dim D] [--seed S] "
               "[--iters N] [--warmup-ms MS] [--config-table PATH] [--no-table] "
               "[--schedule name=value,...] [--layout bhsd|bshd|both] "
               "[--heads H] [--no-check]\n",
               argv0);
  return 2;
}

bool parseInt(const char *s, int lo, int &out) {
  char *end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > (1 << 30))
    return false;
  out = int(v);
  return true;
}

bool parseArgs(int argc, char **argv, Args &a) {
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    bool hasValue = i + 1 < argc;
    if (f == "--causal") {
      a.causal = true;
    } else if (f == "--dtype" && hasValue) {
      a.dtype = argv[++i];
      if (a.dtype != "bf16" && a.dtype != "f16" && a.dtype != "f32")
        return false;
    } else if (f == "--seqlen" && hasValue) {
      if (!parseInt(argv[++i], 0, a.seqlen))
        return false;
    } else if (f == "--batch-heads" && hasValue) {
      if (!parseInt(argv[++i], 1, a.batchHeads))
        return false;
    } else if (f == "--head-dim" && hasValue) {
      if (!parseInt(argv[++i], 1, a.headDim))
        return false;
    } else if (f == "--iters" && hasValue) {
      if (!parseInt(argv[++i], 1, a.iters))
        return false;
    } else if (f == "--warmup-ms" && hasValue) {
      if (!parseInt(argv[++i], 0, a.warmupMs))
        return false;
    } else if (f == "--config-table" && hasValue) {
      a.table = argv[++i];
    } else if (f == "--no-table") {
      a.noTable = true;
    } else if (f == "--schedule" && hasValue) {
      a.schedule = argv[++i];
    } else if (f == "--layout" && hasValue) {
      a.layout = argv[++i];
      if (a.layout != "bhsd" && a.layout != "bshd" && a.layout != "both")
        return false;
    } else if (f == "--heads" && hasValue) {
      if (!parseInt(argv[++i], 1, a.heads))
        return false;
    } else if (f == "--no-check") {
      a.check = false;
    } else if (f == "--seed" && hasValue) {
      a.seed = std::strtoull(argv[++i], nullptr, 10);
      a.seedGiven = true;
    } else if (!f.empty() && f[0] != '-') {
      a.tile = f;
      a.tileGiven = true;
    } else {
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Host data: dtype rounding and the fp64 reference
//===----------------------------------------------------------------------===//

std::vector<std::uint8_t> toDevice(const std::string &dtype,
                                   std::vector<float> &x) {
  std::size_t eb = dtype == "f32" ? 4 : 2;
  std::vector<std::uint8_t> out(x.size() * eb);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (eb == 4) {
      std::memcpy(&out[4 * i], &x[i], 4);
      continue;
    }
    std::uint16_t h =
        dtype == "f16" ? tile::floatToHalf(x[i]) : tile::floatToBFloat16(x[i]);
    x[i] = dtype == "f16" ? tile::halfToFloat(h) : tile::bfloat16ToFloat(h);
    std::memcpy(&out[2 * i], &h, 2);
  }
  return out;
}

std::vector<float> fromDevice(const std::string &dtype,
                              const std::vector<std::uint8_t> &b) {
  std::size_t eb = dtype == "f32" ? 4 : 2;
  std::vector<float> out(b.size() / eb);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (eb == 4) {
      std::memcpy(&out[i], &b[4 * i], 4);
      continue;
    }
    std::uint16_t h;
    std::memcpy(&h, &b[2 * i], 2);
    out[i] = dtype == "f16" ? tile::halfToFloat(h) : tile::bfloat16ToFloat(h);
  }
  return out;
}

/// softmax(scale·QKᵀ)V and LSE per row in fp64, over all CPU threads.
void reference(const Args &a, float scale, const std::vector<float> &q,
               const std::vector<float> &k, const std::vector<float> &v,
               std::vector<double> &o, std::vector<double> &lse) {
  const std::size_t S = std::size_t(a.seqlen), D = std::size_t(a.headDim);
  const long rows = long(a.batchHeads) * a.seqlen;
  o.assign(std::size_t(rows) * D, 0.0);
  lse.assign(std::size_t(rows), 0.0);
  std::atomic<long> next{0};
  auto work = [&] {
    std::vector<double> s(S);
    for (long r; (r = next++) < rows;) {
      std::size_t base = std::size_t(r) / S * S * D, i = std::size_t(r) % S;
      std::size_t hi = a.causal ? i + 1 : S;
      double m = -INFINITY, l = 0;
      for (std::size_t j = 0; j < hi; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < D; ++c)
          dot += double(q[base + i * D + c]) * k[base + j * D + c];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      double *orow = &o[std::size_t(r) * D];
      for (std::size_t j = 0; j < hi; ++j) {
        double p = std::exp(s[j] - m);
        l += p;
        for (std::size_t c = 0; c < D; ++c)
          orow[c] += p * v[base + j * D + c];
      }
      for (std::size_t c = 0; c < D; ++c)
        orow[c] /= l;
      lse[std::size_t(r)] = m + std::log(l);
    }
  };
  std::vector<std::thread> pool(
      std::max(1u, std::thread::hardware_concurrency()) - 1);
  for (std::thread &t : pool)
    t = std::thread(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

int fail(const std::string &message) {
  std::fprintf(stderr, "flash_fwd_jit: %s\n", message.c_str());
  return 1;
}

/// [BH, S, D] as [B, S, H, D] (B = BH / H) or, with `back`, the reverse:
/// row s of head bh is row (bh / H, s, bh % H) there. Elements of `eb`
/// bytes, rows of D of them.
std::vector<std::uint8_t> permuteHeads(const std::vector<std::uint8_t> &x,
                                       std::size_t eb, int bh, int heads,
                                       int seqlen, int d, bool back) {
  std::vector<std::uint8_t> out(x.size());
  const std::size_t row = eb * std::size_t(d);
  for (int g = 0; g < bh; ++g)
    for (int i = 0; i < seqlen; ++i) {
      std::size_t bhsd = (std::size_t(g) * seqlen + i) * row;
      std::size_t bshd =
          ((std::size_t(g / heads) * seqlen + i) * heads + g % heads) * row;
      std::memcpy(&out[back ? bhsd : bshd], &x[back ? bshd : bhsd], row);
    }
  return out;
}

struct Outcome {
  bool pass = false;
  double ms = 0;
};

/// Compiles `tilePath` through `jit`, runs it on `hostBytes` (q, k, v as
/// [BH, S, D]; laid out as [B, S, H, D] with `bshd`), checks O and LSE
/// against the reference and times it. Returns 0 (the outcome in `r`) or
/// the exit code of a failure it printed.
int runLayout(const Args &a, const tile::Device &dev, tile::JIT &jit,
              const std::string &tilePath, bool bshd, int heads,
              const tile::Defines &defines, const tile::Schedule &schedule,
              const std::vector<std::uint8_t> (&hostBytes)[3], float scale,
              const std::vector<double> &oRef,
              const std::vector<double> &lseRef, Outcome &r) {
  // Compile (or fetch from the cache) and load.
  tile::JITStats before = jit.stats();
  auto t0 = std::chrono::steady_clock::now();
  auto compiled =
      jit.compileFile(tilePath, defines, "", dev.archString(), schedule);
  if (!compiled)
    return fail(compiled.error());
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  auto kernel = jit.load(dev, **compiled);
  if (!kernel)
    return fail(kernel.error());
  const tile::Manifest &m = kernel->manifest();
  int bm =
      m.constants.count("BM") ? std::atoi(m.constants.at("BM").c_str()) : 0;
  if (bm <= 0)
    return fail("the manifest has no positive constant BM to size the grid");
  bool compiledNow = jit.stats().compilations > before.compilations;
  std::printf("kernel: %s [T=%s CAUSAL=%s D=%d] %s in %.2f s; block %d, "
              "shared %d B, BM %d, %zu tensor maps, loaded from %s; cache "
              "%s\n",
              tilePath.c_str(), a.dtype.c_str(), a.causal ? "true" : "false",
              a.headDim, compiledNow ? "compiled" : "from cache",
              compileSeconds, m.blockSize, m.sharedMemoryBytes, bm,
              m.tensorMaps.size(), kernel->loadedFrom().c_str(),
              jit.cacheDir().c_str());

  const std::size_t n = std::size_t(a.batchHeads) * a.seqlen * a.headDim;
  const std::size_t nLse = std::size_t(a.batchHeads) * a.seqlen;
  const std::size_t eb = a.dtype == "f32" ? 4 : 2;
  std::vector<tile::DeviceBuffer> bufs;
  for (const std::vector<std::uint8_t> &x : hostBytes) {
    std::vector<std::uint8_t> bytes =
        bshd ? permuteHeads(x, eb, a.batchHeads, heads, a.seqlen, a.headDim,
                            false)
             : x;
    auto b = tile::DeviceBuffer::allocate(dev, bytes.size());
    if (!b)
      return fail(b.error());
    if (tile::Status s = b->copyFromHost(bytes.data(), bytes.size()); !s.ok())
      return fail(s.message());
    bufs.push_back(b.take());
  }
  auto o = tile::DeviceBuffer::allocate(dev, n * eb);
  auto lse = tile::DeviceBuffer::allocate(dev, nLse * 4);
  if (!o || !lse)
    return fail(!o ? o.error() : lse.error());
  if (!o->fill(0xFF).ok() || !lse->fill(0xFF).ok()) // NaN poison
    return fail("cannot poison the outputs");

  const char *t = a.dtype.c_str();
  std::vector<tile::KernelArg> args = {tile::KernelArg::pointer(bufs[0], t),
                                       tile::KernelArg::pointer(bufs[1], t),
                                       tile::KernelArg::pointer(bufs[2], t),
                                       tile::KernelArg::pointer(*o, t),
                                       tile::KernelArg::pointer(*lse, "f32"),
                                       tile::KernelArg::int32(a.seqlen)};
  if (bshd)
    args.push_back(tile::KernelArg::int32(heads));
  args.push_back(tile::KernelArg::float32(scale));
  unsigned mBlocks = unsigned((a.seqlen + bm - 1) / bm);
  std::array<unsigned, 3> grid =
      bshd ? std::array<unsigned, 3>{mBlocks, unsigned(heads),
                                     unsigned(a.batchHeads / heads)}
           : std::array<unsigned, 3>{mBlocks, unsigned(a.batchHeads), 1};

  if (tile::Status s = kernel->launch(grid, args); !s.ok())
    return fail(s.message());
  if (tile::Status s = dev.synchronize(); !s.ok())
    return fail(s.message());
  std::vector<std::uint8_t> oBytes(n * eb), lseBytes(nLse * 4);
  if (!o->download(oBytes).ok() || !lse->download(lseBytes).ok())
    return fail("cannot read the outputs back");
  if (bshd) // LSE is [B, H, S] = [BH, S] either way
    oBytes = permuteHeads(oBytes, eb, a.batchHeads, heads, a.seqlen,
                          a.headDim, true);

  // Check against fp64.
  std::vector<float> out = fromDevice(a.dtype, oBytes);
  std::vector<float> lseOut = fromDevice("f32", lseBytes);
  double num = 0, den = 0, maxAbs = 0, lseErr = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i])) {
      ++bad;
      continue;
    }
    if (!a.check)
      continue;
    double d = out[i] - oRef[i];
    num += d * d;
    den += oRef[i] * oRef[i];
    maxAbs = std::max(maxAbs, std::fabs(d));
  }
  for (std::size_t i = 0; i < nLse; ++i) {
    if (!std::isfinite(lseOut[i]))
      ++bad;
    else if (a.check)
      lseErr = std::max(lseErr, std::fabs(lseOut[i] - lseRef[i]) /
                                    (1 + std::fabs(lseRef[i])));
  }
  double relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  double tol = a.dtype == "f32" ? 1e-5 : 1e-2;
  double lseTol = a.dtype == "f32" ? 1e-5 : 1e-3;
  if (!a.check)
    std::printf("check %s: skipped (--no-check); ", bshd ? "bshd" : "bhsd");
  std::printf(
      "check %s: S=%d BH=%d D=%d %s %s: rel-L2 %.3e (limit %.0e), "
      "max-abs %.3e, LSE err %.3e (limit %.0e), %zu unwritten/non-finite\n",
      bshd ? "bshd" : "bhsd", a.seqlen, a.batchHeads, a.headDim,
      a.dtype.c_str(), a.causal ? "causal" : "non-causal", relL2, tol, maxAbs,
      lseErr, lseTol, bad);
  r.pass = bad == 0 && relL2 <= tol && lseErr <= lseTol;

  // Time it: untimed launches for warmupMs, then the median of `iters`
  // single-launch event pairs.
  for (auto w0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - w0 <
       std::chrono::milliseconds(a.warmupMs);) {
    for (int i = 0; i < 8; ++i) // a few launches per sync: no host gaps
      if (!kernel->launch(grid, args).ok())
        return fail("warm-up launch failed");
    if (!dev.synchronize().ok())
      return fail("warm-up launch failed");
  }
  std::vector<float> times;
  for (int i = 0; i < a.iters; ++i) {
    auto timer = tile::EventTimer::create(dev);
    if (!timer)
      return fail(timer.error());
    if (!timer->start().ok() || !kernel->launch(grid, args).ok() ||
        !timer->stop().ok())
      return fail("timed launch failed");
    auto ms = timer->elapsedMs();
    if (!ms)
      return fail(ms.error());
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  r.ms = times.empty() ? 0 : times[times.size() / 2];
  double flops = 4.0 * a.batchHeads * double(a.seqlen) * a.seqlen * a.headDim *
                 (a.causal ? 0.5 : 1.0);
  std::printf("time %s: %.4f ms (median of %d), %.1f TFLOP/s\n",
              bshd ? "bshd" : "bhsd", r.ms, a.iters,
              r.ms > 0 ? flops / (r.ms * 1e-3) / 1e12 : 0.0);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Args a;
  if (!parseArgs(argc, argv, a))
    return usage(argv[0]);
  if (!a.seedGiven)
    a.seed = std::random_device()();

  tile::Expected<tile::Device> dev = tile::Device::open();
  if (!dev)
    return fail(dev.error());
  if (!dev->isSupported())
    return fail(dev->description() + ": tilec needs compute capability 8.0+");
  std::printf("device: %s, arch %s\n", dev->description().c_str(),
              dev->archString().c_str());

  // The configuration: the table's entry for this launch, else defaults.
  std::map<std::string, std::string> keys = {
      {"T", a.dtype},
      {"CAUSAL", a.causal ? "true" : "false"},
      {"D", std::to_string(a.headDim)}};
  tile::KernelConfig config;
  config.origin = "kernel defaults (--no-table)";
  if (!a.noTable) {
    std::string path = a.table;
    if (path.empty()) {
      std::string dir = a.tile.substr(0, a.tile.find_last_of('/') + 1);
      path = dir + "configs/flash_fwd." + dev->archString() + ".json";
    }
    tile::ConfigTable table;
    std::string why;
    if (!tile::ConfigTable::load(path, table, why))
      return fail(why + " (--no-table: the kernel's defaults)");
    config = table.lookup(keys, a.seqlen);
    config.origin = path + ": " + config.origin;
  }
  if (std::string why = config.schedule.parse(a.schedule); !why.empty())
    return fail("--schedule: " + why);
  if (std::string why = config.schedule.validate(); !why.empty())
    return fail("--schedule: " + why);
  tile::Defines defines = config.defines;
  for (const auto &[k, v] : keys)
    defines[k] = v;
  std::printf("config: %s\n  defines:", config.origin.c_str());
  for (const auto &[k, v] : defines)
    std::printf(" %s=%s", k.c_str(), v.c_str());
  std::printf("\n  schedule: %s\n", config.schedule.str().c_str());

  // Seeded random inputs (rounded to the dtype; the reference sees those),
  // [BH, S, D], and the fp64 reference.
  std::printf("seed: %llu (rerun with --seed %llu)\n", a.seed, a.seed);
  std::mt19937_64 rng(a.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const std::size_t n = std::size_t(a.batchHeads) * a.seqlen * a.headDim;
  std::vector<float> host[3];
  std::vector<std::uint8_t> hostBytes[3];
  for (int i = 0; i < 3; ++i) {
    host[i].resize(n);
    for (float &e : host[i])
      do
        e = normal(rng);
      while (e == 0.f);
    hostBytes[i] = toDevice(a.dtype, host[i]);
  }
  const float scale = float(1.0 / std::sqrt(double(a.headDim)));
  std::vector<double> oRef, lseRef;
  if (a.check)
    reference(a, scale, host[0], host[1], host[2], oRef, lseRef);

  // The kernels to run: flash_fwd.tile and/or flash_fwd_bshd.tile beside
  // the given one (a KERNEL.tile argument names the only one run).
  std::string dir = a.tile.substr(0, a.tile.find_last_of('/') + 1);
  std::vector<std::pair<std::string, std::string>> runs; // layout, tile
  for (std::string layout : {"bhsd", "bshd"})
    if (a.layout == layout || a.layout == "both")
      runs.push_back({layout, a.tileGiven && a.layout != "both"
                                  ? a.tile
                                  : dir + (layout == "bhsd"
                                               ? "flash_fwd.tile"
                                               : "flash_fwd_bshd.tile")});
  int heads = a.heads;
  if (heads == 0)
    heads = std::gcd(a.batchHeads, 16);
  if (a.batchHeads % heads)
    return fail("--heads " + std::to_string(heads) + " does not divide " +
                "--batch-heads " + std::to_string(a.batchHeads));

  bool pass = true;
  std::vector<double> millis;
  tile::JIT jit;
  for (const auto &[layout, tilePath] : runs) {
    Outcome r;
    if (int rc = runLayout(a, *dev, jit, tilePath, layout == "bshd", heads,
                           defines, config.schedule, hostBytes, scale, oRef,
                           lseRef, r))
      return rc;
    pass = pass && r.pass;
    millis.push_back(r.ms);
  }
  if (millis.size() == 2 && millis[0] > 0)
    std::printf("bshd / bhsd time: %.3f (same data, H=%d)\n",
                millis[1] / millis[0], heads);
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
