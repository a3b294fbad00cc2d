//===- LinearAttnReference.h - fp64 recurrent linear attention -*- C++ -*-===//
//
// The token-by-token definition the chunked kernels are checked against
// (examples/attention/linear_attn.tile, docs/linear_attention.md):
//   S_t = γ S_{t-1} + φ(k_t)ᵀ v_t,  z_t = γ z_{t-1} + φ(k_t)
//   o_t = s·φ(q_t) S_t  [/ s·φ(q_t) z_t]
// or, non-causal, S and z summed over the whole sequence first. In fp64 from
// the (already rounded) inputs; no chunks, so it shares no algebra with the
// kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace tilegpu {

struct LinearSpec {
  int d = 64;
  bool elu = true;       ///< φ = elu + 1, else identity
  bool normalize = true; ///< divide by φ(q)·z
  bool noncausal = false;
  double scale = 1.0;
};

inline double linearFeature(bool elu, double x) {
  return !elu ? x : x > 0 ? x + 1.0 : std::exp(x);
}

/// One head: q, k, v [len, d]; `gamma` its decay (1: none); `state` [d, d]
/// and `z` [d] hold the initial state and receive the final one; o [len, d].
inline void referenceLinearHead(const LinearSpec &sp, int len, const float *q,
                                const float *k, const float *v, double gamma,
                                std::vector<double> &state,
                                std::vector<double> &z, double *o) {
  const int d = sp.d;
  std::vector<double> fk(d), fq(d);
  auto absorb = [&](int t, double g) {
    for (int i = 0; i < d; ++i)
      fk[i] = linearFeature(sp.elu, k[std::size_t(t) * d + i]);
    for (int i = 0; i < d; ++i) {
      z[i] = g * z[i] + fk[i];
      double *row = &state[std::size_t(i) * d];
      for (int j = 0; j < d; ++j)
        row[j] = g * row[j] + fk[i] * double(v[std::size_t(t) * d + j]);
    }
  };
  auto emit = [&](int t) {
    double den = 0;
    for (int i = 0; i < d; ++i) {
      fq[i] = sp.scale * linearFeature(sp.elu, q[std::size_t(t) * d + i]);
      den += fq[i] * z[i];
    }
    double *out = o + std::size_t(t) * d;
    for (int j = 0; j < d; ++j)
      out[j] = 0;
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        out[j] += fq[i] * state[std::size_t(i) * d + j];
    if (sp.normalize)
      for (int j = 0; j < d; ++j)
        out[j] /= den;
  };
  if (sp.noncausal) {
    for (int t = 0; t < len; ++t)
      absorb(t, 1.0);
    for (int t = 0; t < len; ++t)
      emit(t);
    return;
  }
  for (int t = 0; t < len; ++t) {
    absorb(t, gamma);
    emit(t);
  }
}

} // namespace tilegpu
