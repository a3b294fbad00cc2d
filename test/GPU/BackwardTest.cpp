//===- BackwardTest.cpp - attention backward parity on the GPU -----------===//
//
//   tile-gpu-bwd [--seed N] [--quick] [--only NAME] [--schedule F=V,...]
//
// --quick: seqlens 1, 17, 130 and the special cases only (for
// compute-sanitizer: run-gpu.sh SANITIZE=1 SANITIZE_TESTS=tile-gpu-bwd).
// --only: the configs whose name contains NAME ("bf16_causal_d128").
// --schedule: fields set over the table's schedule of dK/dV and dQ
// ("producer=true": a producer warpgroup, rings two products read).
//
// JIT-compiles the three backward kernels (examples/attention/
// flash_bwd_preprocess.tile, flash_bwd_dkdv.tile, flash_bwd_dq.tile; the
// directory is $TILEC_SOURCE_DIR/examples/attention when set), each with
// its config table's schedule where configs/ has one for the GPU's arch
// (as tile::AttentionBackward compiles them), for every
// (dtype, causal, head dim), and for four GQA configurations (G = 8, 4, 2:
// K/V of BH / G heads, dK and dV summed over each group), runs preprocess → dK/dV → dQ and compares dQ,
// dK, dV (and delta) against an fp64 CPU backward of softmax(QKᵀ·scale)V.
//
// O and LSE, the forward's outputs that the backward reads, are computed on
// the CPU in fp64 (O rounded to the dtype, LSE to f32) and uploaded: the
// backward is checked on its own, and rows can be marked fully masked (O =
// 0, LSE = −inf, as flash_fwd writes them for a row that sees no key).
//
// Rules (docs/testing.md, "Backward"):
//  - rel-L2 of dQ, dK, dV ≤ 1e-4 (f32, IEEE dots) or ≤ 2e-2 (f16, bf16).
//    16-bit: the inputs are rounded to the dtype (the reference sees the
//    same rounded values), but P and dS are rounded to the dtype before
//    their products (as FlashAttention-2 does): a relative error of 2^-9
//    (f16: 2^-12) per element. dS = P ∘ (dP − delta) is a difference, so
//    its rounding error is relative to |P|·|dP|, not to |dS|; measured
//    rel-L2 is a few 1e-3 for bf16, and 2e-2 leaves room for the
//    cancellation without hiding a wrong mask or a missing block (errors of
//    order 1).
//  - delta within 1e-4·(1 + |delta|) of rowsum(dO ∘ O).
//  - Outputs are poisoned with NaN (0xFF bytes) first: every element
//    written, finite; rows past seqlen (guard rows after each tensor) stay
//    untouched.
//  - Fully masked rows (LSE = −inf): their dQ rows are exactly 0 and they
//    add nothing to dK and dV (the reference drops them).
//  - f32 logits up to ~1e3 (q scaled): every gradient finite; dV (no
//    cancellation) within 5e-3; dQ and dK there are sums of near-zero dS
//    (rows are one-hot to f32 precision), their error is printed only.
//  - Deterministic: a second run is bitwise equal (dQ has its own kernel,
//    no atomics); a "100 runs" case (S = 1000) compares
//    100 launches with the first.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TestDevice.h"
#include "TestOptions.h"

#include "tile/ConfigTable.h"
#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {

constexpr int kGuardRows = 3;

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// body(i) for i in [0, n), spread over the hardware threads.
template <typename Body> void parallelFor(long n, Body body) {
  std::atomic<long> next{0};
  auto worker = [&] {
    for (long i; (i = next.fetch_add(1)) < n;)
      body(i);
  };
  unsigned t = std::max(1u, std::thread::hardware_concurrency());
  t = unsigned(std::min<long>(t, n));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < t; ++i)
    threads.emplace_back(worker);
  worker();
  for (std::thread &th : threads)
    th.join();
}

//===----------------------------------------------------------------------===//
// fp64 reference
//===----------------------------------------------------------------------===//

struct Grads {
  std::vector<double> o, lse, delta, dq, dk, dv;
};

/// Forward and backward of softmax(QKᵀ·scale)V in fp64. Rows with
/// masked[bh·S + i] see no key: O = 0, LSE = −inf, no gradient. GQA:
/// query head bh reads K/V head bh / group (k, v, dk, dv hold bh / group
/// heads; dK and dV sum over each group).
Grads referenceBackward(const Problem &p, int group,
                        const std::vector<float> &q,
                        const std::vector<float> &k,
                        const std::vector<float> &v,
                        const std::vector<float> &dout,
                        const std::vector<char> &masked) {
  const std::size_t S = std::size_t(p.s), D = std::size_t(p.d);
  const std::size_t n = std::size_t(p.bh) * S * D;
  Grads g;
  g.o.assign(n, 0.0);
  g.dq.assign(n, 0.0);
  g.dk.assign(n / std::size_t(group), 0.0);
  g.dv.assign(n / std::size_t(group), 0.0);
  g.lse.assign(std::size_t(p.bh) * S, -INFINITY);
  g.delta.assign(std::size_t(p.bh) * S, 0.0);
  // P and dS of one head at a time, [S, S] (zero where invisible).
  std::vector<double> P(S * S), dS(S * S);
  for (int bh = 0; bh < p.bh; ++bh) {
    const std::size_t base = std::size_t(bh) * S * D;
    const std::size_t kbase = std::size_t(bh / group) * S * D;
    parallelFor(long(S), [&](long li) {
      const std::size_t i = std::size_t(li), r = std::size_t(bh) * S + i;
      double *pi = &P[i * S], *dsi = &dS[i * S];
      std::fill(pi, pi + S, 0.0);
      std::fill(dsi, dsi + S, 0.0);
      if (masked[r])
        return;
      const std::size_t hi = p.causal ? i + 1 : S;
      const float *qi = &q[base + i * D], *doi = &dout[base + i * D];
      double m = -INFINITY;
      for (std::size_t j = 0; j < hi; ++j) {
        double s = 0;
        for (std::size_t c = 0; c < D; ++c)
          s += double(qi[c]) * double(k[kbase + j * D + c]);
        pi[j] = s * double(p.smScale);
        m = std::max(m, pi[j]);
      }
      double l = 0;
      for (std::size_t j = 0; j < hi; ++j)
        l += std::exp(pi[j] - m);
      double lse = m + std::log(l), delta = 0;
      double *oi = &g.o[base + i * D];
      for (std::size_t j = 0; j < hi; ++j) {
        pi[j] = std::exp(pi[j] - lse);
        double dp = 0;
        for (std::size_t c = 0; c < D; ++c) {
          oi[c] += pi[j] * double(v[kbase + j * D + c]);
          dp += double(doi[c]) * double(v[kbase + j * D + c]);
        }
        dsi[j] = dp; // dP for now
        delta += pi[j] * dp;
      }
      double *dqi = &g.dq[base + i * D];
      for (std::size_t j = 0; j < hi; ++j) {
        dsi[j] = pi[j] * (dsi[j] - delta);
        for (std::size_t c = 0; c < D; ++c)
          dqi[c] += dsi[j] * double(k[kbase + j * D + c]) * double(p.smScale);
      }
      g.lse[r] = lse;
      g.delta[r] = delta;
    });
    parallelFor(long(S), [&](long lj) {
      const std::size_t j = std::size_t(lj);
      double *dkj = &g.dk[kbase + j * D], *dvj = &g.dv[kbase + j * D];
      for (std::size_t i = 0; i < S; ++i) {
        double pij = P[i * S + j], dsij = dS[i * S + j];
        if (pij == 0 && dsij == 0)
          continue;
        for (std::size_t c = 0; c < D; ++c) {
          dvj[c] += pij * double(dout[base + i * D + c]);
          dkj[c] += dsij * double(q[base + i * D + c]) * double(p.smScale);
        }
      }
    });
  }
  return g;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct Config {
  DType dtype;
  bool causal;
  int d;
  int group = 1; ///< query heads per K/V head (GQA; the kernels' G)
  /// dQ added by f32 atomics in the dK/dV pass (ATOMIC_DQ), then cast by
  /// flash_bwd_dq_cast.tile, instead of flash_bwd_dq.tile.
  bool atomic = false;
  std::string name() const {
    return std::string(dtypeName(dtype)) + (causal ? "_causal" : "_full") +
           "_d" + std::to_string(d) +
           (group > 1 ? "_gqa" + std::to_string(group) : "") +
           (atomic ? "_atomic" : "");
  }
  double tolerance() const { return dtype == DType::F32 ? 1e-4 : 2e-2; }
};

struct Kernels {
  Kernel pre, dkdv, dq;
  int preBM = 0, dkdvBN = 0, dqBM = 0; ///< from the manifests (grids)
};

std::string attentionDir() {
  if (const char *env = std::getenv("TILEC_SOURCE_DIR"); env && *env)
    return std::string(env) + "/examples/attention";
  return TILEC_ATTENTION_DIR;
}

bool constant(const Manifest &m, const char *name, int &out,
              std::string &error) {
  auto it = m.constants.find(name);
  out = it == m.constants.end() ? 0 : std::atoi(it->second.c_str());
  if (out <= 0)
    error = m.kernelName + ": the manifest has no positive " + name;
  return out > 0;
}

bool loadKernels(JIT &jit, const Device &dev, const Config &c, Kernels &ks,
                 const std::string &extraSchedule, std::string &error) {
  Defines common = {{"T", dtypeName(c.dtype)}, {"D", std::to_string(c.d)}};
  Defines withCausal = common;
  withCausal["CAUSAL"] = c.causal ? "true" : "false";
  withCausal["G"] = std::to_string(c.group);
  if (c.atomic)
    withCausal["ATOMIC_DQ"] = "true";
  struct {
    const char *file;
    const Defines *defines;
    Kernel *kernel;
    const char *block;
    int *blockOut;
  } specs[] = {{"flash_bwd_preprocess.tile", &common, &ks.pre, "BM", &ks.preBM},
               {"flash_bwd_dkdv.tile", &withCausal, &ks.dkdv, "BN", &ks.dkdvBN},
               {c.atomic ? "flash_bwd_dq_cast.tile" : "flash_bwd_dq.tile",
                c.atomic ? &common : &withCausal, &ks.dq, "BM", &ks.dqBM}};
  for (auto &s : specs) {
    // The configuration tile::AttentionBackward uses: the kernel's config
    // table for this arch where there is one (its entry at S = 1000).
    std::string stem = std::string(s.file).substr(0, std::strlen(s.file) - 5);
    KernelConfig config;
    if (!ConfigTable::lookupIfPresent(attentionDir() + "/configs/" + stem +
                                          "." + dev.archString() + ".json",
                                      *s.defines, 1000, config, error))
      return false;
    if (s.kernel != &ks.pre && !extraSchedule.empty()) {
      std::string why = config.schedule.parse(extraSchedule);
      if (why.empty())
        why = config.schedule.validate();
      if (!why.empty()) {
        error = "--schedule " + extraSchedule + ": " + why;
        return false;
      }
    }
    Defines defines = config.defines;
    for (const auto &[k, v] : *s.defines)
      defines[k] = v;
    Expected<Kernel> k = jit.loadFile(dev, attentionDir() + "/" + s.file,
                                      defines, "", config.schedule);
    if (!k) {
      error = std::string(s.file) + ": " + k.error();
      return false;
    }
    *s.kernel = k.take();
    if (!constant(s.kernel->manifest(), s.block, *s.blockOut, error))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// One case
//===----------------------------------------------------------------------===//

struct Case {
  int bh, s;
  float qScale = 1.0f; ///< > 1: the large-logit case
  int maskEvery = 0;   ///< > 0: rows i % maskEvery == 1 are fully masked
  std::string label;
  int runs = 2; ///< launches compared bitwise with the first
};

struct Buffers {
  DeviceBuffer q, k, v, o, dout, lse, delta, dq, dk, dv;
  DeviceBuffer dqAcc; ///< atomic: [BH, S, D] f32, zero between runs
};

Status upload(const Device &dev, DeviceBuffer &buf, const void *data,
              std::size_t bytes, std::size_t guardBytes) {
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(dev, bytes + guardBytes);
  if (!b)
    return b.status();
  buf = b.take();
  if (Status s = buf.fill(0); !s.ok())
    return s;
  return bytes ? buf.copyFromHost(data, bytes) : Status();
}

/// One run: poison the outputs, launch the three kernels, read the outputs
/// back whole (guards included): delta, dq, dk, dv (atomic: and dq_acc,
/// which the cast must leave zero).
Status runOnce(const Device &dev, const Kernels &ks, const Config &c,
               const Problem &p, Buffers &b,
               std::array<std::vector<std::uint8_t>, 5> &out) {
  DeviceBuffer *outs[5] = {&b.delta, &b.dq, &b.dk, &b.dv, &b.dqAcc};
  for (int i = 0; i < 4; ++i)
    if (Status s = outs[i]->fill(0xFF); !s.ok())
      return s;
  const char *t = dtypeName(c.dtype);
  unsigned bh = unsigned(p.bh);
  auto blocks = [&](int block) { return unsigned((p.s + block - 1) / block); };
  Status s = ks.pre.launch(
      {blocks(ks.preBM), bh, 1},
      {KernelArg::pointer(b.o, t), KernelArg::pointer(b.dout, t),
       KernelArg::pointer(b.delta, "f32"), KernelArg::int32(p.s)});
  if (s.ok())
    s = ks.dkdv.launch(
        {blocks(ks.dkdvBN), bh / unsigned(c.group), 1}, // one per K/V head
        {KernelArg::pointer(b.q, t), KernelArg::pointer(b.k, t),
         KernelArg::pointer(b.v, t), KernelArg::pointer(b.dout, t),
         KernelArg::pointer(b.lse, "f32"), KernelArg::pointer(b.delta, "f32"),
         KernelArg::pointer(b.dk, t), KernelArg::pointer(b.dv, t),
         KernelArg::int32(p.s), KernelArg::float32(p.smScale),
         KernelArg::pointer(b.dqAcc, "f32")});
  if (s.ok() && c.atomic)
    s = ks.dq.launch({blocks(ks.dqBM), bh, 1},
                     {KernelArg::pointer(b.dqAcc, "f32"),
                      KernelArg::pointer(b.dq, t), KernelArg::int32(p.s)});
  else if (s.ok())
    s = ks.dq.launch({blocks(ks.dqBM), bh, 1},
                     {KernelArg::pointer(b.q, t), KernelArg::pointer(b.k, t),
                      KernelArg::pointer(b.v, t), KernelArg::pointer(b.dout, t),
                      KernelArg::pointer(b.lse, "f32"),
                      KernelArg::pointer(b.delta, "f32"),
                      KernelArg::pointer(b.dq, t), KernelArg::int32(p.s),
                      KernelArg::float32(p.smScale)});
  if (!s.ok())
    return s;
  if (Status e = dev.synchronize(); !e.ok())
    return e.withContext("after the backward launches");
  for (int i = 0; i < 5; ++i) {
    out[i].resize(outs[i]->size());
    if (Status e = outs[i]->copyToHost(out[i].data(), out[i].size()); !e.ok())
      return e;
  }
  return Status();
}

bool allFF(const std::vector<std::uint8_t> &b, std::size_t from) {
  return std::all_of(b.begin() + std::ptrdiff_t(from), b.end(),
                     [](std::uint8_t x) { return x == 0xFF; });
}

struct Totals {
  int cases = 0, failed = 0;
  bool fatal = false;
};

void runCase(const Device &dev, const Kernels &ks, const Config &c,
             const Case &cs, std::mt19937_64 &rng, Totals &totals) {
  Problem p;
  p.bh = cs.bh;
  p.s = cs.s;
  p.d = c.d;
  p.causal = c.causal;
  p.smScale = float(1.0 / std::sqrt(double(c.d)));
  const std::size_t n = std::size_t(p.bh) * p.s * p.d;
  const std::size_t nkv = n / std::size_t(c.group); // k, v, dk, dv
  const std::size_t rows = std::size_t(p.bh) * p.s;
  std::vector<float> q = randomNormal(rng, n, cs.qScale),
                     k = randomNormal(rng, nkv), v = randomNormal(rng, nkv),
                     dout = randomNormal(rng, n);
  for (std::vector<float> *x : {&q, &k, &v, &dout})
    roundTo(c.dtype, *x);
  std::vector<char> masked(rows, 0);
  if (cs.maskEvery > 0)
    for (std::size_t r = 0; r < rows; ++r)
      masked[r] = (r % std::size_t(p.s)) % std::size_t(cs.maskEvery) == 1;
  Grads ref = referenceBackward(p, c.group, q, k, v, dout, masked);

  // The forward's outputs as flash_fwd writes them: O in the dtype, LSE in
  // f32 (−inf for masked rows).
  std::vector<float> o(ref.o.begin(), ref.o.end());
  roundTo(c.dtype, o);
  std::vector<float> lse(ref.lse.begin(), ref.lse.end());
  // delta as the kernel should compute it: from the rounded O.
  std::vector<double> deltaRef(rows, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (int cc = 0; cc < p.d; ++cc)
      deltaRef[r] += double(dout[r * p.d + cc]) * double(o[r * p.d + cc]);

  char head[160];
  std::snprintf(head, sizeof(head), "%-5s %-6s %4d %5d %2d %-12s",
                dtypeName(c.dtype), c.causal ? "causal" : "full", p.d, p.s,
                p.bh,
                (cs.label + (c.group > 1 ? " G=" + std::to_string(c.group)
                                         : std::string()))
                    .c_str());
  auto report = [&](bool pass, const std::string &line,
                    const std::string &why) {
    ++totals.cases;
    if (!pass)
      ++totals.failed;
    std::printf("%s %s %s%s\n", head, line.c_str(), pass ? "PASS" : "FAIL",
                why.empty() ? "" : ("  (" + why + ")").c_str());
    std::fflush(stdout);
  };

  const std::size_t eb = dtypeBytes(c.dtype);
  const std::size_t guard = std::size_t(kGuardRows) * p.d * eb;
  Buffers b;
  Status s;
  auto up = [&](DeviceBuffer &buf, const std::vector<float> &x, DType t,
                std::size_t guardBytes) {
    if (!s.ok())
      return;
    std::vector<std::uint8_t> bytes = encode(t, x);
    s = upload(dev, buf, bytes.data(), bytes.size(), guardBytes);
  };
  up(b.q, q, c.dtype, guard);
  up(b.k, k, c.dtype, guard);
  up(b.v, v, c.dtype, guard);
  up(b.o, o, c.dtype, guard);
  up(b.dout, dout, c.dtype, guard);
  up(b.lse, lse, DType::F32, kGuardRows * 4);
  up(b.delta, std::vector<float>(rows), DType::F32, kGuardRows * 4);
  up(b.dq, std::vector<float>(n), c.dtype, guard);
  for (DeviceBuffer *g : {&b.dk, &b.dv})
    up(*g, std::vector<float>(nkv), c.dtype, guard);
  if (c.atomic)
    up(b.dqAcc, std::vector<float>(n), DType::F32, 0);
  if (!s.ok())
    return report(false, "", s.message());

  std::array<std::vector<std::uint8_t>, 5> first, again;
  int differing = 0;
  for (int r = 0; r < cs.runs; ++r) {
    if (Status e = runOnce(dev, ks, c, p, b, r ? again : first); !e.ok()) {
      totals.fatal = true; // a fault leaves the context unusable
      return report(false, "", "run " + std::to_string(r) + ": " + e.message());
    }
    // Atomic dQ: its additions come in any order, dQ may differ in the
    // last bits (dK, dV and delta may not).
    differing += r > 0 && (c.atomic ? !std::equal(again.begin() + 2,
                                                  again.begin() + 4,
                                                  first.begin() + 2) ||
                                          again[0] != first[0]
                                    : again != first);
  }

  bool pass = true;
  std::string why;
  auto fail = [&](const std::string &w) {
    pass = false;
    why += (why.empty() ? "" : "; ") + w;
  };
  if (differing)
    fail(std::to_string(differing) + " of " + std::to_string(cs.runs - 1) +
         " reruns differ bitwise from the first run");
  if (c.atomic && !std::all_of(first[4].begin(), first[4].end(),
                               [](std::uint8_t x) { return x == 0; }))
    fail("dq_acc not zero after the cast");
  const char *names[4] = {"delta", "dQ", "dK", "dV"};
  const std::vector<double> *refs[4] = {&deltaRef, &ref.dq, &ref.dk, &ref.dv};
  std::string line;
  for (int i = 0; i < 4; ++i) {
    DType t = i == 0 ? DType::F32 : c.dtype;
    std::size_t count = i == 0 ? rows : i == 1 ? n : nkv;
    if (!allFF(first[i], count * dtypeBytes(t)))
      fail(std::string(names[i]) + " written past the last row");
    std::vector<float> got = decode(t, first[i].data(), count);
    ErrorStats e =
        i == 0 ? compareScaled(got, *refs[i]) : compare(got, *refs[i]);
    if (e.nonFinite)
      fail(std::to_string(e.nonFinite) + " " + names[i] +
           " values not written or NaN/inf, first at index " +
           std::to_string(e.firstNonFinite));
    double err = i == 0 ? e.maxAbs : e.relL2;
    line += std::string(names[i]) + " " + fmt(err) + "  ";
    double tol = i == 0 ? 1e-4 : c.tolerance();
    if (cs.qScale != 1.0f && i > 0) // large logits: see the file comment
      tol = i == 3 ? 5e-3 : INFINITY;
    if (err > tol)
      fail(std::string(names[i]) + (i == 0 ? " error " : " rel-L2 ") +
           fmt(err) + " > " + fmt(tol));
    if (i == 1 && cs.maskEvery > 0) {
      std::size_t nonzero = 0;
      for (std::size_t r = 0; r < rows; ++r)
        if (masked[r])
          for (int cc = 0; cc < p.d; ++cc)
            nonzero += got[r * p.d + cc] != 0.0f;
      if (nonzero)
        fail(std::to_string(nonzero) + " dQ values of fully masked rows are "
                                       "not 0");
    }
  }
  report(pass, line, why);
}


} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  if (!parseTestOptions(argc, argv, opt, false, "bf16_causal_d128",
                        /*withSchedule=*/true))
    return 2;
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-bwd: %s, seed %llu (--seed %llu reruns it), "
              "kernels from %s%s%s\n",
              dev->description().c_str(), opt.seed, opt.seed,
              attentionDir().c_str(), opt.schedule.empty() ? "" : ", schedule + ",
              opt.schedule.c_str());
  std::printf("dtype mode   D     S BH case         errors: delta max "
              "|err|/(1+|ref|), dQ dK dV rel-L2\n");
  std::mt19937_64 rng(opt.seed);
  JIT jit;
  Totals totals;

  // Seqlens that are no multiple of a block; BH 1 to 8.
  std::vector<Case> cases;
  for (auto [bh, s] :
       opt.quick ? std::vector<std::pair<int, int>>{{1, 1}, {2, 17}, {1, 130}}
                 : std::vector<std::pair<int, int>>{
                       {1, 1}, {2, 17}, {8, 100}, {3, 257}, {1, 1000}})
    cases.push_back({bh, s, 1.0f, 0, ""});
  cases.push_back({2, 100, 1.0f, 5, "masked rows"});
  if (!opt.quick)
    cases.push_back({4, 1000, 1.0f, 0, "100 runs", 100});
  std::vector<Case> atomicCases(cases.begin(), cases.end() - !opt.quick);

  // One configuration: its kernels, then each case until a launch fault.
  auto runConfig = [&](const Config &c, const std::vector<Case> &these) {
    if (totals.fatal ||
        (!opt.only.empty() && c.name().find(opt.only) == std::string::npos))
      return;
    Kernels ks;
    std::string error;
    if (!loadKernels(jit, *dev, c, ks, opt.schedule, error)) {
      ++totals.cases;
      ++totals.failed;
      std::printf("%s: compile/load FAIL (%s)\n", c.name().c_str(),
                  error.c_str());
      return;
    }
    for (const Case &cs : these) {
      runCase(*dev, ks, c, cs, rng, totals);
      if (totals.fatal)
        return;
    }
  };
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    for (bool causal : {false, true})
      for (int d : {64, 96, 128, 256}) {
        std::vector<Case> these = cases;
        if (t == DType::F32) // logits of about 1e3: q scaled by 300
          these.push_back({2, 257, 300.0f, 0, "logits ~1e3"});
        runConfig({t, causal, d}, these);
      }
  // dQ by atomics: every dtype and mask at D = 64 and 128, 96 in bf16
  // (tile::AttentionBackward runs no atomics at 256); three runs each: dK,
  // dV bitwise equal, dq_acc zero after each.
  for (Case &cs : atomicCases)
    cs.runs = 3;
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    for (bool causal : {false, true})
      for (int d : {64, 96, 128})
        if (d == 64 || d == 128 || t == DType::BF16) {
          std::vector<Case> these = atomicCases;
          if (t == DType::F32)
            these.push_back({2, 257, 300.0f, 0, "logits ~1e3"});
          runConfig({t, causal, d, 1, true}, these);
        }

  // GQA (K/V heads shared by `group` query heads; BH a multiple of it):
  // the seqlens of the parity rule in docs/testing.md, 4097 included.
  std::vector<Case> gqaCases;
  for (int s : opt.quick ? std::vector<int>{1, 17, 130}
                         : std::vector<int>{1, 17, 239, 1000, 4097})
    gqaCases.push_back({8, s, 1.0f, 0, ""});
  gqaCases.push_back({8, 100, 1.0f, 5, "masked rows"});
  if (!opt.quick)
    gqaCases.push_back({8, 1000, 1.0f, 0, "100 runs", 100});
  for (const Config &c : {Config{DType::BF16, false, 128, 8},
                          Config{DType::BF16, true, 128, 8},
                          Config{DType::F16, true, 64, 4},
                          Config{DType::F32, false, 64, 2},
                          Config{DType::BF16, true, 128, 8, true},
                          Config{DType::F16, false, 64, 4, true}})
    runConfig(c, c.atomic ? std::vector<Case>(gqaCases.begin(),
                                              gqaCases.end() - !opt.quick)
                          : gqaCases);

  std::printf("tile-gpu-bwd: %d cases, %d failed%s (seed %llu)\n", totals.cases,
              totals.failed,
              totals.fatal ? ", stopped after a launch fault" : "", opt.seed);
  return totals.failed ? 1 : 0;
}
