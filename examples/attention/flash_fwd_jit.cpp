//===- flash_fwd_jit.cpp - JIT-compile flash_fwd.tile, run it, check it ---===//
//
//   flash_fwd_jit [flash_fwd.tile] [--dtype bf16|f16|f32] [--causal]
//                 [--seqlen N] [--batch-heads N] [--head-dim D] [--seed S]
//                 [--iters N] [--warmup-ms MS] [--config-table PATH]
//                 [--no-table] [--schedule name=value,...]
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
// The kernel: flash_fwd<BM, BN, D, CAUSAL, T>(q, k, v, o: ptr<T>,
// lse: ptr<f32>, seqlen: i32, sm_scale: f32), tensors [BH, S, D], LSE
// [BH, S] in natural-log units, grid (ceil(S/BM), BH, 1).
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
  unsigned long long seed = 0;
  bool seedGiven = false;
};

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [flash_fwd.tile] [--dtype bf16|f16|f32] [--causal] "
               "[--seqlen N] [--batch-heads N] [--head-dim D] [--seed S] "
               "[--iters N] [--warmup-ms MS] [--config-table PATH] [--no-table] "
               "[--schedule name=value,...]\n",
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
    } else if (f == "--seed" && hasValue) {
      a.seed = std::strtoull(argv[++i], nullptr, 10);
      a.seedGiven = true;
    } else if (!f.empty() && f[0] != '-') {
      a.tile = f;
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

  // Compile (or fetch from the cache) and load.
  tile::JIT jit;
  auto t0 = std::chrono::steady_clock::now();
  auto compiled = jit.compileFile(a.tile, defines, "", dev->archString(),
                                  config.schedule);
  if (!compiled)
    return fail(compiled.error());
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  auto kernel = jit.load(*dev, **compiled);
  if (!kernel)
    return fail(kernel.error());
  const tile::Manifest &m = kernel->manifest();
  int bm =
      m.constants.count("BM") ? std::atoi(m.constants.at("BM").c_str()) : 0;
  if (bm <= 0)
    return fail("the manifest has no positive constant BM to size the grid");
  tile::JITStats st = jit.stats();
  std::printf("kernel: %s [T=%s CAUSAL=%s D=%d] %s in %.2f s; block %d, "
              "shared %d B, BM %d, loaded from %s; cache %s\n",
              a.tile.c_str(), a.dtype.c_str(), a.causal ? "true" : "false",
              a.headDim, st.compilations ? "compiled" : "from cache",
              compileSeconds, m.blockSize, m.sharedMemoryBytes, bm,
              kernel->loadedFrom().c_str(), jit.cacheDir().c_str());

  // Seeded random inputs (rounded to the dtype; the reference sees those).
  std::printf("seed: %llu (rerun with --seed %llu)\n", a.seed, a.seed);
  std::mt19937_64 rng(a.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const std::size_t n = std::size_t(a.batchHeads) * a.seqlen * a.headDim;
  const std::size_t nLse = std::size_t(a.batchHeads) * a.seqlen;
  const std::size_t eb = a.dtype == "f32" ? 4 : 2;
  std::vector<float> host[3];
  std::vector<tile::DeviceBuffer> bufs;
  for (std::vector<float> &x : host) {
    x.resize(n);
    for (float &e : x)
      do
        e = normal(rng);
      while (e == 0.f);
    std::vector<std::uint8_t> bytes = toDevice(a.dtype, x);
    auto b = tile::DeviceBuffer::allocate(*dev, bytes.size());
    if (!b)
      return fail(b.error());
    if (tile::Status s = b->copyFromHost(bytes.data(), bytes.size()); !s.ok())
      return fail(s.message());
    bufs.push_back(b.take());
  }
  auto o = tile::DeviceBuffer::allocate(*dev, n * eb);
  auto lse = tile::DeviceBuffer::allocate(*dev, nLse * 4);
  if (!o || !lse)
    return fail(!o ? o.error() : lse.error());
  if (!o->fill(0xFF).ok() || !lse->fill(0xFF).ok()) // NaN poison
    return fail("cannot poison the outputs");

  const float scale = float(1.0 / std::sqrt(double(a.headDim)));
  const char *t = a.dtype.c_str();
  std::vector<tile::KernelArg> args = {tile::KernelArg::pointer(bufs[0], t),
                                       tile::KernelArg::pointer(bufs[1], t),
                                       tile::KernelArg::pointer(bufs[2], t),
                                       tile::KernelArg::pointer(*o, t),
                                       tile::KernelArg::pointer(*lse, "f32"),
                                       tile::KernelArg::int32(a.seqlen),
                                       tile::KernelArg::float32(scale)};
  std::array<unsigned, 3> grid = {unsigned((a.seqlen + bm - 1) / bm),
                                  unsigned(a.batchHeads), 1};

  if (tile::Status s = kernel->launch(grid, args); !s.ok())
    return fail(s.message());
  if (tile::Status s = dev->synchronize(); !s.ok())
    return fail(s.message());
  std::vector<std::uint8_t> oBytes(n * eb), lseBytes(nLse * 4);
  if (!o->download(oBytes).ok() || !lse->download(lseBytes).ok())
    return fail("cannot read the outputs back");

  // Check against fp64.
  std::vector<double> oRef, lseRef;
  reference(a, scale, host[0], host[1], host[2], oRef, lseRef);
  std::vector<float> out = fromDevice(a.dtype, oBytes);
  std::vector<float> lseOut = fromDevice("f32", lseBytes);
  double num = 0, den = 0, maxAbs = 0, lseErr = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i])) {
      ++bad;
      continue;
    }
    double d = out[i] - oRef[i];
    num += d * d;
    den += oRef[i] * oRef[i];
    maxAbs = std::max(maxAbs, std::fabs(d));
  }
  for (std::size_t i = 0; i < nLse; ++i) {
    if (!std::isfinite(lseOut[i]))
      ++bad;
    else
      lseErr = std::max(lseErr, std::fabs(lseOut[i] - lseRef[i]) /
                                    (1 + std::fabs(lseRef[i])));
  }
  double relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  double tol = a.dtype == "f32" ? 1e-5 : 1e-2;
  double lseTol = a.dtype == "f32" ? 1e-5 : 1e-3;
  std::printf(
      "check: S=%d BH=%d D=%d %s %s: rel-L2 %.3e (limit %.0e), "
      "max-abs %.3e, LSE err %.3e (limit %.0e), %zu unwritten/non-finite\n",
      a.seqlen, a.batchHeads, a.headDim, a.dtype.c_str(),
      a.causal ? "causal" : "non-causal", relL2, tol, maxAbs, lseErr, lseTol,
      bad);

  // Time it: untimed launches for warmupMs, then the median of `iters`
  // single-launch event pairs.
  for (auto w0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - w0 <
       std::chrono::milliseconds(a.warmupMs);) {
    for (int i = 0; i < 8; ++i) // a few launches per sync: no host gaps
      if (!kernel->launch(grid, args).ok())
        return fail("warm-up launch failed");
    if (!dev->synchronize().ok())
      return fail("warm-up launch failed");
  }
  std::vector<float> times;
  for (int i = 0; i < a.iters; ++i) {
    auto timer = tile::EventTimer::create(*dev);
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
  double ms = times.empty() ? 0 : times[times.size() / 2];
  double flops = 4.0 * a.batchHeads * double(a.seqlen) * a.seqlen * a.headDim *
                 (a.causal ? 0.5 : 1.0);
  std::printf("time: %.4f ms (median of %d), %.1f TFLOP/s\n", ms, a.iters,
              ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0);

  bool pass = bad == 0 && relL2 <= tol && lseErr <= lseTol;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
