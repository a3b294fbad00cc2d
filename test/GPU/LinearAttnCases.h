//===- LinearAttnCases.h - the cases of tile-gpu-linear-attn -*- C++ -*-===//
//
// The configurations, inputs and fp64 references of LinearAttnTest.cpp:
// [B*H, S, D] tensors of kBatch x kHeads heads, head h decaying by
// kGammas[h % kHeads].
//
//===----------------------------------------------------------------------===//
#pragma once

#include "LinearAttnReference.h"
#include "Reference.h"

#include "tile/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace tilegpu {

constexpr int kHeads = 2, kBatch = 2, kBH = kHeads * kBatch;
constexpr std::size_t kGuard = 64; // poisoned elements after every output
const double kGammas[kHeads] = {0.95, 0.999};

struct LinConfig {
  DType t;
  int d, c;
  bool elu, norm, decay, noncausal;
  int bv() const { return d == 64 ? 64 : 32; }
  double scale() const { return 1.0 / std::sqrt(double(d)); }
  std::string name() const {
    return std::string(dtypeName(t)) + "_d" + std::to_string(d) + "_c" +
           std::to_string(c) + (elu ? "_elu" : "_id") +
           (norm ? "_norm" : "") + (decay ? "_decay" : "") +
           (noncausal ? "_noncausal" : "");
  }
  std::string decodeName() const {
    return std::string(dtypeName(t)) + "_d" + std::to_string(d) +
           (elu ? "_elu" : "_id") + (norm ? "_norm" : "") +
           (decay ? "_decay" : "");
  }
  LinearSpec spec() const { return {d, elu, norm, noncausal, scale()}; }
};

inline std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// A buffer of `bytes` (+ guard) holding `data`, the rest 0xFF (NaN).
inline tile::Expected<tile::DeviceBuffer> upload(const tile::Device &dev, const void *data,
                              std::size_t bytes, std::size_t guard = 0) {
  tile::Expected<tile::DeviceBuffer> b =
      tile::DeviceBuffer::allocate(dev, std::max<std::size_t>(bytes + guard, 16));
  if (!b)
    return b;
  if (tile::Status s = b->fill(0xFF); !s.ok())
    return s;
  if (bytes && data)
    if (tile::Status s = b->copyFromHost(data, bytes); !s.ok())
      return s;
  return b;
}

inline bool untouched(const std::vector<std::uint8_t> &b, std::size_t from) {
  return std::all_of(b.begin() + std::ptrdiff_t(from), b.end(),
                     [](std::uint8_t x) { return x == 0xFF; });
}

/// Inputs of one run, [BH, len, D] each, rounded to the config's type.
struct Inputs {
  int len = 0;
  std::vector<float> q, k, v;
};

inline Inputs makeInputs(std::mt19937_64 &rng, const LinConfig &c, int len) {
  Inputs in;
  in.len = len;
  std::size_t n = std::size_t(kBH) * len * c.d;
  in.q = randomNormal(rng, n);
  in.k = randomNormal(rng, n);
  in.v = randomNormal(rng, n);
  if (!c.elu && c.norm) // φ(q)·z must stay away from 0: φ ≥ 0
    for (std::vector<float> *x : {&in.q, &in.k})
      for (float &e : *x)
        e = std::fabs(e);
  for (std::vector<float> *x : {&in.q, &in.k, &in.v})
    roundTo(c.t, *x);
  return in;
}

/// Rows [from, from + len) of every head.
inline Inputs slice(const Inputs &in, int d, int from, int len) {
  Inputs out;
  out.len = len;
  for (int h = 0; h < kBH; ++h) {
    std::size_t a = (std::size_t(h) * in.len + from) * d, e = a + std::size_t(len) * d;
    out.q.insert(out.q.end(), in.q.begin() + a, in.q.begin() + e);
    out.k.insert(out.k.end(), in.k.begin() + a, in.k.begin() + e);
    out.v.insert(out.v.end(), in.v.begin() + a, in.v.begin() + e);
  }
  return out;
}

/// The fp64 reference over every head: o [BH, len, D], state [BH, D, D],
/// z [BH, D], from `state`/`z` as given (zeros or a prefix's).
inline void reference(const LinConfig &c, const Inputs &in, std::vector<double> &o,
               std::vector<double> &state, std::vector<double> &z) {
  const int d = c.d;
  o.assign(std::size_t(kBH) * in.len * d, 0.0);
  state.resize(std::size_t(kBH) * d * d, 0.0);
  z.resize(std::size_t(kBH) * d, 0.0);
  for (int h = 0; h < kBH; ++h) {
    std::vector<double> s(state.begin() + std::ptrdiff_t(h) * d * d,
                          state.begin() + std::ptrdiff_t(h + 1) * d * d);
    std::vector<double> zz(z.begin() + std::ptrdiff_t(h) * d,
                           z.begin() + std::ptrdiff_t(h + 1) * d);
    std::size_t off = std::size_t(h) * in.len * d;
    referenceLinearHead(c.spec(), in.len, &in.q[off], &in.k[off], &in.v[off],
                        c.decay ? kGammas[h % kHeads] : 1.0, s, zz, &o[off]);
    std::copy(s.begin(), s.end(), state.begin() + std::ptrdiff_t(h) * d * d);
    std::copy(zz.begin(), zz.end(), z.begin() + std::ptrdiff_t(h) * d);
  }
}

/// Checks `got` against `ref`: "" or why not.
inline std::string check(const char *what, const std::vector<float> &got,
                  const std::vector<double> &ref, double tol, double &worst) {
  ErrorStats e = compare(got, ref);
  if (e.nonFinite)
    return std::string(what) + ": " + std::to_string(e.nonFinite) +
           " elements unwritten or NaN (first " +
           std::to_string(e.firstNonFinite) + ")";
  worst = std::max(worst, e.relL2);
  if (e.relL2 > tol)
    return std::string(what) + " rel-L2 " + fmt(e.relL2) + " > " + fmt(tol);
  return "";
}

struct Totals;

/// The decode kernel token by token from a zero state over `in`: its
/// outputs against `oRef`, its final state against `sRef` (fp64) and the
/// chunked forward's `chunkState`. "" or why not; a launch failure sets
/// totals.fatal (LinearAttnDecode.cpp).
std::string checkDecode(const tile::Device &dev, const tile::Kernel &kernel,
                        const LinConfig &c, const Inputs &in,
                        const std::vector<double> &oRef,
                        const std::vector<double> &sRef,
                        const std::vector<float> &chunkState, double &worst,
                        Totals &totals);

} // namespace tilegpu
