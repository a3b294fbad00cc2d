//===- AttentionBackward.h - attention backward as a library call -*- C++ -*-===//
//
// tile::AttentionBackward plans the gradients of one attention shape once
// (compile through tile::JIT and its cache, load, allocate the workspace)
// and then runs them with run(): three launches on the caller's stream, no
// allocation and no host synchronisation, so a captured CUDA graph replays
// it.
//
//   tile::AttentionBackwardParams p;
//   p.batch = 2; p.heads = 16; p.seqlen = 4096; p.headDim = 128;
//   p.dtype = tile::DType::BF16; p.causal = true;
//   p.q = q; p.k = k; p.v = v; p.o = o; p.lse = lse; p.dout = dout;
//   p.dq = dq; p.dk = dk; p.dv = dv; p.stream = stream;
//   auto bwd = tile::AttentionBackward::create(*dev, p);
//   if (!bwd) { fprintf(stderr, "%s\n", bwd.error().c_str()); return 1; }
//   tile::Status s = bwd->run();             // again with bwd->run(p2)
//
// o and lse are what tile::Attention wrote for the same q, k, v (lse is
// natural-log [B*H, S] f32). The kernels are FlashAttention-2's three steps
// (examples/attention/flash_bwd_preprocess.tile: delta = rowsum(dO ∘ O);
// flash_bwd_dkdv.tile: dK, dV; flash_bwd_dq.tile: dQ), compiled for the
// GPU's arch with their own block sizes. Each gradient row is written by one
// program (no atomics): the result is deterministic. With deterministic =
// false, dK/dV's kernel also adds dQ with f32 atomics into a workspace
// (ATOMIC_DQ: five products per step instead of seven in two kernels) and
// flash_bwd_dq_cast.tile casts it: dQ then varies in its last bits from run
// to run.
//
// Supported: bf16, f16, f32; head dims 64 and 128; causal or not; layout
// BHSD ([B*H, S, D] contiguous). Anything else is an error at plan time
// (there is no reference backward to fall back to).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Attention.h"

namespace tile {

struct AttentionBackwardParams {
  int batch = 1, heads = 1, seqlen = 0, headDim = 0;
  DType dtype = DType::BF16;
  AttentionLayout layout = AttentionLayout::BHSD; ///< BHSD only
  bool causal = false;
  float scale = 0; ///< the forward's softmax scale; 0: 1/sqrt(headDim)
  /// K/V heads (GQA/MQA: query head h reads KV head h / (heads / headsKv),
  /// as AttentionParams::headsKv); must divide heads; 0: heads. dK and dV
  /// sum over the query heads of each group.
  int headsKv = 0;
  /// true: dQ by its own kernel, bitwise reproducible. false: dQ added by
  /// f32 atomics in the dK/dV pass (one pass over S and P fewer; the
  /// workspace grows by [B*H, S, D] f32); head dim 256 runs the
  /// deterministic kernels (dQ's tiles do not fit beside dK/dV's: the plan
  /// line says so).
  bool deterministic = true;
  /// Inputs: the forward's q, k, v, its outputs o and lse, and dO (the
  /// gradient of o). Outputs: dq, dk, dv (every element written). q, o,
  /// dout, dq are [B*H, S, D] of the dtype, k, v, dk, dv [B*H_kv, S, D];
  /// lse [B*H, S] f32.
  DevicePtr q = 0, k = 0, v = 0, o = 0, lse = 0, dout = 0;
  DevicePtr dq = 0, dk = 0, dv = 0;
  Stream stream = nullptr; ///< nullptr: the default stream
};

class AttentionBackward {
public:
  AttentionBackward(AttentionBackward &&) noexcept;
  AttentionBackward &operator=(AttentionBackward &&) noexcept;
  AttentionBackward(const AttentionBackward &) = delete;
  AttentionBackward &operator=(const AttentionBackward &) = delete;
  ~AttentionBackward();

  /// plan() with a JIT made from options.jitOptions when options.jit is
  /// empty. Of the options, kernelDir, log, nvtx and jit apply; policy,
  /// forceReference, guardrail and profile concern the forward only.
  static Expected<AttentionBackward>
  create(const Device &device, const AttentionBackwardParams &params,
         AttentionOptions options = {}) {
    if (!options.jit)
      options.jit = std::make_shared<JIT>(options.jitOptions);
#ifdef TILEC_ATTENTION_KERNEL_DIR
    if (options.kernelDir.empty() && !std::getenv("TILEC_KERNEL_DIR"))
      options.kernelDir = TILEC_ATTENTION_KERNEL_DIR;
#endif
    return plan(device, params, std::move(options));
  }
  /// Compiles and loads the three kernels for `params` (pointers may still
  /// be 0) and allocates delta ([B*H, S] f32; not deterministic: also the
  /// zeroed dQ accumulator, [B*H, S, D] f32). Needs options.jit. Errors:
  /// the forward's argument checks, BSHD, a head dim other than 64, 96, 128
  /// or 256, a GPU older than sm_80, a kernel that fails to compile or load.
  /// Any B*H runs (grids over 65535 along y as several launches).
  static Expected<AttentionBackward> plan(const Device &device,
                                          const AttentionBackwardParams &params,
                                          AttentionOptions options);

  /// Launches preprocess, dK/dV and dQ (or dQ's cast) on the planned
  /// pointers and stream.
  Status run();
  /// The same on `params`' pointers and stream; its shape, dtype, layout,
  /// causality, scale and determinism must be the planned ones.
  Status run(const AttentionBackwardParams &params);

  /// "flash_bwd": the three kernels.
  const std::string &kernelName() const;
  /// "attention backward: flash_bwd_preprocess, flash_bwd_dkdv,
  /// flash_bwd_dq (BM=64 BN=64, sm_90a)" (not deterministic:
  /// "flash_bwd_dkdv+atomic dQ, flash_bwd_dq_cast").
  const std::string &planLine() const;

  struct Impl;

private:
  explicit AttentionBackward(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace tile
