"""The forward variants of bench/attention_variants.py: for each, the user-style
.tile source tilec compiles, the visible (query, key) pairs, and the equivalent
FlexAttention score_mod / mask_mod and SDPA mask.

Pure Python down to "torch side" (the plan, the sources, the pair counts work
without torch, for --dry-run); the functions below it import torch lazily.
"""
import math
import random
from dataclasses import dataclass

SPARSE_BLOCK = 128  # granularity of the random block-sparse pattern (tokens)
WINDOW = 1024       # sliding window: query i sees keys i-1023 .. i
SOFTCAP = 50.0      # tanh softcap (mods.tile's softcap50)
GQA = 8             # query heads per KV head


@dataclass
class Variant:
    name: str
    what: str            # one line for the plan and the README
    causal: bool         # the visible keys include j <= i only
    tile: str            # the instance (and helpers), after the imports
    imports: tuple = ("flex_fwd.tile",)
    ref: str = "causal"  # the tilec row its time per visible FLOP is compared with
    bshd: bool = False   # [B, S, H, D] tensors (else [B, H, S, D])
    gqa: int = 1         # query heads per KV head
    sdpa: str = "mask"   # causal | none | mask (bool -> additive bias) | alibi | sinks | "" (unsupported)
    bm_tile: str = ""    # flex_fwd_sparse instance over Flex's BlockMask (provider tilec-bm)
    seqlens: tuple = ()  # extra seqlens of --quick (beyond its 4k)


# The user-style sources: what a user writes to get each variant from the
# shared forward (compiled with -I examples/attention).
VARIANTS = [
    Variant("causal", "plain causal (the reference point)", True,
            "kernel v_causal = flex_fwd<CAUSAL = true>;", sdpa="causal", seqlens=(16384,)),
    Variant("noncausal", "plain non-causal (reference of the non-causal variants)", False,
            "kernel v_noncausal = flex_fwd<>;", ref="noncausal", sdpa="none"),
    Variant("gqa8", f"GQA {GQA}:1, causal, [B, S, H, D] tensors", True,
            "kernel v_gqa = flex_fwd<CAUSAL = true>;", bshd=True, gqa=GQA, sdpa="causal"),
    Variant("window1k", f"sliding window W={WINDOW}, causal", True,
            f"kernel v_window = flex_fwd<CAUSAL = true, WINDOW_LEFT = {WINDOW - 1}>;",
            seqlens=(16384,)),
    Variant("alibi", "ALiBi, causal", True,
            "kernel v_alibi = flex_fwd<SCORE_MOD = alibi, CAUSAL = true>;",
            imports=("flex_fwd.tile", "mods.tile"), sdpa="alibi"),
    Variant("softcap50", f"tanh softcap {SOFTCAP:g}, causal", True,
            "kernel v_softcap = flex_fwd<SCORE_MOD = softcap50, CAUSAL = true>;",
            imports=("flex_fwd.tile", "mods.tile"), sdpa=""),
    Variant("sinks", "attention sinks (one logit per head), non-causal", False,
            "kernel v_sinks = flex_fwd<SINKS = true>;", ref="noncausal", sdpa="sinks"),
    Variant("document", "document masking (packed docs), causal", True,
            "kernel v_document = flex_fwd<MASK_MOD = document_mask, CAUSAL = true, KEY_LO = document_start>;",
            imports=("flex_fwd.tile", "mods.tile"),
            bm_tile="fn doc_causal(b, h, q_idx, k_idx, aux_f, aux_i, aux_n) {\n"
                    "  return k_idx <= q_idx && document_mask(b, h, q_idx, k_idx, aux_f, aux_i, aux_n);\n"
                    "}\nkernel v_document_bm = flex_fwd_sparse<MASK_MOD = doc_causal>;"),
    Variant("prefix_lm", "prefix-LM (bidirectional prefix, causal rest)", False,
            "kernel v_prefix = flex_fwd<MASK_MOD = prefix_lm_mask, KEY_HI = prefix_lm_keys>;",
            imports=("flex_fwd.tile", "mods.tile"), ref="noncausal",
            bm_tile="kernel v_prefix_bm = flex_fwd_sparse<MASK_MOD = prefix_lm_mask>;"),
    Variant("blocksparse", f"random 50%-dense block mask ({SPARSE_BLOCK}x{SPARSE_BLOCK} blocks)", False,
            "kernel v_blocksparse = flex_fwd_sparse<>;", imports=("flex_fwd_sparse.tile",),
            ref="noncausal"),
]
BY_NAME = {v.name: v for v in VARIANTS}


def tile_source(v, bm=False):
    """The .tile file of variant v (bm: its flex_fwd_sparse instance)."""
    if bm:
        imports = ("flex_fwd_sparse.tile",) + tuple(i for i in v.imports if i != "flex_fwd.tile")
        body = v.bm_tile
    else:
        imports, body = v.imports, v.tile
    head = f"// bench/attention_variants.py: {v.what}\n"
    return head + "".join(f'import "{i}";\n' for i in imports) + body + "\n"


# ------------------------------------------------ shape data, pair counts ----
def shape_data(S, B, seed=0):
    """The run-time data of a shape, drawn once (seeded; the same for every
    head dim): per batch the document lengths (each S/16 .. S/2 tokens, the
    last cut at S) and the prefix length (S/8 .. S/2); the block-sparse
    pattern: for each query block, exactly half of the key blocks (at least
    one), shared by every batch and head."""
    rng = random.Random(seed * 1_000_003 + S)
    docs = []
    for _ in range(B):
        lens, left = [], S
        while left > 0:
            n = min(left, rng.randint(max(1, S // 16), max(1, S // 2)))
            lens.append(n)
            left -= n
        docs.append(lens)
    prefix = [rng.randint(S // 8, S // 2) for _ in range(B)]
    nb = math.ceil(S / SPARSE_BLOCK)
    blocks = [sorted(rng.sample(range(nb), max(1, nb // 2))) for _ in range(nb)]
    return dict(docs=docs, prefix=prefix, blocks=blocks)


def visible_pairs(v, S, B, data):
    """Visible (query, key) pairs of one head, summed over the batch, exactly
    (checked against the dense mask on the GPU before timing)."""
    tri = lambda n: n * (n + 1) // 2
    if v.name in ("noncausal", "sinks"):
        return B * S * S
    if v.name == "window1k":
        w = min(WINDOW, S)
        return B * (tri(w) + (S - w) * w)
    if v.name == "document":
        return sum(tri(n) for lens in data["docs"] for n in lens)
    if v.name == "prefix_lm":  # row i sees max(i + 1, P) keys
        return sum(p * p + tri(S) - tri(p) for p in data["prefix"])
    if v.name == "blocksparse":
        total = 0
        for qb, ks in enumerate(data["blocks"]):
            rows = min(SPARSE_BLOCK, S - qb * SPARSE_BLOCK)
            total += rows * sum(min(SPARSE_BLOCK, S - kb * SPARSE_BLOCK) for kb in ks)
        return B * total
    assert v.causal, v.name
    return B * tri(S)


# ------------------------------------------------------------ torch side ----
def alibi_slopes(H):
    """ALiBi's slopes for H heads: 2^(-8 (h + 1) / H)."""
    return [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]


def gpu_data(v, s, data):
    """The variant's tensors on the GPU: aux_f / aux_i / aux_n as the tilec
    hooks read them, sinks, and what the Flex mods and SDPA masks index."""
    import torch
    S, H = s["S"], s["H"]
    out = dict(aux_n=0)
    if v.name == "alibi":
        out["slopes"] = torch.tensor(alibi_slopes(H), device="cuda", dtype=torch.float32)
        out["aux_f"] = out["slopes"]
    if v.name == "sinks":
        g = torch.Generator(device="cuda").manual_seed(S + 7)
        out["sinks"] = torch.randn(H, device="cuda", dtype=torch.float32, generator=g)
    if v.name == "document":
        # each token labelled by its document's first position (what
        # mods.tile's document_start needs; the masks only compare labels)
        ids = [[sum(lens[:d]) for d, n in enumerate(lens) for _ in range(n)] for lens in data["docs"]]
        out["doc"] = torch.tensor(ids, device="cuda", dtype=torch.int32)  # [B, S]
        out["aux_i"], out["aux_n"] = out["doc"], S
    if v.name == "prefix_lm":
        out["prefix"] = torch.tensor(data["prefix"], device="cuda", dtype=torch.int32)
        out["aux_i"] = out["prefix"]
    if v.name == "blocksparse":
        nb = math.ceil(S / SPARSE_BLOCK)
        blk = torch.zeros(nb, nb, device="cuda", dtype=torch.bool)
        for qb, ks in enumerate(data["blocks"]):
            blk[qb, ks] = True
        out["blk"] = blk
    return out


def flex_mods(v, g):
    """(score_mod, mask_mod, mask over batches) for FlexAttention; mask_mod
    None: no block mask (every key visible)."""
    import torch
    score_mod = mask_mod = None
    per_batch = False
    causal = lambda b, h, q, kv: q >= kv
    if v.name == "alibi":
        slopes = g["slopes"]
        score_mod = lambda score, b, h, q, kv: score + slopes[h] * (kv - q)
    elif v.name == "softcap50":
        score_mod = lambda score, b, h, q, kv: SOFTCAP * torch.tanh(score / SOFTCAP)
    if v.name == "window1k":
        mask_mod = lambda b, h, q, kv: (q >= kv) & (q - kv < WINDOW)
    elif v.name == "document":
        doc = g["doc"]
        mask_mod = lambda b, h, q, kv: (q >= kv) & (doc[b, q] == doc[b, kv])
        per_batch = True
    elif v.name == "prefix_lm":
        prefix = g["prefix"]
        mask_mod = lambda b, h, q, kv: (kv <= q) | (kv < prefix[b])
        per_batch = True
    elif v.name == "blocksparse":
        blk = g["blk"]
        mask_mod = lambda b, h, q, kv: blk[q // SPARSE_BLOCK, kv // SPARSE_BLOCK]
    elif v.causal:
        mask_mod = causal
    return score_mod, mask_mod, per_batch


def dense_mask(v, g, S, B):
    """The visible pairs as a bool tensor [B or 1, 1, S, S], or None (all)."""
    import torch
    if v.name in ("noncausal", "sinks"):
        return None
    i = torch.arange(S, device="cuda")
    q, k = i[:, None], i[None, :]
    if v.name == "window1k":
        m = (q >= k) & (q - k < WINDOW)
    elif v.name == "document":
        d = g["doc"]
        m = (d[:, :, None] == d[:, None, :]) & (q >= k)
    elif v.name == "prefix_lm":
        m = (k <= q) | (k < g["prefix"].view(-1, 1, 1))
    elif v.name == "blocksparse":
        m = g["blk"].repeat_interleave(SPARSE_BLOCK, 0).repeat_interleave(SPARSE_BLOCK, 1)[:S, :S]
    else:
        m = q >= k
    return m.view(-1, 1, S, S)


def sdpa_bias(v, g, S, B, H, dtype, max_bytes):
    """The SDPA attn_mask of variant v: an additive bias (0 / -inf, ALiBi's
    slope * (j - i)) in the inputs' dtype, or None where is_causal or no mask
    does; raises ValueError where it would exceed max_bytes."""
    import torch
    if v.sdpa in ("none", "causal"):
        return None
    if v.sdpa == "alibi":
        nbytes = H * S * S * torch.finfo(dtype).bits // 8
        if nbytes > max_bytes:
            raise ValueError(f"ALiBi bias of {nbytes / 2**30:.0f} GiB > --sdpa-max-gib")
        i = torch.arange(S, device="cuda", dtype=torch.float32)
        dist = i[None, :] - i[:, None]
        bias = torch.empty(1, H, S, S, device="cuda", dtype=dtype)
        for h in range(H):  # one head at a time: no H x S x S f32 temporary
            bias[0, h] = (g["slopes"][h] * dist).masked_fill_(dist > 0, float("-inf")).to(dtype)
        return bias
    m = dense_mask(v, g, S, B)
    nbytes = m.numel() * torch.finfo(dtype).bits // 8
    if nbytes > max_bytes:
        raise ValueError(f"mask bias of {nbytes / 2**30:.0f} GiB > --sdpa-max-gib")
    bias = torch.zeros(m.shape, device="cuda", dtype=dtype)
    return bias.masked_fill_(~m, float("-inf"))
