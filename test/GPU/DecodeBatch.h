//===- DecodeBatch.h - a decode batch, its cache layouts and fp64 reference ===//
//
// One batch of decode.tile: B sequences of ragged lengths, QLEN new query
// tokens each, H = HKV * G query heads; the fp64 reference; and the KV cache
// laid out as decode.tile reads it (paged NHD/HND with a block table, or
// contiguous NHD/HND), with NaN everywhere the kernel must not read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Reference.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tilegpu {

/// A decode.tile configuration (its -D values) and the split count run.
struct DecodeConfig {
  DType t;
  int d, g, qlen, page; ///< page 0: the contiguous cache
  bool nhd;
  int splits;
  std::string name() const;
};

struct DecodeBatch {
  int b = 0, hkv = 2, g = 1, qlen = 1, d = 0;
  std::vector<int> lens;
  std::vector<float> q;                 ///< [B, QLEN, H, D]
  std::vector<std::vector<float>> k, v; ///< per sequence [len, HKV, D]
  std::vector<double> oRef, lseRef;     ///< [B, QLEN, H, D], [B, QLEN, H]
  int heads() const { return hkv * g; }
  std::size_t rows() const { return std::size_t(b) * qlen * heads(); }
};

/// Lengths 0, 1, 17, 2 pages, 3 pages + 5, 1000, 4099 and random odd ones
/// (65 537 unless quick), shuffled.
std::vector<int> decodeLengths(std::mt19937_64 &rng, int page, bool quick);

/// Random q, k, v rounded to `c.t`, and the fp64 reference: query token t
/// of a sequence of length len sits at position len - QLEN + t and sees
/// keys 0 .. len - QLEN + t (none: O = 0, LSE = -inf).
DecodeBatch makeDecodeBatch(std::mt19937_64 &rng, const DecodeConfig &c,
                            const std::vector<int> &lens);

/// The cache as decode.tile reads it with config `c`. Paged: pages of
/// c.page tokens handed out in shuffled order from a pool with spare pages
/// of NaN; the block table [B, maxBlocks] names, past each sequence's
/// pages, ids far outside the pool (a read of one faults). Contiguous:
/// [B, maxBlocks, HKV, D] (NHD) or [B, HKV, maxBlocks, D] (HND), maxBlocks
/// the longest length plus 3, NaN past each length. Rows of a last page
/// past the length are NaN too.
struct DecodeCache {
  std::vector<std::uint8_t> k, v;
  std::vector<std::int32_t> table; ///< one entry when contiguous
  int maxBlocks = 0;
};
DecodeCache layOutCache(const DecodeBatch &bt, const DecodeConfig &c,
                        std::mt19937_64 &rng);

/// Parity of decode outputs (O [B, QLEN, H, D] of c.t and LSE f32, each
/// followed by a guard of 0xFF bytes) against the reference: "" when they
/// pass (rel-L2 <= 1e-2 / 1e-5 f32, LSE within 1e-3 / 1e-5 * (1 + |lse|),
/// rows that see no key O = 0 and LSE = -inf, guard untouched), else why
/// not. `worst` gets the largest rel-L2.
std::string checkDecodeOutput(const DecodeConfig &c, const DecodeBatch &bt,
                              const std::vector<std::uint8_t> &o,
                              const std::vector<std::uint8_t> &lse,
                              double &worst);

} // namespace tilegpu
