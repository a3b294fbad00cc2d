//===- AttentionBackwardApiTest.cpp - the training path on a GPU ----------===//
//
//   tile-gpu-attention-bwd-api
//
// tile::Attention then tile::AttentionBackward (include/tile/
// AttentionBackward.h) end to end, as a training step runs them: the
// forward writes O and LSE, the backward reads them with dO and writes dQ,
// dK, dV. Checked against an fp64 CPU forward and backward of
// softmax(QKᵀ·scale)V on the same (dtype-rounded) inputs, for bf16, f16,
// f32, causal or not, head dims 64, 96, 128 and 256, odd seqlens, GQA and MQA (the
// forward on flex_fwd, dK and dV summed over each group's query heads):
//  - rel-L2 of dQ, dK, dV ≤ 1e-4 (f32) or ≤ 2e-2 (f16, bf16): the bounds of
//    tile-gpu-bwd (BackwardTest.cpp says why); here O is the GPU forward's,
//    rounded to the dtype, which the bound covers (O enters only delta).
//  - the outputs are poisoned with NaN first: every element written, finite.
//  - B*H = 70000 (grids over 65535 along y: split launches) as any other.
//  - a second run() gives bitwise-equal gradients (no atomics); with
//    deterministic = false (dQ by atomics) dK and dV still do, and the
//    second run's dQ passes the same bound (the accumulator was re-zeroed).
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TestDevice.h"

#include "tile/AttentionBackward.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace tile;

namespace {

struct Case {
  DType dtype;
  bool causal;
  int batch, heads, seqlen, headDim;
  int headsKv = 0; ///< GQA/MQA (the forward runs flex_fwd); 0: heads
  bool atomic = false; ///< AttentionBackwardParams::deterministic = false
  int kvHeads() const { return headsKv ? headsKv : heads; }
};

tilegpu::DType hostType(DType t) {
  return t == DType::F32   ? tilegpu::DType::F32
         : t == DType::F16 ? tilegpu::DType::F16
                           : tilegpu::DType::BF16;
}

struct Grads {
  std::vector<double> dq, dk, dv;
};

/// fp64 forward and backward: q, dout [B*H, S, D], k, v [B*H_kv, S, D]
/// (query head h reads KV head h / (H / H_kv)).
Grads reference(const Case &c, const std::vector<float> &q,
                const std::vector<float> &k, const std::vector<float> &v,
                const std::vector<float> &dout) {
  const int S = c.seqlen, D = c.headDim, BH = c.batch * c.heads;
  const int group = c.heads / c.kvHeads();
  const double scale = 1.0 / std::sqrt(double(D));
  Grads g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  std::vector<double> p(S), dp(S);
  for (int bh = 0; bh < BH; ++bh) {
    std::size_t base = std::size_t(bh) * S * D;
    int kvh = bh / c.heads * c.kvHeads() + bh % c.heads / group;
    std::size_t kbase = std::size_t(kvh) * S * D;
    for (int i = 0; i < S; ++i) {
      int hi = c.causal ? i + 1 : S;
      const float *qi = &q[base + std::size_t(i) * D];
      const float *doi = &dout[base + std::size_t(i) * D];
      double m = -INFINITY, l = 0, delta = 0;
      for (int j = 0; j < hi; ++j) {
        double s = 0;
        for (int d = 0; d < D; ++d)
          s += double(qi[d]) * k[kbase + std::size_t(j) * D + d];
        p[j] = s * scale;
        m = std::max(m, p[j]);
      }
      for (int j = 0; j < hi; ++j)
        l += (p[j] = std::exp(p[j] - m));
      for (int j = 0; j < hi; ++j) {
        p[j] /= l;
        double x = 0;
        for (int d = 0; d < D; ++d)
          x += double(doi[d]) * v[kbase + std::size_t(j) * D + d];
        dp[j] = x;
        delta += p[j] * x;
      }
      for (int j = 0; j < hi; ++j) {
        double ds = p[j] * (dp[j] - delta);
        for (int d = 0; d < D; ++d) {
          std::size_t jd = kbase + std::size_t(j) * D + d;
          g.dq[base + std::size_t(i) * D + d] += ds * k[jd] * scale;
          g.dk[jd] += ds * qi[d] * scale;
          g.dv[jd] += p[j] * doi[d];
        }
      }
    }
  }
  return g;
}

bool upload(const Device &dev, tilegpu::DType t, const std::vector<float> &x,
            DeviceBuffer &out) {
  std::vector<std::uint8_t> bytes = tilegpu::encode(t, x);
  auto b = DeviceBuffer::allocate(dev, bytes.size());
  if (!b || !b->copyFromHost(bytes.data(), bytes.size()).ok())
    return false;
  out = b.take();
  return true;
}

bool runCase(const Device &dev, const Case &c, std::mt19937_64 &rng) {
  char label[128];
  std::snprintf(label, sizeof label, "%s %s B=%d H=%d/%d S=%d D=%d%s",
                dtypeName(c.dtype), c.causal ? "causal" : "full", c.batch,
                c.heads, c.kvHeads(), c.seqlen, c.headDim,
                c.atomic ? " atomic" : "");
  auto fail = [&](const std::string &why) {
    std::printf("FAIL: %s: %s\n", label, why.c_str());
    return false;
  };
  tilegpu::DType ht = hostType(c.dtype);
  std::size_t n = std::size_t(c.batch) * c.heads * c.seqlen * c.headDim;
  std::size_t nkv = std::size_t(c.batch) * c.kvHeads() * c.seqlen * c.headDim;
  std::size_t sizes[4] = {n, nkv, nkv, n}; // q, k, v, dout
  std::vector<float> host[4];
  DeviceBuffer in[4], o, lse, grads[3];
  for (int i = 0; i < 4; ++i) {
    host[i] = tilegpu::randomNormal(rng, sizes[i]);
    tilegpu::roundTo(ht, host[i]);
    if (!upload(dev, ht, host[i], in[i]))
      return fail("cannot upload the inputs");
  }
  auto ob = DeviceBuffer::allocate(dev, n * tilegpu::dtypeBytes(ht));
  auto lb = DeviceBuffer::allocate(
      dev, std::size_t(c.batch) * c.heads * c.seqlen * 4);
  if (!ob || !lb)
    return fail("cannot allocate O and LSE");
  o = ob.take();
  lse = lb.take();
  for (int i = 0; i < 3; ++i) { // dq, dk, dv
    DeviceBuffer &g = grads[i];
    auto b = DeviceBuffer::allocate(dev, (i ? nkv : n) * tilegpu::dtypeBytes(ht));
    if (!b)
      return fail(b.error());
    g = b.take();
  }

  AttentionParams fp;
  fp.batch = c.batch;
  fp.heads = c.heads;
  fp.seqlen = c.seqlen;
  fp.headDim = c.headDim;
  fp.dtype = c.dtype;
  fp.causal = c.causal;
  fp.headsKv = c.headsKv;
  fp.q = in[0].ptr();
  fp.k = in[1].ptr();
  fp.v = in[2].ptr();
  fp.o = o.ptr();
  fp.lse = lse.ptr();
  AttentionOptions opts;
  opts.log = [](const std::string &l) { std::printf("  %s\n", l.c_str()); };
  auto fwd = Attention::create(dev, fp, opts);
  if (!fwd)
    return fail(fwd.error());
  if (Status s = fwd->run(); !s.ok())
    return fail(s.message());

  AttentionBackwardParams bp;
  bp.batch = c.batch;
  bp.heads = c.heads;
  bp.seqlen = c.seqlen;
  bp.headDim = c.headDim;
  bp.dtype = c.dtype;
  bp.causal = c.causal;
  bp.headsKv = c.headsKv;
  bp.deterministic = !c.atomic;
  bp.q = in[0].ptr();
  bp.k = in[1].ptr();
  bp.v = in[2].ptr();
  bp.dout = in[3].ptr();
  bp.o = o.ptr();
  bp.lse = lse.ptr();
  bp.dq = grads[0].ptr();
  bp.dk = grads[1].ptr();
  bp.dv = grads[2].ptr();
  auto bwd = AttentionBackward::create(dev, bp, opts);
  if (!bwd)
    return fail(bwd.error());

  std::vector<std::uint8_t> out[2][3];
  for (int r = 0; r < 2; ++r) {
    for (DeviceBuffer &g : grads)
      if (!g.fill(0xFF).ok())
        return fail("cannot poison the gradients");
    if (Status s = bwd->run(); !s.ok())
      return fail(s.message());
    if (Status s = dev.synchronize(); !s.ok())
      return fail(s.message());
    for (int i = 0; i < 3; ++i) {
      out[r][i].resize(grads[i].size());
      if (!grads[i].copyToHost(out[r][i].data(), out[r][i].size()).ok())
        return fail("cannot read the gradients");
    }
  }
  Grads ref = reference(c, host[0], host[1], host[2], host[3]);
  const std::vector<double> *refs[3] = {&ref.dq, &ref.dk, &ref.dv};
  const char *names[3] = {"dQ", "dK", "dV"};
  double tol = c.dtype == DType::F32 ? 1e-4 : 2e-2;
  bool ok = true;
  std::string line;
  for (int j = 0; j < (c.atomic ? 4 : 3); ++j) {
    int i = j % 3, r = j / 3; // atomic: the second run's dQ too
    std::vector<float> got = tilegpu::decode(ht, out[r][i].data(), i ? nkv : n);
    tilegpu::ErrorStats e = tilegpu::compare(got, *refs[i]);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %.2e  ", names[i], e.relL2);
    line += buf;
    if (e.nonFinite) {
      ok = false;
      fail(std::to_string(e.nonFinite) + " " + names[i] +
           " values unwritten or not finite");
    }
    if (e.relL2 > tol) {
      ok = false;
      fail(std::string(names[i]) + " rel-L2 above " + std::to_string(tol));
    }
    if (out[0][i] != out[1][i] && !(c.atomic && i == 0)) {
      ok = false;
      fail(std::string(names[i]) + " differs bitwise between two runs");
    }
  }
  std::printf("%-41s %s%s\n", label, line.c_str(), ok ? "PASS" : "FAIL");
  return ok;
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  const unsigned long long seed = 20261127;
  std::printf("tile-gpu-attention-bwd-api: %s, seed %llu\n",
              dev->description().c_str(), seed);
  std::mt19937_64 rng(seed);
  const Case cases[] = {
      {DType::BF16, true, 2, 3, 203, 128}, {DType::BF16, false, 1, 2, 1, 64},
      {DType::F16, false, 1, 4, 129, 64},  {DType::F16, true, 2, 2, 70, 128},
      {DType::F32, true, 1, 2, 77, 64},    {DType::F32, false, 2, 1, 100, 128},
      // GQA 4:1 and MQA: dK, dV summed over each group's query heads.
      {DType::BF16, true, 2, 8, 150, 128, 2}, {DType::F32, false, 1, 4, 77, 64, 1},
      {DType::F16, true, 1, 6, 65, 64, 3},
      // Head dims 96 (padded to 128 in registers) and 256 (two-stage rings).
      {DType::BF16, false, 1, 3, 131, 96}, {DType::F16, true, 2, 2, 90, 256},
      // dQ by f32 atomics in the dK/dV pass.
      {DType::BF16, true, 2, 3, 203, 128, 0, true},
      {DType::F32, false, 1, 2, 77, 64, 0, true},
      {DType::F16, true, 2, 8, 150, 64, 2, true},
      // B*H = 70000: every grid y over 65535 runs as two launches.
      {DType::BF16, true, 2, 35000, 17, 64},
  };
  int failures = 0;
  for (const Case &c : cases)
    failures += !runCase(*dev, c, rng);
  std::printf("%s (%d failure%s)\n", failures ? "FAIL" : "PASS", failures,
              failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
