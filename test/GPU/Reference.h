//===- Reference.h - CPU attention references, dtypes --------- -*- C++ -*-===//
//
// For the GPU parity suite: an fp64 reference (multithreaded), a naive fp32
// one (FlashAttention's "same precision" baseline), host encode/decode of
// f32 / f16 / bf16 tensors, and the error metrics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tilegpu {

enum class DType { F32, F16, BF16 };

const char *dtypeName(DType t);  ///< "f32", "f16", "bf16"
std::size_t dtypeBytes(DType t); ///< 4 or 2
/// Rounds every value to `t` in place (what the GPU will see).
void roundTo(DType t, std::vector<float> &values);
/// Host bytes of `values` stored as `t`.
std::vector<std::uint8_t> encode(DType t, const std::vector<float> &values);
/// Values of `count` elements of type `t` at `bytes`.
std::vector<float> decode(DType t, const std::uint8_t *bytes,
                          std::size_t count);

/// One attention problem: q, o [bh, s, d] and k, v [bh, sk, d] contiguous
/// (sk = 0: sk = s), lse [bh, s]. Causal is aligned bottom-right, as
/// FlashAttention's: row i sees keys j <= i + sk - s; a row that sees none
/// has O = 0 and LSE = -inf.
struct Problem {
  int bh = 1, s = 1, d = 64;
  bool causal = false;
  float smScale = 0.125f;
  int sk = 0;
  int keys() const { return sk ? sk : s; }
};

/// Row-wise softmax(scale·QKᵀ)V in fp64 and LSE (natural log), over all
/// hardware threads. `maxAbsLogit` receives max |scale·q·k| over unmasked
/// pairs.
void referenceAttention(const Problem &p, const std::vector<float> &q,
                        const std::vector<float> &k,
                        const std::vector<float> &v, std::vector<double> &o,
                        std::vector<double> &lse,
                        double *maxAbsLogit = nullptr);

/// The same computed naively in fp32 (a "same precision" baseline).
void naiveAttentionF32(const Problem &p, const std::vector<float> &q,
                       const std::vector<float> &k, const std::vector<float> &v,
                       std::vector<float> &o);

/// N(0, 1) values, never exactly zero.
std::vector<float> randomNormal(std::mt19937_64 &rng, std::size_t n,
                                float scale = 1.0f);

struct ErrorStats {
  double relL2 = 0;               ///< ‖out − ref‖₂ / ‖ref‖₂
  double maxAbs = 0;              ///< max |out − ref|
  std::size_t nonFinite = 0;      ///< NaN / inf in `out`
  std::size_t firstNonFinite = 0; ///< index of the first one
};
ErrorStats compare(const std::vector<float> &out,
                   const std::vector<double> &ref);

/// max over i of |out − ref| / (1 + |ref|) (the LSE criterion), with the
/// non-finite count.
ErrorStats compareScaled(const std::vector<float> &out,
                         const std::vector<double> &ref);

} // namespace tilegpu
