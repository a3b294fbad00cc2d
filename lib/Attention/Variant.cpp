//===- Variant.cpp - tile::Attention's forward variants through flex_fwd --===//
//
// A plan whose AttentionParams ask for a variant (GQA/MQA, cross-attention,
// a sliding window, softcap, ALiBi, sinks) runs the shared forward,
// examples/attention/flex_fwd.tile: its compile-time options become -D
// values, and a score mod (softcap, ALiBi) becomes a helper in a small
// generated source that imports flex_fwd.tile and mods.tile from the
// kernel directory (named as a file there, so the imports resolve, and
// keyed in the JIT cache by its text). The fast plan takes BM, BN and the
// schedule from flash_fwd's config table (flex_fwd with identity hooks is
// flash_fwd's math plus a multiply); the reference is the same source under
// the conservative schedule, as sm_80 code.
//
//===----------------------------------------------------------------------===//
#include "lib/Attention/AttentionImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace tile;

namespace tile::attention_detail {

int keysOf(const AttentionParams &p) { return p.seqlenK ? p.seqlenK : p.seqlen; }
int kvHeadsOf(const AttentionParams &p) { return p.headsKv ? p.headsKv : p.heads; }

bool isVariant(const AttentionParams &p) {
  return kvHeadsOf(p) != p.heads || keysOf(p) != p.seqlen || p.bottomRight ||
         p.windowLeft >= 0 || p.windowRight >= 0 || p.softcap != 0 ||
         p.alibiSlopes != 0 || p.sinks != 0;
}

std::string validateVariant(const AttentionParams &p) {
  if (p.headsKv < 0 || (p.headsKv && p.heads % p.headsKv != 0))
    return fmt::format("heads_kv {} must divide heads {} (GQA groups)",
                       p.headsKv, p.heads);
  // flex_fwd's dots contract over D, padded to a power of two: tensor-core
  // dots need 16 (flash_fwd_ref pads its own copy; flex_fwd has none).
  if (p.headDim < 9)
    return fmt::format("head dim {} is below 9, which the variants' kernel "
                       "(flex_fwd: tensor-core dots over D padded to a power "
                       "of two, at least 16) does not take",
                       p.headDim);
  if (p.seqlenK < 0)
    return fmt::format("seqlen_k ({}) must be >= 0", p.seqlenK);
  if (p.windowLeft < -1 || p.windowRight < -1)
    return fmt::format("window ({}, {}): each side is >= 0, or -1 for none",
                       p.windowLeft, p.windowRight);
  if (p.causal && p.windowRight > 0)
    return fmt::format("causal with window_right {} > 0: causal is "
                       "window_right = 0",
                       p.windowRight);
  if (!(p.softcap >= 0) || std::isinf(p.softcap))
    return fmt::format("softcap {} must be finite and >= 0 (0: none)",
                       p.softcap);
  std::int64_t rows = std::int64_t(p.batch) * kvHeadsOf(p) * keysOf(p);
  if (rows > INT32_MAX)
    return fmt::format("B*H_kv*S_k = {} rows exceed 2^31 - 1", rows);
  return "";
}

Defines variantDefines(const AttentionParams &p) {
  return {{"T", dtypeName(p.dtype)},
          {"D", std::to_string(p.headDim)},
          {"CAUSAL", p.causal ? "true" : "false"},
          {"BOTTOM_RIGHT", p.bottomRight ? "true" : "false"},
          {"WINDOW_LEFT", std::to_string(p.windowLeft)},
          {"WINDOW_RIGHT", std::to_string(p.windowRight)},
          {"SINKS", p.sinks ? "true" : "false"}};
}

std::string variantSource(const AttentionParams &p) {
  if (p.softcap == 0 && p.alibiSlopes == 0)
    return ""; // flex_fwd.tile itself
  std::string score = "s";
  if (p.softcap != 0)
    score = fmt::format("tanh_softcap({}, {:.9e})", score, p.softcap);
  if (p.alibiSlopes != 0)
    score = "alibi(" + score + ", b, h, q_idx, k_idx, aux_f, aux_i, aux_n)";
  return "// tile::Attention's variant (lib/Attention/Variant.cpp)\n"
         "import \"flex_fwd.tile\";\n"
         "import \"mods.tile\";\n"
         "fn attention_score(s, b, h, q_idx, k_idx, aux_f, aux_i, aux_n) {\n"
         "  return " + score + ";\n"
         "}\n"
         "kernel attention_variant = flex_fwd<SCORE_MOD = attention_score>;\n";
}

Expected<Kernel> compileVariant(JIT &jit, const Device &dev,
                                const std::string &kernelDir,
                                const AttentionParams &p, Defines defines,
                                const std::string &arch, const Schedule &s,
                                const std::string &what) {
  for (auto &[k, v] : variantDefines(p))
    defines[k] = v;
  std::string source = variantSource(p);
  if (source.empty())
    return compileAndLoad(jit, dev, kernelDir + "/flex_fwd.tile", defines,
                          "flex_fwd", arch, s, what);
  auto compiled = jit.compileSource(source, kernelDir + "/attention_variant.tile",
                                    defines, "attention_variant", arch, s);
  if (!compiled)
    return Status::error(what + " failed to compile: " +
                         firstLine(compiled.error()));
  auto loaded = jit.load(dev, **compiled);
  if (!loaded)
    return Status::error(what + " failed to load: " + firstLine(loaded.error()));
  return loaded.take();
}

std::vector<KernelArg> variantArgs(const AttentionParams &plan,
                                   const AttentionParams &run, DevicePtr lse) {
  const char *t = dtypeName(plan.dtype);
  int sq = plan.seqlen, sk = keysOf(plan), h = plan.heads, hk = kvHeadsOf(plan);
  bool bshd = plan.layout == AttentionLayout::BSHD;
  // Strides in rows of D elements: token, head, batch.
  int qRow = bshd ? h : 1, qHead = bshd ? 1 : sq, qBatch = sq * h;
  int kRow = bshd ? hk : 1, kHead = bshd ? 1 : sk, kBatch = sk * hk;
  return {KernelArg::pointer(run.q, t),         KernelArg::pointer(run.k, t),
          KernelArg::pointer(run.v, t),         KernelArg::pointer(run.o, t),
          KernelArg::pointer(lse, "f32"),       KernelArg::int32(sq),
          KernelArg::int32(sk),                 KernelArg::int32(h),
          KernelArg::int32(hk),                 KernelArg::int32(qRow),
          KernelArg::int32(qHead),              KernelArg::int32(qBatch),
          KernelArg::int32(kRow),               KernelArg::int32(kHead),
          KernelArg::int32(kBatch),             KernelArg::float32(plan.scale),
          KernelArg::pointer(run.sinks, "f32"), KernelArg::pointer(run.alibiSlopes, "f32"),
          KernelArg::pointer(0, "i32"),         KernelArg::int32(0)};
}

double visibleProducts(const AttentionParams &p) {
  std::int64_t sq = p.seqlen, sk = keysOf(p);
  std::int64_t diag = p.bottomRight ? sk - sq : 0;
  std::int64_t right = p.causal ? 0 : p.windowRight;
  double n = 0;
  for (std::int64_t i = 0; i < sq; ++i) {
    std::int64_t lo = p.windowLeft >= 0 ? std::max<std::int64_t>(0, i + diag - p.windowLeft) : 0;
    std::int64_t hi = right >= 0 ? std::min(sk - 1, i + diag + right) : sk - 1;
    n += double(std::max<std::int64_t>(0, hi - lo + 1));
  }
  return n;
}

std::string describeVariant(const AttentionParams &p) {
  if (!isVariant(p))
    return "";
  std::string s;
  if (kvHeadsOf(p) != p.heads)
    s += fmt::format(" H_kv={}", kvHeadsOf(p));
  if (keysOf(p) != p.seqlen || p.bottomRight)
    s += fmt::format(" S_k={}{}", keysOf(p), p.bottomRight ? " bottom-right" : "");
  if (p.windowLeft >= 0 || p.windowRight >= 0)
    s += fmt::format(" window=({}, {})", p.windowLeft, p.windowRight);
  if (p.softcap != 0)
    s += fmt::format(" softcap={}", p.softcap);
  if (p.alibiSlopes)
    s += " alibi";
  if (p.sinks)
    s += " sinks";
  return s;
}

} // namespace tile::attention_detail
