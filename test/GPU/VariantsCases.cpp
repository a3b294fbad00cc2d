//===- VariantsCases.cpp - the cases of tile-gpu-variants -----------------===//

#include "VariantsCases.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tilegpu {

std::string VariantCase::source() const {
  std::vector<std::string> params = {std::string("T = ") + dtypeName(dtype),
                                     "D = " + std::to_string(d)};
  if (!sparse) {
    if (causal)
      params.push_back("CAUSAL = true");
    if (bottomRight)
      params.push_back("BOTTOM_RIGHT = true");
    if (windowLeft >= 0)
      params.push_back("WINDOW_LEFT = " + std::to_string(windowLeft));
    if (windowRight >= 0)
      params.push_back("WINDOW_RIGHT = " + std::to_string(windowRight));
  }
  if (!scoreModName.empty())
    params.push_back("SCORE_MOD = " + scoreModName);
  if (!maskModName.empty())
    params.push_back("MASK_MOD = " + maskModName);
  if (!keyHiName.empty())
    params.push_back("KEY_HI = " + keyHiName);
  if (!keyLoName.empty())
    params.push_back("KEY_LO = " + keyLoName);
  if (!sinks.empty())
    params.push_back("SINKS = true");
  std::string text = "// tile-gpu-variants: " + name + "\n" +
                     (sparse ? "import \"flex_fwd_sparse.tile\";\n"
                             : "import \"flex_fwd.tile\";\n") +
                     "import \"mods.tile\";\n" + helpers + "kernel " +
                     kernelName() + " = " +
                     (sparse ? "flex_fwd_sparse<" : "flex_fwd<");
  for (std::size_t i = 0; i < params.size(); ++i)
    text += (i ? ", " : "") + params[i];
  return text + ">;\n";
}

VariantProblem VariantCase::problem() const {
  VariantProblem p;
  p.batch = batch;
  p.heads = heads;
  p.headsKv = headsKv;
  p.sq = sq;
  p.sk = sk;
  p.d = d;
  p.smScale = scale();
  if (!sparse) {
    p.causal = causal;
    p.bottomRight = bottomRight;
    p.windowLeft = windowLeft;
    p.windowRight = windowRight;
  }
  p.scoreMod = scoreMod;
  p.maskMod = maskMod;
  p.sinks = sinks;
  return p;
}

namespace {

VariantCase shape(std::string name, DType t, int d, int b, int h, int hkv,
                  int sq, int sk, bool bshd) {
  VariantCase c;
  c.name = std::move(name);
  c.dtype = t;
  c.d = d;
  c.batch = b;
  c.heads = h;
  c.headsKv = hkv;
  c.sq = sq;
  c.sk = sk;
  c.bshd = bshd;
  return c;
}

/// Document ids for B sequences of S tokens: documents of random lengths,
/// many of one token; ids skip now and then (empty documents). Every
/// sequence starts with a one-token document and an empty one.
std::vector<int> documentIds(std::mt19937_64 &rng, int b, int s) {
  std::vector<int> ids;
  std::uniform_int_distribution<int> len(1, 80), coin(0, 3);
  for (int i = 0; i < b; ++i) {
    int id = coin(rng), left = s;
    for (bool first = true; left > 0; first = false) {
      int n = std::min(left, first || coin(rng) == 0 ? 1 : len(rng));
      ids.insert(ids.end(), std::size_t(n), id);
      left -= n;
      id += first || coin(rng) == 0 ? 2 : 1; // 2: an empty document between
    }
  }
  return ids;
}

/// The same documents labelled by their first position (cu_seqlens-style,
/// what mods.tile's document_start needs to skip key blocks).
std::vector<int> documentStarts(const std::vector<int> &ids, int b, int s) {
  std::vector<int> out(ids.size());
  for (int i = 0; i < b; ++i)
    for (int t = 0; t < s; ++t) {
      std::size_t at = std::size_t(i * s + t);
      out[at] = t > 0 && ids[at] == ids[at - 1] ? out[at - 1] : t;
    }
  return out;
}

/// A random BlockMask: rows with no blocks (every fifth, first included),
/// with only full, only partial or both kinds of blocks (disjoint), an index
/// past the key blocks now and then (adds nothing), and garbage after the
/// counts.
BlockMask randomMask(std::uint64_t seed, int maskBatch, int maskHeads, int sq,
                     int sk, int bm, int bn) {
  std::mt19937_64 rng(seed);
  BlockMask m;
  m.bm = bm;
  m.bn = bn;
  m.maskBatch = maskBatch;
  m.maskHeads = maskHeads;
  m.qBlocks = (sq + bm - 1) / bm;
  const int kBlocks = (sk + bn - 1) / bn;
  m.maxBlocks = kBlocks + 2;
  const long rows = long(maskBatch) * maskHeads * m.qBlocks;
  m.kvNum.assign(std::size_t(rows), 0);
  m.fullNum.assign(std::size_t(rows), 0);
  std::uniform_int_distribution<int> garbage(-100000, 100000);
  m.kvIdx.resize(std::size_t(rows * m.maxBlocks));
  m.fullIdx.resize(m.kvIdx.size());
  for (int &x : m.kvIdx)
    x = garbage(rng);
  for (int &x : m.fullIdx)
    x = garbage(rng);
  std::vector<int> order(static_cast<std::size_t>(kBlocks));
  for (long r = 0; r < rows; ++r) {
    int kind = int(r % 5); // 0: nothing, 1: full only, 2: partial only
    if (kind == 0)
      continue;
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    int n = std::uniform_int_distribution<int>(1, kBlocks)(rng);
    int nFull = kind == 1 ? n : kind == 2 ? 0
                                          : std::uniform_int_distribution<int>(
                                                0, n)(rng);
    int nPartial = n - nFull;
    int *part = &m.kvIdx[std::size_t(r * m.maxBlocks)];
    int *full = &m.fullIdx[std::size_t(r * m.maxBlocks)];
    for (int t = 0; t < nPartial; ++t)
      part[t] = order[std::size_t(t)];
    for (int t = 0; t < nFull; ++t)
      full[t] = order[std::size_t(nPartial + t)];
    if (r % 3 == 0) // an index outside [0, kBlocks): adds nothing
      part[nPartial++] = r % 2 ? kBlocks + 7 : -1;
    m.kvNum[std::size_t(r)] = nPartial;
    m.fullNum[std::size_t(r)] = nFull;
  }
  return m;
}

} // namespace

std::vector<VariantCase> makeVariantCases(std::mt19937_64 &rng) {
  const DType BF = DType::BF16, F16 = DType::F16, F32 = DType::F32;
  std::vector<VariantCase> cs;
  auto add = [&](VariantCase c, bool quick = true) {
    c.quick = quick;
    cs.push_back(std::move(c));
    return &cs.back();
  };

  // Plain attention, both layouts, odd lengths, every dtype, D 64/96/128/256.
  add(shape("plain_bhsd_bf16_d64", BF, 64, 2, 3, 3, 300, 300, false));
  add(shape("plain_bshd_f16_d128", F16, 128, 2, 4, 4, 257, 257, true));
  add(shape("plain_bhsd_f32_d64", F32, 64, 2, 2, 2, 129, 129, false));
  add(shape("plain_bshd_f32_d128", F32, 128, 1, 3, 3, 77, 77, true), false);
  add(shape("causal_bshd_bf16_d128", BF, 128, 1, 4, 4, 1000, 1000, true),
      false)->causal = true;
  add(shape("causal_bhsd_bf16_d96", BF, 96, 2, 3, 3, 200, 200, false))
      ->causal = true;
  VariantCase *c = add(shape("causal_bshd_bf16_d256_b64", BF, 256, 1, 2, 2,
                             333, 333, true));
  c->causal = true;
  c->blockSize = 64;
  add(shape("tiny_bhsd_bf16_s1", BF, 64, 2, 2, 2, 1, 1, false))->causal = true;
  // B*H = 70 000 programs per query block: grids split by the runtime.
  add(shape("plain_bhsd_bf16_b10000_h7", BF, 64, 10000, 7, 7, 20, 20, false))
      ->pad = 0;
  c = add(shape("causal_bshd_bf16_b70000_h1", BF, 64, 70000, 1, 1, 20, 20,
                true), false);
  c->causal = true;
  c->pad = 0;

  // GQA 8:1 and MQA.
  add(shape("gqa8_bshd_bf16_d128", BF, 128, 2, 16, 2, 250, 250, true))
      ->causal = true;
  add(shape("mqa_bshd_f16_d64", F16, 64, 3, 8, 1, 190, 190, true));
  add(shape("gqa4_bhsd_f32_d64", F32, 64, 1, 8, 2, 150, 150, false), false);

  // Cross-attention, top-left and bottom-right causal.
  for (bool br : {false, true})
    for (auto [sq, sk] : {std::pair{100, 300}, std::pair{300, 100}}) {
      c = add(shape(std::string("cross_") + (br ? "br" : "tl") + "_causal_" +
                        std::to_string(sq) + "x" + std::to_string(sk) +
                        "_bshd_bf16_d64",
                    BF, 64, 2, 3, 3, sq, sk, true));
      c->causal = true;
      c->bottomRight = br;
    }
  c = add(shape("cross_br_causal_1x777_bhsd_f16_d128", F16, 128, 2, 2, 2, 1,
                777, false));
  c->causal = true;
  c->bottomRight = true;
  c = add(shape("cross_br_window30_100x300_bhsd_f32_d64", F32, 64, 1, 2, 2,
                100, 300, false), false);
  c->windowLeft = 30;
  c->windowRight = 7;
  c->bottomRight = true;

  // Sliding windows: narrower than a block, wider, two-sided.
  c = add(shape("window_l5_causal_bhsd_bf16_d64", BF, 64, 2, 2, 2, 300, 300,
                false));
  c->windowLeft = 5;
  c->causal = true;
  c = add(shape("window_l100_causal_bshd_bf16_d128", BF, 128, 1, 3, 3, 517,
                517, true));
  c->windowLeft = 100;
  c->causal = true;
  c = add(shape("window_l37_r50_bhsd_f16_d64", F16, 64, 2, 2, 2, 400, 400,
                false));
  c->windowLeft = 37;
  c->windowRight = 50;

  // Score mods: ALiBi (mods.tile, slopes in aux_f), a user's softcap.
  c = add(shape("alibi_causal_bhsd_bf16_d64", BF, 64, 2, 4, 4, 300, 300,
                false));
  c->causal = true;
  c->scoreModName = "alibi";
  for (int h = 0; h < c->heads; ++h)
    c->auxF.push_back(float(std::exp2(-8.0 * (h + 1) / c->heads)));
  c->scoreMod = [slopes = c->auxF](double s, int, int h, int i, int j) {
    return s + double(slopes[std::size_t(h)]) * double(j - i);
  };
  c = add(shape("user_softcap10_causal_bshd_bf16_d128", BF, 128, 2, 3, 3, 280,
                280, true));
  c->causal = true;
  c->qScale = 2.0f; // logits up to ~8: the cap bends them
  c->helpers = "fn cap10(s, b, h, q, k, af, ai, n) {\n"
               "  return tanh_softcap(s, 10.0);\n}\n";
  c->scoreModName = "cap10";
  c->scoreMod = [](double s, int, int, int, int) {
    return 10.0 * std::tanh(s / 10.0);
  };

  // A user's mask mod: a band of 48 keys plus 4 global keys.
  c = add(shape("user_band_mask_bhsd_bf16_d64", BF, 64, 2, 2, 2, 333, 333,
                false));
  c->helpers = "fn band(b, h, q, k, af, ai, n) {\n"
               "  return (k <= q && q < k + 48) || k < 4;\n}\n";
  c->maskModName = "band";
  c->maskMod = [](int, int, int i, int j) {
    return (j <= i && i < j + 48) || j < 4;
  };

  // Sinks: +1e4 (the sink takes everything), -1e4 (nothing), 0.5, on
  // bottom-right rows that see no key (O = 0, LSE = sink) and plain rows.
  c = add(shape("sinks_br_causal_300x100_bhsd_bf16_d64", BF, 64, 2, 3, 3, 300,
                100, false));
  c->causal = true;
  c->bottomRight = true;
  c->sinks = {1e4f, -1e4f, 0.5f};
  c = add(shape("sinks_bshd_f32_d64", F32, 64, 1, 3, 3, 200, 200, true));
  c->sinks = {0.5f, -1e4f, 1e4f};

  // document_mask over `ids` ([B, Sq], labels compared for equality).
  auto documents = [](VariantCase *c, std::vector<int> ids) {
    c->maskModName = "document_mask";
    c->auxI = std::move(ids);
    c->auxN = c->sq;
    c->maskMod = [ids = c->auxI, n = c->sq](int b, int, int i, int j) {
      return ids[std::size_t(b * n + i)] == ids[std::size_t(b * n + j)];
    };
  };
  // Document masking (mods.tile): empty and one-token documents.
  for (bool causal : {true, false}) {
    c = add(shape(causal ? "document_causal_bhsd_bf16_d64"
                         : "document_bshd_f16_d128",
                  causal ? BF : F16, causal ? 64 : 128, 3, 2, 2, 300, 300,
                  !causal),
            causal);
    c->causal = causal;
    documents(c, documentIds(rng, c->batch, c->sq));
  }

  // Causal document masking with its key start (KEY_LO = document_start):
  // ids labelled by their first position (blocks before a query block's
  // document skipped), and the labels above (not positions: detected,
  // every block visited).
  for (bool starts : {true, false}) {
    c = add(shape(starts ? "document_keylo_causal_bshd_bf16_d128"
                         : "document_keylo_ids_causal_bhsd_f16_d64",
                  starts ? BF : F16, starts ? 128 : 64, 3, 2, 2, 300, 300,
                  starts));
    c->causal = true;
    c->keyLoName = "document_start";
    std::vector<int> ids = documentIds(rng, c->batch, c->sq);
    documents(c, starts ? documentStarts(ids, c->batch, c->sq) : ids);
  }

  // Prefix-LM (mods.tile): prefixes 0, inside, past the end, odd; then
  // with its key bound (KEY_HI = prefix_lm_keys: the blocks past
  // max(q_last + 1, prefix) skipped), bf16 and f16 at D = 128 on [B, S, H,
  // D], a prefix ending inside a block.
  for (bool bounded : {false, true}) {
    c = add(shape(bounded ? "prefix_lm_keyhi_bshd_f16_d128"
                          : "prefix_lm_bhsd_bf16_d64",
                  bounded ? F16 : BF, bounded ? 128 : 64, 4, 2, 2, 300, 300,
                  bounded));
    c->maskModName = "prefix_lm_mask";
    if (bounded)
      c->keyHiName = "prefix_lm_keys";
    c->auxI = bounded ? std::vector<int>{0, 77, 400, 200}
                      : std::vector<int>{0, 50, 400, 129};
    c->maskMod = [pre = c->auxI](int b, int, int i, int j) {
      return j <= i || j < pre[std::size_t(b)];
    };
  }

  // Block-sparse (flex_fwd_sparse.tile): partial blocks under a causal
  // mask_mod, full blocks, empty rows, garbage past the counts.
  std::uint64_t maskSeed = rng();
  // Variant 3, D = 128 in blocks of 128: the two loops' K and V rings
  // share two slots (four of three stages would not fit in shared memory;
  // tile-tma-loads, TmaRingSlots.cpp).
  for (int variant = 0; variant < 4; ++variant) {
    bool heads1 = variant == 1;
    c = add(shape(variant == 0   ? "sparse_bhsd_bf16_d64_b128"
                  : variant == 1 ? "sparse_heads1_bshd_f16_d128_b64"
                  : variant == 2 ? "sparse_sinks_batch1_bhsd_f32_d64_b128"
                                 : "sparse_bshd_bf16_d128_b128",
                  variant == 0 || variant == 3 ? BF
                  : variant == 1               ? F16
                                               : F32,
                  variant == 1 || variant == 3 ? 128 : 64, 2, 3, 3,
                  variant == 1 ? 300 : 601, variant == 1 ? 500 : 601,
                  variant == 1 || variant == 3),
            variant != 2);
    c->sparse = true;
    c->blockSize = variant == 1 ? 64 : 128;
    c->helpers = "fn causal_mod(b, h, q, k, af, ai, n) { return k <= q; }\n";
    c->maskModName = "causal_mod";
    c->maskMod = [](int, int, int i, int j) { return j <= i; };
    if (variant == 2)
      c->sinks = {0.5f, -1.0f, 2.0f};
    int mb = variant == 2 ? 1 : c->batch, mh = heads1 ? 1 : c->heads;
    c->makeMask = [=, sq = c->sq, sk = c->sk](int bm, int bn) {
      return randomMask(maskSeed + std::uint64_t(variant), mb, mh, sq, sk, bm,
                        bn);
    };
  }

  // |q.k.scale| ~ 1e3 in f32: no overflow, no NaN.
  c = add(shape("large_logits_causal_bhsd_f32_d64", F32, 64, 1, 2, 2, 200, 200,
                false));
  c->causal = true;
  c->qScale = 250.0f;
  c->largeLogits = true;
  // Scales far from 1/sqrt(D): flex_fwd requires sm_scale > 0, and
  // tile-sink-scale then applies it after the mask and the row max (in
  // exp2's FMA). A tiny scale (a nearly uniform softmax) and a large one
  // (logits ~1e2, nearly one-hot rows) against the fp64 reference.
  c = add(shape("tiny_scale_causal_bhsd_bf16_d64", BF, 64, 2, 2, 2, 300, 300,
                false));
  c->causal = true;
  c->smScale = 1e-6f;
  c = add(shape("scale30_bshd_f32_d64", F32, 64, 1, 2, 2, 257, 257, true));
  c->smScale = 30.0f;
  c->largeLogits = true;
  return cs;
}

} // namespace tilegpu
