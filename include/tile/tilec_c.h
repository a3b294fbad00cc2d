/*===- tilec_c.h - C API over the attention forward and backward -*- C -*-===*\
|*                                                                            *|
|* libtilec_c.so: tile::Attention and tile::AttentionBackward behind opaque   *|
|* handles, for callers that cannot take C++ types (Python through ctypes,    *|
|* other languages' FFIs). Plain C types only; the ABI grows by new functions *|
|* and by fields appended to tilec_attention_desc (whose first field is its   *|
|* size), never by changing what exists.                                      *|
|*                                                                            *|
|*   tilec_attention_desc d = TILEC_ATTENTION_DESC_INIT;                      *|
|*   d.batch = 2; d.heads = 16; d.seqlen = 4096; d.head_dim = 128;            *|
|*   d.dtype = TILEC_BF16; d.causal = 1;                                      *|
|*   tilec_attention_fwd *f;                                                  *|
|*   if (tilec_attention_fwd_create(&d, &f) != 0)                             *|
|*     fprintf(stderr, "%s\n", tilec_last_error());                           *|
|*   tilec_attention_fwd_run(f, q, k, v, o, lse, stream);  // no alloc, no sync *|
|*   tilec_attention_fwd_destroy(f);                                          *|
|*                                                                            *|
|* Pointers are CUdeviceptr values (uint64_t), streams CUstream (void *; a    *|
|* cudaStream_t is one): the calls launch on the caller's stream in the       *|
|* device's primary context (the one the CUDA runtime and PyTorch use), so a  *|
|* run inside CUDA-graph capture is recorded. create() compiles (JIT, disk    *|
|* cache) and allocates; run() only launches. Functions that can fail return  *|
|* 0 on success, else -1 with tilec_last_error() set for the calling thread.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef TILEC_C_H
#define TILEC_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TILEC_C_API __attribute__((visibility("default")))
#else
#define TILEC_C_API
#endif

/* The version of this interface: functions are only ever added, and the
 * desc only grows at its end (2: the forward's variants). */
#define TILEC_C_API_VERSION 2

enum tilec_dtype { TILEC_BF16 = 0, TILEC_F16 = 1, TILEC_F32 = 2 };
/* BHSD: [B*H, S, D] contiguous; BSHD: [B, S, H, D] (forward only). LSE is
 * [B*H, S] f32, natural log, in both. */
enum tilec_layout { TILEC_BHSD = 0, TILEC_BSHD = 1 };

/* Flags (bitwise or) of tilec_attention_desc.flags. */
enum tilec_flags {
  TILEC_FLAG_FORCE_REFERENCE = 1, /* forward: run flash_fwd_ref */
  TILEC_FLAG_NO_FALLBACK = 2,     /* forward: fail where the reference would run */
  TILEC_FLAG_QUIET = 4,           /* fallback lines not on stderr */
  TILEC_FLAG_GUARDRAIL = 8,       /* forward: NaN/inf check, syncs: not capturable */
  TILEC_FLAG_ATOMIC_DQ = 16       /* backward: dQ by f32 atomics in the dK/dV
                                     pass (faster; not bitwise reproducible) */
};

typedef struct tilec_attention_desc {
  uint32_t size; /* sizeof(tilec_attention_desc) as the caller knows it */
  int32_t batch, heads, seqlen, head_dim;
  int32_t dtype;  /* enum tilec_dtype */
  int32_t layout; /* enum tilec_layout */
  int32_t causal; /* 0 or 1 */
  float scale;    /* softmax scale; 0: 1/sqrt(head_dim) */
  int32_t device; /* CUDA device ordinal */
  uint32_t flags; /* enum tilec_flags */
  /* Version 2: the forward's variants (docs/variants.md; the backward takes
   * heads_kv and refuses the others). A desc.size that ends before them
   * leaves the defaults. */
  int32_t heads_kv;      /* K/V heads (GQA/MQA), dividing heads; 0: heads */
  int32_t seqlen_k;      /* keys per sequence (cross-attention); 0: seqlen */
  int32_t bottom_right;  /* 1: causal/window aligned at the last key */
  int32_t window_left;   /* sliding window; -1: unbounded */
  int32_t window_right;  /* -1: unbounded (causal: 0) */
  float softcap;         /* score -> softcap tanh(score / softcap); 0: off */
  int32_t alibi;         /* 1: runs pass ALiBi slopes (f32 [heads]) */
  int32_t sinks;         /* 1: runs pass sink logits (f32 [heads]) */
} tilec_attention_desc;

#define TILEC_ATTENTION_DESC_INIT                                              \
  { (uint32_t)sizeof(tilec_attention_desc), 1, 1, 0, 0, TILEC_BF16,           \
    TILEC_BHSD, 0, 0.0f, 0, 0, 0, 0, 0, -1, -1, 0.0f, 0, 0 }

typedef struct tilec_attention_fwd tilec_attention_fwd;
typedef struct tilec_attention_bwd tilec_attention_bwd;

/* The message of the last failed call on this thread ("" when none). Valid
 * until the next call on this thread. */
TILEC_C_API const char *tilec_last_error(void);
/* "0.1.0": the tilec version the library was built from. */
TILEC_C_API const char *tilec_version(void);
TILEC_C_API int tilec_api_version(void);

/* The forward (tile::Attention): plans the kernel for `desc` (arch
 * dispatch, config table, reference fallback). */
TILEC_C_API int tilec_attention_fwd_create(const tilec_attention_desc *desc,
                                           tilec_attention_fwd **out);
/* o = softmax(scale q k^T) v and lse on `stream`; lse may be 0 (not
 * wanted). Tensors as the desc's layout and dtype. */
TILEC_C_API int tilec_attention_fwd_run(tilec_attention_fwd *plan, uint64_t q,
                                        uint64_t k, uint64_t v, uint64_t o,
                                        uint64_t lse, void *stream);
/* tilec_attention_fwd_run with the variant's tensors: alibi_slopes and
 * sinks (f32 [heads] device pointers) exactly where the desc's alibi and
 * sinks are 1, else 0. Tensors k and v hold heads_kv heads of seqlen_k rows. */
TILEC_C_API int tilec_attention_fwd_run_variant(
    tilec_attention_fwd *plan, uint64_t q, uint64_t k, uint64_t v, uint64_t o,
    uint64_t lse, uint64_t alibi_slopes, uint64_t sinks, void *stream);
/* "flash_fwd", "flash_fwd_bshd", "flash_fwd_ref", "flex_fwd" or
 * "flex_fwd_ref". */
TILEC_C_API const char *tilec_attention_fwd_kernel_name(
    const tilec_attention_fwd *plan);
/* The plan's decision line ("attention: flash_fwd (table entry ...)"). */
TILEC_C_API const char *tilec_attention_fwd_plan_line(
    const tilec_attention_fwd *plan);
TILEC_C_API void tilec_attention_fwd_destroy(tilec_attention_fwd *plan);

/* The backward (tile::AttentionBackward): BHSD, head dims 64, 96, 128 and
 * 256, GQA by desc.heads_kv. The plan owns its workspace (delta, [B*H, S]
 * f32; with TILEC_FLAG_ATOMIC_DQ also dQ's f32 accumulator, [B*H, S, D]:
 * dQ by atomics in the dK/dV pass, not bitwise reproducible; head dim 256
 * keeps the deterministic kernels). */
TILEC_C_API int tilec_attention_bwd_create(const tilec_attention_desc *desc,
                                           tilec_attention_bwd **out);
/* dq, dk, dv from q, k, v, the forward's o and lse, and dout, on `stream`. */
TILEC_C_API int tilec_attention_bwd_run(tilec_attention_bwd *plan, uint64_t q,
                                        uint64_t k, uint64_t v, uint64_t o,
                                        uint64_t lse, uint64_t dout,
                                        uint64_t dq, uint64_t dk, uint64_t dv,
                                        void *stream);
/* "flash_bwd". */
TILEC_C_API const char *tilec_attention_bwd_kernel_name(
    const tilec_attention_bwd *plan);
TILEC_C_API const char *tilec_attention_bwd_plan_line(
    const tilec_attention_bwd *plan);
TILEC_C_API void tilec_attention_bwd_destroy(tilec_attention_bwd *plan);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TILEC_C_H */
