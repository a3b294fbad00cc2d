//===- Reference.cpp - CPU attention references and dtype helpers ---------===//

#include "Reference.h"

#include "tile/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

namespace tilegpu {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

std::size_t dtypeBytes(DType t) { return t == DType::F32 ? 4 : 2; }

void roundTo(DType t, std::vector<float> &values) {
  for (float &x : values) {
    if (t == DType::F16)
      x = tile::halfToFloat(tile::floatToHalf(x));
    else if (t == DType::BF16)
      x = tile::bfloat16ToFloat(tile::floatToBFloat16(x));
  }
}

std::vector<std::uint8_t> encode(DType t, const std::vector<float> &values) {
  std::vector<std::uint8_t> out(values.size() * dtypeBytes(t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (t == DType::F32) {
      std::memcpy(&out[i * 4], &values[i], 4);
      continue;
    }
    std::uint16_t h = t == DType::F16 ? tile::floatToHalf(values[i])
                                      : tile::floatToBFloat16(values[i]);
    std::memcpy(&out[i * 2], &h, 2);
  }
  return out;
}

std::vector<float> decode(DType t, const std::uint8_t *bytes,
                          std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (t == DType::F32) {
      std::memcpy(&out[i], bytes + i * 4, 4);
      continue;
    }
    std::uint16_t h;
    std::memcpy(&h, bytes + i * 2, 2);
    out[i] = t == DType::F16 ? tile::halfToFloat(h) : tile::bfloat16ToFloat(h);
  }
  return out;
}

namespace {

/// Runs body(bh, row) for every row of every head, spread over threads.
template <typename Body> void forEachRow(const Problem &p, Body body) {
  const long rows = long(p.bh) * p.s;
  if (rows == 0)
    return;
  const long chunk = 16;
  std::atomic<long> next{0};
  auto worker = [&] {
    for (long start; (start = next.fetch_add(chunk)) < rows;)
      for (long r = start; r < std::min(rows, start + chunk); ++r)
        body(int(r / p.s), int(r % p.s));
  };
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  n = unsigned(std::min<long>(n, (rows + chunk - 1) / chunk));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
}

} // namespace

void referenceAttention(const Problem &p, const std::vector<float> &q,
                        const std::vector<float> &k,
                        const std::vector<float> &v, std::vector<double> &o,
                        std::vector<double> &lse, double *maxAbsLogit) {
  const std::size_t D = std::size_t(p.d), S = std::size_t(p.s);
  const long SK = p.keys();
  o.assign(std::size_t(p.bh) * S * D, 0.0);
  lse.assign(std::size_t(p.bh) * S, 0.0);
  std::vector<double> rowMax(std::size_t(p.bh) * S, 0.0);
  forEachRow(p, [&](int bh, int i) {
    const std::size_t base = std::size_t(bh) * S * D;
    const std::size_t kbase = std::size_t(bh) * std::size_t(SK) * D;
    const float *qi = &q[base + std::size_t(i) * D];
    const std::size_t hi = std::size_t(
        p.causal ? std::clamp(long(i) + 1 + SK - long(S), 0L, SK) : SK);
    if (hi == 0) { // nothing visible: O stays 0
      lse[std::size_t(bh) * S + std::size_t(i)] = -INFINITY;
      return;
    }
    std::vector<double> s(hi);
    double m = -INFINITY, amax = 0;
    for (std::size_t j = 0; j < hi; ++j) {
      const float *kj = &k[kbase + j * D];
      double dot = 0;
      for (std::size_t c = 0; c < D; ++c)
        dot += double(qi[c]) * double(kj[c]);
      s[j] = dot * double(p.smScale);
      m = std::max(m, s[j]);
      amax = std::max(amax, std::fabs(s[j]));
    }
    double l = 0;
    double *oi = &o[base + std::size_t(i) * D];
    for (std::size_t j = 0; j < hi; ++j) {
      double w = std::exp(s[j] - m);
      l += w;
      const float *vj = &v[kbase + j * D];
      for (std::size_t c = 0; c < D; ++c)
        oi[c] += w * double(vj[c]);
    }
    for (std::size_t c = 0; c < D; ++c)
      oi[c] /= l;
    lse[std::size_t(bh) * S + std::size_t(i)] = m + std::log(l);
    rowMax[std::size_t(bh) * S + std::size_t(i)] = amax;
  });
  if (maxAbsLogit)
    *maxAbsLogit =
        rowMax.empty() ? 0.0 : *std::max_element(rowMax.begin(), rowMax.end());
}

void naiveAttentionF32(const Problem &p, const std::vector<float> &q,
                       const std::vector<float> &k, const std::vector<float> &v,
                       std::vector<float> &o) {
  const std::size_t D = std::size_t(p.d), S = std::size_t(p.s);
  o.assign(std::size_t(p.bh) * S * D, 0.f);
  forEachRow(p, [&](int bh, int i) {
    const std::size_t base = std::size_t(bh) * S * D;
    const float *qi = &q[base + std::size_t(i) * D];
    const std::size_t hi = p.causal ? std::size_t(i) + 1 : S;
    std::vector<float> s(hi);
    float m = -INFINITY;
    for (std::size_t j = 0; j < hi; ++j) {
      float dot = 0;
      for (std::size_t c = 0; c < D; ++c)
        dot += qi[c] * k[base + j * D + c];
      s[j] = dot * p.smScale;
      m = std::max(m, s[j]);
    }
    float l = 0;
    for (std::size_t j = 0; j < hi; ++j)
      l += (s[j] = std::exp(s[j] - m));
    float *oi = &o[base + std::size_t(i) * D];
    for (std::size_t j = 0; j < hi; ++j)
      for (std::size_t c = 0; c < D; ++c)
        oi[c] += s[j] / l * v[base + j * D + c];
  });
}

std::vector<float> randomNormal(std::mt19937_64 &rng, std::size_t n,
                                float scale) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> out(n);
  for (float &x : out) {
    do
      x = dist(rng) * scale;
    while (x == 0.f);
  }
  return out;
}

ErrorStats compare(const std::vector<float> &out,
                   const std::vector<double> &ref) {
  ErrorStats e;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) {
      if (e.nonFinite++ == 0)
        e.firstNonFinite = i;
      continue;
    }
    double d = double(out[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    e.maxAbs = std::max(e.maxAbs, std::fabs(d));
  }
  e.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return e;
}

ErrorStats compareScaled(const std::vector<float> &out,
                         const std::vector<double> &ref) {
  ErrorStats e;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) {
      if (e.nonFinite++ == 0)
        e.firstNonFinite = i;
      continue;
    }
    e.maxAbs = std::max(e.maxAbs, std::fabs(double(out[i]) - ref[i]) /
                                      (1.0 + std::fabs(ref[i])));
  }
  return e;
}

} // namespace tilegpu
