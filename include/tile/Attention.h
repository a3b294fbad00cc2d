//===- Attention.h - attention forward as a library call ------ -*- C++ -*-===//
//
// tile::Attention plans one attention forward shape once (kernel, config,
// compile through tile::JIT and its cache, load) and then launches it with
// run(): no allocation and no host synchronisation on the plain path.
//
//   tile::AttentionParams p;
//   p.batch = 2; p.heads = 16; p.seqlen = 4096; p.headDim = 128;
//   p.dtype = tile::DType::BF16; p.causal = true;
//   p.q = q; p.k = k; p.v = v; p.o = o; p.lse = lse; p.stream = stream;
//   auto attn = tile::Attention::create(*dev, p);
//   if (!attn) { fprintf(stderr, "%s\n", attn.error().c_str()); return 1; }
//   tile::Status s = attn->run();            // again with attn->run(p2)
//
// The fast kernel is examples/attention/flash_fwd.tile ([B*H, S, D]) or
// flash_fwd_bshd.tile ([B, S, H, D]) with the config table entry of the
// GPU's arch (configs/flash_fwd.sm_90a.json, .sm_80.json). Where it cannot
// run (another arch, a head dim the table does not list, a compile or load
// failure) or the opt-in NaN/inf guardrail fires on its output, the
// reference kernel flash_fwd_ref.tile runs instead, as the policy says.
// Every decision is one log line ("attention: flash_fwd (entry 12 ...,
// sm_90a)", "attention: fallback flash_fwd_ref: head dim 96 not in the config
// table"). docs/using.md has the whole story, environment variables
// included.
//
// Library TileAttentionCore (tilec::attention_core) needs no compiler: pass a
// JIT in AttentionOptions::jit. TileAttention (tilec::attention) adds the
// compiler, for create()'s default JIT.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

namespace tile {

enum class DType { BF16, F16, F32 };
/// BHSD: q, k, v, o are [B*H, S, D] contiguous. BSHD: [B, S, H, D]
/// (PyTorch's (batch, seq, heads, dim)). LSE is [B*H, S] f32 either way.
enum class AttentionLayout { BHSD, BSHD };

/// What to do when the fast kernel cannot run or its output is non-finite.
enum class FallbackPolicy {
  Fail,        ///< return the error
  Fallback,    ///< run the reference kernel; the log callback hears why
  FallbackWarn ///< the same, and the line also goes to stderr
};

/// "bf16", "f16", "f32"; "bhsd", "bshd".
const char *dtypeName(DType t);
const char *layoutName(AttentionLayout l);

struct AttentionParams {
  int batch = 1, heads = 1, seqlen = 0, headDim = 0;
  DType dtype = DType::BF16;
  AttentionLayout layout = AttentionLayout::BHSD;
  bool causal = false;
  float scale = 0; ///< softmax scale; 0: 1/sqrt(headDim)
  /// Variants (docs/variants.md). Any of them away from its default runs the
  /// shared forward flex_fwd.tile instead of flash_fwd (its reference: the
  /// same source under the conservative schedule). Query i sits at key
  /// position i + diag (diag = seqlenK - seqlen with bottomRight, else 0);
  /// key j is visible when i + diag - windowLeft <= j <= i + diag +
  /// windowRight (causal: windowRight = 0; -1: that side unbounded).
  int headsKv = 0;          ///< K/V heads (GQA/MQA; must divide heads); 0: heads
  int seqlenK = 0;          ///< keys per sequence (cross-attention); 0: seqlen
  bool bottomRight = false; ///< causal/window aligned at the last key
  int windowLeft = -1, windowRight = -1; ///< sliding window sizes
  float softcap = 0;        ///< score -> softcap * tanh(score / softcap); 0: off
  /// f32 [heads]: ALiBi, score + slope[h] * (j - i), added after the softcap.
  DevicePtr alibiSlopes = 0;
  /// f32 [heads]: learnable sinks, one logit (natural log) per query head
  /// in every row's softmax denominator (gpt-oss).
  DevicePtr sinks = 0;
  /// Device pointers (16-byte aligned for the fast kernel's TMA maps). q and
  /// o hold B*H sequences of seqlen rows, k and v B*headsKv of seqlenK, in
  /// `layout`. lse [B*H, S] f32 natural-log; 0: the plan allocates one the
  /// caller never sees.
  DevicePtr q = 0, k = 0, v = 0, o = 0, lse = 0;
  Stream stream = nullptr; ///< nullptr: the default stream
};

/// Per-call timings gathered with CUDA events (AttentionOptions::profile or
/// TILEC_PROFILE=1).
struct ProfileSummary {
  std::string kernel; ///< the kernel the timed calls ran
  unsigned calls = 0;
  double meanUs = 0, p50Us = 0, p99Us = 0;
  double tflops = 0; ///< at the mean time (causal counts half the products)
  /// "attention profile: flash_fwd [bf16 bhsd B=2 H=16 S=4096 D=128 causal]:
  /// 100 calls, mean 812.3 us, p50 810.0 us, p99 830.1 us, 338.6 TFLOP/s".
  std::string str() const;
};

/// The opt-in NaN/inf check of one run().
struct GuardrailReport {
  bool checked = false;
  /// O (and, with AttentionOptions::guardrailInputs, q, k or v) holds a
  /// non-finite value after the kernel that ran first.
  bool fired = false;
  std::string tensor; ///< "o", "q", "k" or "v": the first that fired
  std::int64_t count = 0; ///< non-finite values in that tensor
  /// The first row (in memory order) holding one.
  int batch = -1, head = -1, row = -1;
  bool reran = false;     ///< the reference kernel ran after it fired
  bool finalClean = true; ///< the output of the last kernel run is finite
  std::string str() const;
};

/// What the last run() did.
struct RunReport {
  std::string kernel; ///< "flash_fwd", "flash_fwd_bshd" or "flash_fwd_ref"
  GuardrailReport guardrail;
};

struct AttentionOptions {
  /// Where flash_fwd.tile, flash_fwd_bshd.tile, flash_fwd_ref.tile,
  /// nonfinite_count.tile and configs/ are. Empty: $TILEC_KERNEL_DIR, else
  /// (through find_package(tilec)) the installed PREFIX/share/tilec/attention,
  /// else defaultKernelDir().
  std::string kernelDir;
  FallbackPolicy policy = FallbackPolicy::FallbackWarn;
  /// Run the reference kernel whatever the plan finds (debugging, tests).
  bool forceReference = false;
  /// NaN/inf check after every run(): costs a host synchronisation on the
  /// stream, so a run() with it is not graph-capturable. Also on with
  /// TILEC_ATTENTION_GUARDRAIL=1.
  bool guardrail = false;
  bool guardrailInputs = false; ///< also check q, k and v
  /// CUDA-event timings of every call (no sync in run(); they are read when
  /// the ring of events wraps and in profileSummary()). Also on with
  /// TILEC_PROFILE=1, which prints the summary when the plan is destroyed.
  bool profile = false;
  /// NVTX range per call named after the kernel, when libnvToolsExt loads.
  bool nvtx = true;
  /// Every decision line. Empty: stderr for warnings (FallbackWarn, the
  /// guardrail firing), everything with TILEC_ATTENTION_LOG=1.
  std::function<void(const std::string &)> log;
  /// The JIT to compile with (shared caches, a fake compiler in tests).
  /// Empty: create() makes one from `jitOptions`.
  std::shared_ptr<JIT> jit;
  JITOptions jitOptions;
};

/// $TILEC_KERNEL_DIR, else the share dir of the configured install prefix
/// when it holds flash_fwd.tile, else $TILEC_SOURCE_DIR/examples/attention
/// (the GPU bundle), else the source tree's examples/attention.
std::string defaultKernelDir();

class Attention {
public:
  Attention(Attention &&) noexcept;
  Attention &operator=(Attention &&) noexcept;
  Attention(const Attention &) = delete;
  Attention &operator=(const Attention &) = delete;
  ~Attention();

  /// plan() with a JIT made from options.jitOptions (tile::compile) when
  /// options.jit is empty. Inline, so that only callers link the compiler.
  static Expected<Attention> create(const Device &device,
                                    const AttentionParams &params,
                                    AttentionOptions options = {}) {
    if (!options.jit)
      options.jit = std::make_shared<JIT>(options.jitOptions);
#ifdef TILEC_ATTENTION_KERNEL_DIR // set by find_package(tilec): the prefix's
    if (options.kernelDir.empty() && !std::getenv("TILEC_KERNEL_DIR"))
      options.kernelDir = TILEC_ATTENTION_KERNEL_DIR;
#endif
    return plan(device, params, std::move(options));
  }
  /// Chooses, compiles and loads the kernels for `params` (shape, dtype,
  /// layout, causality; pointers may still be 0). Needs options.jit.
  /// Errors: invalid params, a GPU older than sm_80, Policy::Fail with a
  /// reason to fall back, the reference kernel failing too.
  static Expected<Attention> plan(const Device &device,
                                  const AttentionParams &params,
                                  AttentionOptions options);

  /// Launches on the planned pointers and stream.
  Status run();
  /// Launches on `params`' pointers and stream; its shape, dtype, layout,
  /// causality and scale must be the planned ones.
  Status run(const AttentionParams &params);

  /// The kernel run() launches: "flash_fwd", "flash_fwd_bshd",
  /// "flash_fwd_ref", "flex_fwd" (a variant), "flex_fwd_ref" (flex_fwd.tile
  /// under the reference schedule).
  const std::string &kernelName() const;
  bool usesReference() const;
  /// The plan's log line ("attention: flash_fwd (entry 3 ..., sm_90a)").
  const std::string &planLine() const;
  /// Why the reference runs ("" on the fast path).
  const std::string &fallbackReason() const;
  const Kernel &kernel() const;
  const RunReport &lastReport() const;

  /// The timings gathered so far (waits for the pending events: a sync).
  /// Empty (calls == 0) when profiling is off.
  ProfileSummary profileSummary();

  struct Impl;

private:
  explicit Attention(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

namespace attention_detail {
/// (batch, head, row) of flat row `r` of a q/k/v/o tensor (rows of headDim
/// elements in memory order) in `layout`; for the guardrail's report.
void locateRow(const AttentionParams &p, std::int64_t r, int &batch,
               int &head, int &row);
/// Smallest power of two >= max(d, 16): the reference kernel's tile width.
int paddedHeadDim(int d);
/// Query-key pairs per (batch, head) that `p` really computes (causal,
/// windows, S_k): the profiler's FLOP count.
double visibleProducts(const AttentionParams &p);
} // namespace attention_detail

} // namespace tile
