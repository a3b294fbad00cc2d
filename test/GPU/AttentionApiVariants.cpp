//===- AttentionApiVariants.cpp - tile::Attention's variants on a GPU -----===//
//
// For tile-gpu-attention-api: the variant fields of AttentionParams (GQA,
// MQA, cross-attention aligned bottom-right, sliding windows, softcap,
// ALiBi, sinks) through the library call, fast plan (flex_fwd) and reference
// (flex_fwd_ref) alike, against the fp64 reference of tile-gpu-variants
// (VariantsReference.h); and a plan the variant checks refuse.
//
//===----------------------------------------------------------------------===//

#include "AttentionApiVariants.h"
#include "VariantsReference.h"

#include "tile/Attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace tile;

namespace {

struct VCase {
  const char *what;
  DType dtype;
  AttentionLayout layout;
  int batch, heads, headsKv, sq, sk, d;
  bool causal, bottomRight;
  int windowLeft, windowRight;
  float softcap;
  bool alibi, sinks, forceReference;
  const char *expectKernel; ///< nullptr: any
};

std::size_t elemBytes(DType t) { return t == DType::F32 ? 4 : 2; }

/// Element offset of logical (b, h, s) of a tensor with `heads` heads of
/// `seqlen` rows in `layout`.
std::size_t offset(AttentionLayout layout, int heads, int seqlen, int d, int b,
                   int h, int s) {
  std::size_t row = layout == AttentionLayout::BHSD
                        ? (std::size_t(b) * heads + h) * seqlen + s
                        : (std::size_t(b) * seqlen + s) * heads + h;
  return row * std::size_t(d);
}

/// Random logical [B, heads, S, D] values rounded to `t`, and their device
/// bytes in `layout`.
std::vector<std::uint8_t> makeTensor(std::mt19937 &rng, DType t,
                                     AttentionLayout layout, int batch,
                                     int heads, int seqlen, int d,
                                     std::vector<float> &logical) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::size_t eb = elemBytes(t);
  logical.resize(std::size_t(batch) * heads * seqlen * d);
  std::vector<std::uint8_t> out(logical.size() * eb);
  std::size_t i = 0;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int s = 0; s < seqlen; ++s)
        for (int e = 0; e < d; ++e, ++i) {
          float x = normal(rng);
          std::size_t at = offset(layout, heads, seqlen, d, b, h, s) + e;
          if (eb == 4) {
            std::memcpy(&out[at * 4], &x, 4);
          } else {
            std::uint16_t u = t == DType::F16 ? floatToHalf(x) : floatToBFloat16(x);
            x = t == DType::F16 ? halfToFloat(u) : bfloat16ToFloat(u);
            std::memcpy(&out[at * 2], &u, 2);
          }
          logical[i] = x;
        }
  return out;
}

float readElem(DType t, const std::uint8_t *p) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t u;
  std::memcpy(&u, p, 2);
  return t == DType::F16 ? halfToFloat(u) : bfloat16ToFloat(u);
}

Expected<DeviceBuffer> upload(const Device &dev, const void *data, std::size_t n) {
  auto b = DeviceBuffer::allocate(dev, std::max<std::size_t>(n, 16));
  if (b && n)
    if (Status s = b->copyFromHost(data, n); !s.ok())
      return s;
  return b;
}

bool runVariant(const Device &dev, const VCase &c) {
  std::printf("%s%s\n", c.what, c.forceReference ? " (forced reference)" : "");
  auto fail = [&](const std::string &why) {
    std::printf("FAIL: %s: %s\n", c.what, why.c_str());
    return false;
  };
  std::mt19937 rng(777u + unsigned(c.sq) * 31u + unsigned(c.sk));
  std::vector<float> q, k, v;
  auto qb = makeTensor(rng, c.dtype, c.layout, c.batch, c.heads, c.sq, c.d, q);
  auto kb = makeTensor(rng, c.dtype, c.layout, c.batch, c.headsKv, c.sk, c.d, k);
  auto vb = makeTensor(rng, c.dtype, c.layout, c.batch, c.headsKv, c.sk, c.d, v);
  std::vector<float> slopes(std::size_t(c.heads)), sinks(std::size_t(c.heads));
  for (int h = 0; h < c.heads; ++h) {
    slopes[std::size_t(h)] = std::exp2(-8.f * float(h + 1) / float(c.heads));
    sinks[std::size_t(h)] = float(h % 3) - 1.f; // -1, 0, 1
  }
  std::size_t oBytes = qb.size(), lseCount = std::size_t(c.batch) * c.heads * c.sq;
  auto dq = upload(dev, qb.data(), qb.size());
  auto dk = upload(dev, kb.data(), kb.size());
  auto dv = upload(dev, vb.data(), vb.size());
  auto dslopes = upload(dev, slopes.data(), slopes.size() * 4);
  auto dsinks = upload(dev, sinks.data(), sinks.size() * 4);
  auto dout = DeviceBuffer::allocate(dev, oBytes);
  auto dlse = DeviceBuffer::allocate(dev, lseCount * 4);
  if (!dq || !dk || !dv || !dslopes || !dsinks || !dout || !dlse ||
      !dout->fill(0xFF).ok() || !dlse->fill(0xFF).ok())
    return fail("cannot set up the buffers");

  AttentionParams p;
  p.batch = c.batch;
  p.heads = c.heads;
  p.headsKv = c.headsKv;
  p.seqlen = c.sq;
  p.seqlenK = c.sk;
  p.headDim = c.d;
  p.dtype = c.dtype;
  p.layout = c.layout;
  p.causal = c.causal;
  p.bottomRight = c.bottomRight;
  p.windowLeft = c.windowLeft;
  p.windowRight = c.windowRight;
  p.softcap = c.softcap;
  p.alibiSlopes = c.alibi ? dslopes->ptr() : 0;
  p.sinks = c.sinks ? dsinks->ptr() : 0;
  p.q = dq->ptr();
  p.k = dk->ptr();
  p.v = dv->ptr();
  p.o = dout->ptr();
  p.lse = dlse->ptr();
  AttentionOptions o;
  o.policy = FallbackPolicy::Fallback;
  o.forceReference = c.forceReference;
  o.log = [](const std::string &l) { std::printf("  %s\n", l.c_str()); };
  auto attn = Attention::create(dev, p, o);
  if (!attn)
    return fail(attn.error());
  if (c.expectKernel && attn->kernelName() != c.expectKernel)
    return fail("ran " + attn->kernelName() + ", expected " + c.expectKernel);
  if (Status s = attn->run(); !s.ok())
    return fail(s.message());
  if (Status s = dev.synchronize(); !s.ok())
    return fail(s.message());
  std::vector<std::uint8_t> ob(oBytes);
  std::vector<float> lse(lseCount);
  if (!dout->copyToHost(ob.data(), ob.size()).ok() || !dlse->download(lse).ok())
    return fail("cannot read the outputs");

  tilegpu::VariantProblem vp;
  vp.batch = c.batch;
  vp.heads = c.heads;
  vp.headsKv = c.headsKv;
  vp.sq = c.sq;
  vp.sk = c.sk;
  vp.d = c.d;
  vp.smScale = float(1.0 / std::sqrt(double(c.d)));
  vp.causal = c.causal;
  vp.bottomRight = c.bottomRight;
  vp.windowLeft = c.windowLeft;
  vp.windowRight = c.windowRight;
  float cap = c.softcap;
  bool alibi = c.alibi;
  if (cap != 0 || alibi)
    vp.scoreMod = [cap, alibi, &slopes](double s, int, int h, int i, int j) {
      if (cap != 0)
        s = cap * std::tanh(s / cap);
      return alibi ? s + slopes[std::size_t(h)] * double(j - i) : s;
    };
  if (c.sinks)
    vp.sinks = sinks;
  std::vector<double> oRef, lseRef;
  tilegpu::ReferenceInfo info = tilegpu::referenceVariant(vp, q, k, v, oRef, lseRef);

  double num = 0, den = 0, lseErr = 0;
  std::size_t bad = 0;
  std::size_t eb = elemBytes(c.dtype), i = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.heads; ++h)
      for (int s = 0; s < c.sq; ++s)
        for (int e = 0; e < c.d; ++e, ++i) {
          float x = readElem(c.dtype, &ob[(offset(c.layout, c.heads, c.sq, c.d, b, h, s) + e) * eb]);
          if (!std::isfinite(x)) {
            ++bad;
            continue;
          }
          num += (x - oRef[i]) * (x - oRef[i]);
          den += oRef[i] * oRef[i];
        }
  for (std::size_t r = 0; r < lse.size(); ++r) {
    if (std::isinf(lseRef[r]) && lse[r] == float(lseRef[r]))
      continue; // nothing visible: -inf both
    if (!std::isfinite(lse[r]))
      ++bad;
    else
      lseErr = std::max(lseErr, std::fabs(lse[r] - lseRef[r]) / (1 + std::fabs(lseRef[r])));
  }
  double rel = std::sqrt(num / std::max(den, 1e-30));
  double tol = c.dtype == DType::F32 ? 2e-5 : 1e-2;
  double lseTol = c.dtype == DType::F32 ? 2e-5 : 1e-3;
  std::printf("  %s: rel-L2 %.3e (limit %.0e), LSE err %.3e (limit %.0e), "
              "%zu non-finite, %ld empty rows\n",
              attn->kernelName().c_str(), rel, tol, lseErr, lseTol, bad,
              info.emptyRows);
  if (bad || rel > tol || lseErr > lseTol)
    return fail("does not match the fp64 reference");
  return true;
}

/// heads_kv that does not divide heads: refused by the plan with its reason.
bool refusedCase(const Device &dev) {
  std::printf("GQA 6:4 refused\n");
  AttentionParams p;
  p.batch = 1;
  p.heads = 6;
  p.headsKv = 4;
  p.seqlen = 64;
  p.headDim = 64;
  auto attn = Attention::create(dev, p);
  if (attn || attn.error().find("heads_kv 4 must divide heads 6") == std::string::npos) {
    std::printf("FAIL: GQA 6:4: %s\n", attn ? "planned" : attn.error().c_str());
    return false;
  }
  std::printf("  %s\n", attn.error().c_str());
  return true;
}

} // namespace

int runAttentionVariantCases(const Device &dev) {
  const auto BHSD = AttentionLayout::BHSD, BSHD = AttentionLayout::BSHD;
  const VCase cases[] = {
      {"GQA 8:2 causal window 63, bshd bf16 D=128", DType::BF16, BSHD, 2, 8, 2,
       300, 300, 128, true, false, 63, -1, 0, false, false, false, "flex_fwd"},
      {"GQA 8:2 causal window 63, bshd bf16 D=128", DType::BF16, BSHD, 2, 8, 2,
       300, 300, 128, true, false, 63, -1, 0, false, false, true, "flex_fwd_ref"},
      {"MQA cross-attention Sq=100 Sk=333 causal bottom-right, f16 D=64",
       DType::F16, BHSD, 2, 4, 1, 100, 333, 64, true, true, -1, -1, 0, false,
       false, false, nullptr},
      {"Sq=120 > Sk=50 causal bottom-right: 70 rows see nothing, bshd bf16",
       DType::BF16, BSHD, 1, 2, 2, 120, 50, 64, true, true, -1, -1, 0, false,
       false, false, nullptr},
      {"softcap 30 + ALiBi + sinks, bhsd bf16 D=64", DType::BF16, BHSD, 2, 4, 4,
       257, 257, 64, false, false, -1, -1, 30.f, true, true, false, "flex_fwd"},
      {"softcap 30 + ALiBi + sinks, bhsd bf16 D=64", DType::BF16, BHSD, 2, 4, 4,
       257, 257, 64, false, false, -1, -1, 30.f, true, true, true, "flex_fwd_ref"},
      {"window (32, 16), bshd f32 D=64", DType::F32, BSHD, 1, 2, 2, 150, 150, 64,
       false, false, 32, 16, 0, false, false, false, nullptr},
      {"GQA 4:2 D=80 (no table entry: reference), bf16", DType::BF16, BHSD, 1, 4,
       2, 99, 99, 80, false, false, -1, -1, 0, false, true, false, "flex_fwd_ref"},
  };
  int failures = 0;
  for (const VCase &c : cases)
    failures += !runVariant(dev, c);
  failures += !refusedCase(dev);
  return failures;
}
