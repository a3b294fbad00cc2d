//===- VariantsReference.h - fp64 reference of the forward variants -*- C++ -*-===//
//
// The semantics documented in examples/attention/flex_fwd.tile and
// flex_fwd_sparse.tile (docs/variants.md), computed in fp64 on the CPU for
// tile-gpu-variants. For batch b, query head h, query i:
//
//   s_ij  = score_mod(q_i . k_j * sm_scale, b, h, i, j)
//   V(i)  = { j < Sk : the window / causal bounds hold, mask_mod(b, h, i, j) }
//           (block-sparse: the keys of the listed blocks, mask_mod only on the
//           partial ones)
//   O_i   = sum_{j in V(i)} exp(s_ij) v_j / (sum exp(s_ij) + [sinks] exp(sink_h))
//   LSE_i = log(sum_{j in V(i)} exp(s_ij) + [sinks] exp(sink_h))
//
// Bounds: diag = Sk - Sq with bottom-right alignment, else 0; key j is
// visible when i + diag - windowLeft <= j (windowLeft >= 0) and
// j <= i + diag + right, right = 0 when causal, else windowRight (>= 0).
// A row with nothing visible: O = 0 and LSE = -inf; with sinks, O = 0 and
// LSE = sink_h. KV head of query head h: h / (H / Hkv).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <vector>

namespace tilegpu {

/// FlexAttention's BlockMask as flex_fwd_sparse reads it: arrays
/// [maskBatch, maskHeads, qBlocks] (counts) and [..., maxBlocks] (indices).
struct BlockMask {
  int bm = 128, bn = 128;
  int maskBatch = 1, maskHeads = 1, qBlocks = 0, maxBlocks = 0;
  std::vector<int> kvNum, kvIdx, fullNum, fullIdx;
  /// The row r of query block `mb` of (b, h).
  long row(int b, int h, int mb) const {
    long bm_ = maskBatch == 1 ? 0 : b, hm = maskHeads == 1 ? 0 : h;
    return (bm_ * maskHeads + hm) * qBlocks + mb;
  }
};

using ScoreMod = std::function<double(double s, int b, int h, int i, int j)>;
using MaskMod = std::function<bool(int b, int h, int i, int j)>;

/// One problem. Tensors are logical and contiguous here: q and o
/// [B, H, Sq, D], k and v [B, Hkv, Sk, D], lse [B, H, Sq] (the test moves
/// them to the kernel's strided layout).
struct VariantProblem {
  int batch = 1, heads = 1, headsKv = 1, sq = 1, sk = 1, d = 64;
  float smScale = 0.125f;
  bool causal = false, bottomRight = false;
  int windowLeft = -1, windowRight = -1;
  ScoreMod scoreMod;             ///< empty: identity
  MaskMod maskMod;               ///< empty: every key visible
  std::vector<float> sinks;      ///< one per query head; empty: no sinks
  const BlockMask *blockMask = nullptr; ///< set: the block-sparse kernel
};

/// What the reference found, for the result line and the checks.
struct ReferenceInfo {
  double maxAbsLogit = 0;  ///< max |s_ij| over visible pairs (after the mod)
  long emptyRows = 0;      ///< rows (of all b, h) with nothing visible
  long visiblePairs = 0;   ///< sum of |V(i)|
};

/// Whether key j is visible to query i of (b, h) in the dense kernel
/// (bounds, then mask_mod).
bool denseVisible(const VariantProblem &p, int b, int h, int i, int j);

/// O [B, H, Sq, D] and LSE [B, H, Sq] in fp64, over all hardware threads.
ReferenceInfo referenceVariant(const VariantProblem &p,
                               const std::vector<float> &q,
                               const std::vector<float> &k,
                               const std::vector<float> &v,
                               std::vector<double> &o,
                               std::vector<double> &lse);

} // namespace tilegpu
