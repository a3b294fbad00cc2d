//===- PagedDecodeTest.cpp - GPU parity of decode over a paged KV cache ---===//
//
//   tile-gpu-paged-decode [--seed N] [--tile PATH] [--only NAME] [--quick]
//
// JIT-compiles examples/attention/paged_decode.tile
// ($TILEC_PAGED_DECODE_TILE, $TILEC_SOURCE_DIR/examples/..., --tile) for the
// GPU's arch, for bf16 / f16 (f32 where the compiler takes it), D = 64 and
// 128, GQA groups G = 1, 4, 8 and pages of 64 and 16 rows, and checks it
// against an fp64 CPU reference (docs/testing.md, "Serving"):
//   * sequence lengths 0, 1, exactly two pages, non-multiples of the page,
//     and long ones (> 4k tokens), with a few random odd lengths per seed;
//   * pages handed out in shuffled order from a pool with spare pages;
//   * NaN everywhere the kernel must not read: the rows of a last page past
//     the sequence's end, the spare pages, and the block-table entries past
//     a sequence's pages (they name a page full of NaN): a read that leaked
//     into the softmax or P·V makes the output NaN;
//   * O and LSE poisoned with NaN first; every (sequence, head) written,
//     the guard after [B, H] untouched; per sequence rel-L2 <= 1e-2 (16-bit)
//     / 1e-5 (f32), LSE within 1e-3 (1e-5) * (1 + |lse|); length 0 gives
//     O = 0 exactly and LSE = -inf;
//   * three launches bitwise-equal, and bitwise-equal to the same kernel on
//     the same cache laid out contiguously (pages in order).
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "Reference.h"
#include "SourcePath.h"
#include "TestOptions.h"
#include "TestDevice.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {


struct DecodeConfig {
  DType t;
  int d, g, page;
  std::string name() const {
    return std::string(dtypeName(t)) + "_d" + std::to_string(d) + "_g" +
           std::to_string(g) + "_page" + std::to_string(page);
  }
};

/// One decode batch: the cache as pages, and its fp64 reference.
struct Batch {
  int b = 0, hkv = 0, g = 0, d = 0, page = 0;
  int numPages = 0, maxPages = 0;
  std::vector<int> lens;
  std::vector<float> q;              ///< [B, H, D]
  std::vector<std::vector<float>> k, v; ///< per sequence [HKV, len, D]
  std::vector<double> oRef, lseRef;  ///< [B, H, D], [B, H]
  int heads() const { return hkv * g; }
};

std::vector<int> makeLengths(std::mt19937_64 &rng, int page, bool quick) {
  std::vector<int> lens = {0, 1, 2 * page, 3 * page + 5, 4099, 0, 127};
  if (!quick)
    lens.push_back(8191);
  std::uniform_int_distribution<int> pick(1, 1000);
  for (int i = 0; i < (quick ? 1 : 4); ++i)
    lens.push_back(pick(rng) | 1);
  std::shuffle(lens.begin(), lens.end(), rng);
  return lens;
}

Batch makeBatch(std::mt19937_64 &rng, const DecodeConfig &c,
                const std::vector<int> &lens) {
  Batch bt;
  bt.b = int(lens.size());
  bt.hkv = 2;
  bt.g = c.g;
  bt.d = c.d;
  bt.page = c.page;
  bt.lens = lens;
  const int H = bt.heads(), D = c.d;
  bt.q = randomNormal(rng, std::size_t(bt.b) * H * D);
  roundTo(c.t, bt.q);
  for (int len : lens) {
    bt.k.push_back(randomNormal(rng, std::size_t(bt.hkv) * len * D));
    bt.v.push_back(randomNormal(rng, std::size_t(bt.hkv) * len * D));
    roundTo(c.t, bt.k.back());
    roundTo(c.t, bt.v.back());
    int pages = (len + c.page - 1) / c.page;
    bt.numPages += pages;
    bt.maxPages = std::max(bt.maxPages, pages);
  }
  bt.maxPages += 2;   // block-table entries past every sequence's pages
  bt.numPages += 5;   // spare pages, never named by a used entry
  const double scale = 1.0 / std::sqrt(double(D));
  bt.oRef.assign(std::size_t(bt.b) * H * D, 0.0);
  bt.lseRef.assign(std::size_t(bt.b) * H, -INFINITY);
  for (int b = 0; b < bt.b; ++b)
    for (int h = 0; h < H; ++h) {
      int len = lens[b], hk = h / c.g;
      const float *qi = &bt.q[(std::size_t(b) * H + h) * D];
      std::vector<double> s(len);
      double m = -INFINITY;
      for (int j = 0; j < len; ++j) {
        const float *kj = &bt.k[b][(std::size_t(hk) * len + j) * D];
        double dot = 0;
        for (int x = 0; x < D; ++x)
          dot += double(qi[x]) * double(kj[x]);
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      if (!len)
        continue;
      double l = 0;
      double *oi = &bt.oRef[(std::size_t(b) * H + h) * D];
      for (int j = 0; j < len; ++j) {
        double w = std::exp(s[j] - m);
        l += w;
        const float *vj = &bt.v[b][(std::size_t(hk) * len + j) * D];
        for (int x = 0; x < D; ++x)
          oi[x] += w * double(vj[x]);
      }
      for (int x = 0; x < D; ++x)
        oi[x] /= l;
      bt.lseRef[std::size_t(b) * H + h] = m + std::log(l);
    }
  return bt;
}

/// The pool [numPages, HKV, PAGE, D] (NaN where no token is) and the block
/// table [B, maxPages] for page ids handed out in `order`; entries past a
/// sequence's pages name `poisonPage`, a page of NaN.
void layOut(const Batch &bt, DType t, const std::vector<int> &order,
            std::vector<std::uint8_t> &kPool, std::vector<std::uint8_t> &vPool,
            std::vector<std::int32_t> &table) {
  const std::size_t eb = dtypeBytes(t);
  const std::size_t pageElems = std::size_t(bt.hkv) * bt.page * bt.d;
  kPool.assign(std::size_t(bt.numPages) * pageElems * eb, 0xFF);
  vPool.assign(kPool.size(), 0xFF);
  const int poisonPage = order.back(); // never handed out below
  table.assign(std::size_t(bt.b) * bt.maxPages, poisonPage);
  std::size_t next = 0;
  for (int b = 0; b < bt.b; ++b) {
    int len = bt.lens[b];
    for (int p = 0; p * bt.page < len; ++p) {
      int id = order[next++];
      table[std::size_t(b) * bt.maxPages + p] = id;
      int rows = std::min(bt.page, len - p * bt.page);
      for (int hk = 0; hk < bt.hkv; ++hk) {
        std::size_t from = (std::size_t(hk) * len + std::size_t(p) * bt.page) * bt.d;
        std::size_t to = std::size_t(id) * pageElems +
                         std::size_t(hk) * bt.page * bt.d;
        std::vector<float> kr(bt.k[b].begin() + from,
                              bt.k[b].begin() + from + std::size_t(rows) * bt.d);
        std::vector<float> vr(bt.v[b].begin() + from,
                              bt.v[b].begin() + from + std::size_t(rows) * bt.d);
        std::vector<std::uint8_t> kb = encode(t, kr), vb = encode(t, vr);
        std::copy(kb.begin(), kb.end(), kPool.begin() + to * eb);
        std::copy(vb.begin(), vb.end(), vPool.begin() + to * eb);
      }
    }
  }
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

Expected<DeviceBuffer> deviceCopy(const Device &dev, const void *data,
                                  std::size_t bytes) {
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(dev, std::max<std::size_t>(bytes, 16));
  if (!b)
    return b;
  if (Status s = b->fill(0xFF); !s.ok())
    return s;
  if (bytes)
    if (Status s = b->copyFromHost(data, bytes); !s.ok())
      return s;
  return b;
}

/// Lays the batch out with page `order`, launches `runs` times into
/// poisoned outputs and returns the first run's O and LSE bytes (with the
/// guard); `differing` is the first run that differed bitwise, or 0.
Status runPaged(const Device &dev, const Kernel &kernel, const DecodeConfig &c,
                const Batch &bt, const std::vector<int> &order, int runs,
                std::vector<std::uint8_t> &o0, std::vector<std::uint8_t> &lse0,
                int &differing) {
  const std::size_t eb = dtypeBytes(c.t);
  const std::size_t guard = 64; // rows of D after O, values after LSE
  const int H = bt.heads();
  std::vector<std::uint8_t> kPool, vPool;
  std::vector<std::int32_t> table;
  layOut(bt, c.t, order, kPool, vPool, table);
  std::vector<std::uint8_t> qBytes = encode(c.t, bt.q);
  Expected<DeviceBuffer> q = deviceCopy(dev, qBytes.data(), qBytes.size());
  Expected<DeviceBuffer> k = deviceCopy(dev, kPool.data(), kPool.size());
  Expected<DeviceBuffer> v = deviceCopy(dev, vPool.data(), vPool.size());
  Expected<DeviceBuffer> tab = deviceCopy(dev, table.data(), table.size() * 4);
  Expected<DeviceBuffer> lens = deviceCopy(dev, bt.lens.data(), bt.lens.size() * 4);
  Expected<DeviceBuffer> o = DeviceBuffer::allocate(
      dev, (std::size_t(bt.b) * H + guard) * bt.d * eb);
  Expected<DeviceBuffer> lse =
      DeviceBuffer::allocate(dev, (std::size_t(bt.b) * H + guard) * 4);
  for (const Expected<DeviceBuffer> *x : {&q, &k, &v, &tab, &lens, &o, &lse})
    if (!*x)
      return x->status();
  const char *tn = dtypeName(c.t);
  std::vector<KernelArg> args = {
      KernelArg::pointer(*q, tn),        KernelArg::pointer(*k, tn),
      KernelArg::pointer(*v, tn),        KernelArg::pointer(*tab, "i32"),
      KernelArg::pointer(*lens, "i32"),  KernelArg::pointer(*o, tn),
      KernelArg::pointer(*lse, "f32"),   KernelArg::int32(bt.hkv),
      KernelArg::int32(bt.maxPages),
      KernelArg::float32(float(1.0 / std::sqrt(double(bt.d))))};
  std::array<unsigned, 3> grid = {unsigned(bt.b), unsigned(bt.hkv), 1};
  differing = 0;
  std::vector<std::uint8_t> ob, lb;
  for (int r = 0; r < runs; ++r) {
    if (Status s = o->fill(0xFF); !s.ok())
      return s;
    if (Status s = lse->fill(0xFF); !s.ok())
      return s;
    if (Status s = kernel.launch(grid, args); !s.ok())
      return s;
    if (Status s = dev.synchronize(); !s.ok())
      return s.withContext("after the launch");
    ob.resize(o->size());
    lb.resize(lse->size());
    if (Status s = o->copyToHost(ob.data(), ob.size()); !s.ok())
      return s;
    if (Status s = lse->copyToHost(lb.data(), lb.size()); !s.ok())
      return s;
    if (r == 0) {
      o0 = ob;
      lse0 = lb;
    } else if (!differing && (ob != o0 || lb != lse0)) {
      differing = r;
    }
  }
  return Status();
}

bool untouched(const std::vector<std::uint8_t> &b, std::size_t from) {
  return std::all_of(b.begin() + std::ptrdiff_t(from), b.end(),
                     [](std::uint8_t x) { return x == 0xFF; });
}

/// The checks of the file comment on one config; one report line.
void runConfig(const Device &dev, const Kernel &kernel, const DecodeConfig &c,
               const Batch &bt, std::mt19937_64 &rng, Totals &totals) {
  const int H = bt.heads(), D = bt.d;
  const std::size_t eb = dtypeBytes(c.t);
  std::vector<int> shuffled(bt.numPages), inOrder(bt.numPages);
  std::iota(inOrder.begin(), inOrder.end(), 0);
  shuffled = inOrder;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::string why;
  bool pass = true;
  auto fail = [&](const std::string &w) {
    pass = false;
    why += (why.empty() ? "" : "; ") + w;
  };
  std::vector<std::uint8_t> o0, lse0, oc, lsec;
  int differing = 0, unused = 0;
  Status s = runPaged(dev, kernel, c, bt, shuffled, 3, o0, lse0, differing);
  if (s.ok())
    s = runPaged(dev, kernel, c, bt, inOrder, 1, oc, lsec, unused);
  if (!s.ok()) {
    totals.fatal = true; // a fault leaves the context unusable
    return report(totals, c.name(), false, s.message());
  }
  std::size_t rows = std::size_t(bt.b) * H;
  if (!untouched(o0, rows * D * eb))
    fail("O written past [B, H]");
  if (!untouched(lse0, rows * 4))
    fail("LSE written past [B, H]");
  if (differing)
    fail("run " + std::to_string(differing) + " differs bitwise from run 0");
  if (o0 != oc || lse0 != lsec)
    fail("shuffled pages differ bitwise from the same cache in page order");

  const double tol = c.t == DType::F32 ? 1e-5 : 1e-2;
  const double lseTol = c.t == DType::F32 ? 1e-5 : 1e-3;
  std::vector<float> out = decode(c.t, o0.data(), rows * D);
  std::vector<float> lseOut = decode(DType::F32, lse0.data(), rows);
  double worstRel = 0, worstLse = 0;
  for (int b = 0; b < bt.b; ++b) {
    std::string seq = "sequence " + std::to_string(b) + " (length " +
                      std::to_string(bt.lens[b]) + ")";
    std::size_t o = std::size_t(b) * H * D, l = std::size_t(b) * H;
    std::vector<float> got(out.begin() + o, out.begin() + o + std::size_t(H) * D);
    std::vector<float> gotLse(lseOut.begin() + l, lseOut.begin() + l + H);
    if (bt.lens[b] == 0) {
      if (!std::all_of(got.begin(), got.end(), [](float x) { return x == 0.0f; }))
        fail(seq + ": O is not 0");
      if (!std::all_of(gotLse.begin(), gotLse.end(),
                       [](float x) { return std::isinf(x) && x < 0; }))
        fail(seq + ": LSE is not -inf");
      continue;
    }
    std::vector<double> ref(bt.oRef.begin() + o,
                            bt.oRef.begin() + o + std::size_t(H) * D);
    std::vector<double> refLse(bt.lseRef.begin() + l, bt.lseRef.begin() + l + H);
    ErrorStats e = compare(got, ref), le = compareScaled(gotLse, refLse);
    if (e.nonFinite)
      fail(seq + ": " + std::to_string(e.nonFinite) +
           " O elements not written or NaN, first in head " +
           std::to_string(e.firstNonFinite / D));
    else if (e.relL2 > tol)
      fail(seq + ": rel-L2 " + fmt(e.relL2) + " > " + fmt(tol));
    if (le.nonFinite)
      fail(seq + ": " + std::to_string(le.nonFinite) +
           " LSE values not written or NaN");
    else if (le.maxAbs > lseTol)
      fail(seq + ": LSE error " + fmt(le.maxAbs) + " > " + fmt(lseTol) +
           "*(1+|lse|)");
    worstRel = std::max(worstRel, e.relL2);
    worstLse = std::max(worstLse, le.maxAbs);
  }
  char line[160];
  std::snprintf(line, sizeof(line), "%-22s B %2d H %2d pages %4d rel-L2 %s lse-err %s",
                c.name().c_str(), bt.b, H, bt.numPages, fmt(worstRel).c_str(),
                fmt(worstLse).c_str());
  report(totals, line, pass, why);
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  opt.tilePath = sourcePath("TILEC_PAGED_DECODE_TILE", "examples/attention/paged_decode.tile", TILEC_PAGED_DECODE_TILE);
  if (!parseTestOptions(argc, argv, opt, true, "bf16_d128_g4_page64"))
    return 2;
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-paged-decode: %s, arch %s, seed %llu (rerun: --seed "
              "%llu)\nkernel: %s\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed, opt.tilePath.c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<DecodeConfig> configs;
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    for (int d : {64, 128})
      for (auto [g, page] : std::array<std::pair<int, int>, 3>{
               {{1, 64}, {4, 64}, {8, 16}}})
        if (!opt.quick || (d == 64 && t != DType::F32))
          configs.push_back({t, d, g, page});

  JIT jit;
  Totals totals;
  for (const DecodeConfig &c : configs) {
    if (c.name().find(opt.only) == std::string::npos)
      continue;
    Defines defines = {{"T", dtypeName(c.t)},
                       {"D", std::to_string(c.d)},
                       {"G", std::to_string(c.g)},
                       {"PAGE", std::to_string(c.page)}};
    Expected<CompiledKernelRef> compiled =
        jit.compileFile(opt.tilePath, defines, "", dev->archString());
    if (!compiled) {
      std::string msg = compiled.error();
      if (c.t == DType::F32)
        std::printf("%s SKIP (the compiler refuses f32: %s)\n",
                    c.name().c_str(), msg.substr(0, msg.find('\n')).c_str());
      else
        report(totals, c.name() + " compile", false, msg);
      continue;
    }
    Expected<Kernel> kernel = jit.load(*dev, **compiled);
    if (!kernel) {
      report(totals, c.name() + " load", false, kernel.error());
      continue;
    }
    Batch bt = makeBatch(rng, c, makeLengths(rng, c.page, opt.quick));
    runConfig(*dev, *kernel, c, bt, rng, totals);
    if (totals.fatal) {
      std::printf("stopped early: a launch failed, the CUDA context is "
                  "unusable\n");
      break;
    }
  }
  std::printf("\nsummary: %d checks, %d passed, %d failed (seed %llu)\n",
              totals.cases, totals.cases - totals.failed, totals.failed,
              opt.seed);
  for (const std::string &f : totals.failures)
    std::printf("  FAILED: %s\n", f.c_str());
  if (totals.cases == 0) {
    std::printf("FAIL: nothing ran (--only '%s')\n", opt.only.c_str());
    return 1;
  }
  return totals.failed || totals.fatal ? 1 : 0;
}
