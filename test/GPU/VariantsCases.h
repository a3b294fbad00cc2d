//===- VariantsCases.h - the cases of tile-gpu-variants ------- -*- C++ -*-===//
//
// One case: a user-style .tile file (imports, the user's own hooks, one
// kernel instance of flex_fwd or flex_fwd_sparse), the shapes and data it
// runs on, and the same semantics for the fp64 reference
// (VariantsReference.h). The instance's parameters are written from the
// case's fields, so the kernel and the reference cannot disagree on them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Reference.h"
#include "VariantsReference.h"

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tilegpu {

struct VariantCase {
  std::string name;
  bool quick = true; ///< also runs under --quick
  DType dtype = DType::BF16;
  int d = 64;
  int batch = 1, heads = 1, headsKv = 1, sq = 1, sk = 1;
  bool bshd = false; ///< [B, S, H, D], else [B, H, S, D]
  /// Rows after each sequence of q, k, v and o that the kernel must neither
  /// read into the result nor write: NaN in q, k, v, 0xFF in o.
  int pad = 3;
  float qScale = 1.0f; ///< q's spread (> 1: larger logits)
  bool largeLogits = false; ///< the tolerance allows f32 exponent rounding
  float smScale = 0; ///< the softmax scale; 0: 1/sqrt(d)
  float scale() const {
    return smScale ? smScale : float(1.0 / std::sqrt(double(d)));
  }

  bool sparse = false; ///< flex_fwd_sparse.tile (needs blockSize)
  int blockSize = 0;   ///< BM = BN = this in every schedule (0: the schedule's)

  // The user's file: its own helpers and the hooks it names.
  std::string helpers;   ///< "fn ...;" lines, may be empty
  std::string scoreModName, maskModName; ///< empty: the kernel's identity
  std::string keyHiName; ///< flex_fwd's KEY_HI hook; empty: every key
  std::string keyLoName; ///< flex_fwd's KEY_LO hook; empty: every key
  // Parameters of the instance and the reference (VariantProblem).
  bool causal = false, bottomRight = false;
  int windowLeft = -1, windowRight = -1;
  ScoreMod scoreMod;
  MaskMod maskMod;
  std::vector<float> sinks; ///< one per query head; non-empty: SINKS = true
  std::vector<float> auxF;
  std::vector<int> auxI;
  int auxN = 0;
  /// Sparse: the block mask for its block sizes.
  std::function<BlockMask(int bm, int bn)> makeMask;

  /// The user's file: imports, helpers, `kernel <kernelName()> = ...;`.
  std::string source() const;
  std::string kernelName() const { return "variant"; }
  /// The reference's view of the case (blockMask left null).
  VariantProblem problem() const;
};

/// Every case (quick or not), with data drawn from `rng`.
std::vector<VariantCase> makeVariantCases(std::mt19937_64 &rng);

} // namespace tilegpu
