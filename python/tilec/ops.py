"""tilec attention as PyTorch custom ops (torch.library), with autograd.

    o = tilec.attention(q, k, v, causal=True)      # q, k, v: [B, H, S, D] CUDA tensors

torch.ops.tilec.attention_fwd(q, k, v, causal, scale) -> (o, lse) and
torch.ops.tilec.attention_bwd(dout, q, k, v, o, lse, causal, scale[, deterministic]) -> (dq, dk, dv)
and torch.ops.tilec.attention_variant_fwd (GQA, cross-attention, windows,
softcap, ALiBi, sinks) are opaque to torch.compile (their fake implementations
give the output shapes); attention_fwd's autograd formula calls attention_bwd,
and so does attention_variant_fwd's for GQA/MQA (k, v with fewer heads, as many
keys as queries), the one variant the backward has. Both launch
on torch.cuda.current_stream(); the only allocations are their output tensors
(torch's caching allocator, or the graph's pool under CUDA-graph capture), and
nothing synchronises the host, so a captured graph replays them. A plan (the
compiled, loaded kernels) is made on the first call of each (shape, dtype,
causal, scale, device) and kept for the process: call once before capturing a
graph, as torch asks for any warm-up. The backward is deterministic (dQ in
its own kernel); attention_bwd(..., deterministic=False) adds dQ with f32
atomics in the dK/dV pass instead (tile::AttentionBackwardParams::
deterministic; slower today: docs/performance.md, "The backward").
"""
import atexit
import math
import threading
from typing import Optional

import torch

from . import capi

_DTYPES = {torch.bfloat16: capi.BF16, torch.float16: capi.F16, torch.float32: capi.F32}
_plans = {}
_plans_lock = threading.Lock()
# Plans unload their kernels while the driver is still up, not during the
# interpreter's teardown.
atexit.register(_plans.clear)


def _cached_plan(kind, q, causal, scale, **variant):
    """The cached ForwardPlan ("fwd") / BackwardPlan ("bwd") for q's shape,
    dtype and device, and the variant's desc fields (k's heads and rows,
    windows, ...)."""
    B, H, S, D = q.shape
    device = q.device.index if q.device.index is not None else torch.cuda.current_device()
    key = (kind, B, H, S, D, q.dtype, bool(causal), float(scale), device,
           tuple(sorted(variant.items())))
    plan = _plans.get(key)
    if plan is None:
        with _plans_lock:
            plan = _plans.get(key)
            if plan is None:
                desc = capi.Desc(batch=B, heads=H, seqlen=S, head_dim=D, dtype=_DTYPES[q.dtype],
                                 layout=capi.BHSD, causal=causal, scale=scale, device=device,
                                 **variant)
                with torch.cuda.device(device):  # the primary context is current
                    plan = (capi.ForwardPlan if kind == "fwd" else capi.BackwardPlan)(desc)
                _plans[key] = plan
    return plan


def _plan(kind, q, causal, scale):
    return _cached_plan(kind, q, causal, scale)


def _ready(t):
    """t as the kernels read it: contiguous and 16-byte aligned (TMA)."""
    t = t.contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


def _stream(t):
    return torch.cuda.current_stream(t.device).cuda_stream


def _check(q, k, v):
    if q.dim() != 4 or k.shape != q.shape or v.shape != q.shape:
        raise ValueError(f"tilec.attention: q, k, v must be [B, H, S, D] of one shape; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.dtype not in _DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"tilec.attention: dtype must be bfloat16, float16 or float32 (all "
                         f"three alike); got {q.dtype}, {k.dtype}, {v.dtype}")
    if not q.is_cuda or k.device != q.device or v.device != q.device:
        raise ValueError("tilec.attention: q, k, v must be CUDA tensors on one device")


@torch.library.custom_op("tilec::attention_fwd", mutates_args=())
def attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                  scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    _check(q, k, v)
    q, k, v = _ready(q), _ready(k), _ready(v)
    B, H, S, _ = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    if q.numel():
        _plan("fwd", q, causal, scale).run(q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                           o.data_ptr(), lse.data_ptr(), _stream(q))
    return o, lse


# The fake implementations: contiguous outputs, as the real ones make them.
@attention_fwd.register_fake
def _(q, k, v, causal, scale):
    B, H, S, _ = q.shape
    return q.new_empty(q.shape), q.new_empty((B, H, S), dtype=torch.float32)


@torch.library.custom_op("tilec::attention_bwd", mutates_args=())
def attention_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  o: torch.Tensor, lse: torch.Tensor, causal: bool, scale: float,
                  deterministic: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # k, v may have fewer heads than q (GQA/MQA: [B, H_kv, S, D], H_kv
    # dividing H); dK, dV are then summed over each group's query heads.
    _check_variant(q, k, v, None, None)
    if k.shape[2] != q.shape[2]:
        raise ValueError(f"tilec.attention: the backward needs as many keys as queries; got "
                         f"q {tuple(q.shape)}, k {tuple(k.shape)}")
    dout, q, k, v, o, lse = (_ready(t) for t in (dout, q, k, v, o, lse))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if q.numel():
        variant = {} if k.shape[1] == q.shape[1] else {"heads_kv": k.shape[1]}
        if not deterministic:
            variant["flags"] = capi.FLAG_ATOMIC_DQ
        _cached_plan("bwd", q, causal, scale, **variant).run(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
            dout.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), _stream(q))
    return dq, dk, dv


@attention_bwd.register_fake
def _(dout, q, k, v, o, lse, causal, scale, deterministic=True):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, causal, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal, ctx.scale = causal, scale
    ctx.mark_non_differentiable(lse)


def _backward(ctx, dout, dlse):
    # lse is an output for the backward only: its gradient is not propagated.
    q, k, v, o, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.tilec.attention_bwd(dout, q, k, v, o, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


attention_fwd.register_autograd(_backward, setup_context=_setup_context)


def _check_variant(q, k, v, alibi_slopes, sinks):
    if (q.dim() != 4 or k.dim() != 4 or v.shape != k.shape or k.shape[0] != q.shape[0]
            or k.shape[3] != q.shape[3] or k.shape[1] == 0 or q.shape[1] % k.shape[1]):
        raise ValueError(f"tilec.attention: q [B, H, S, D], k and v [B, H_kv, S_k, D] with "
                         f"H_kv dividing H; got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    if q.dtype not in _DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"tilec.attention: dtype must be bfloat16, float16 or float32 (all "
                         f"three alike); got {q.dtype}, {k.dtype}, {v.dtype}")
    if not q.is_cuda or k.device != q.device or v.device != q.device:
        raise ValueError("tilec.attention: q, k, v must be CUDA tensors on one device")
    for name, t in (("alibi_slopes", alibi_slopes), ("sinks", sinks)):
        if t is not None and (t.dtype != torch.float32 or t.shape != (q.shape[1],)
                              or t.device != q.device):
            raise ValueError(f"tilec.attention: {name} must be float32 [H] on q's device; "
                             f"got {t.dtype} {tuple(t.shape)} on {t.device}")


@torch.library.custom_op("tilec::attention_variant_fwd", mutates_args=())
def attention_variant_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                          scale: float, bottom_right: bool, window_left: int,
                          window_right: int, softcap: float,
                          alibi_slopes: Optional[torch.Tensor],
                          sinks: Optional[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    _check_variant(q, k, v, alibi_slopes, sinks)
    q, k, v = _ready(q), _ready(k), _ready(v)
    alibi_slopes = None if alibi_slopes is None else _ready(alibi_slopes)
    sinks = None if sinks is None else _ready(sinks)
    B, H, S, _ = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    if q.numel() and k.shape[2] == 0:
        # No keys (seqlen_k 0 would mean "as many as queries" to the plan):
        # every row sees nothing but its sink.
        o.zero_()
        if sinks is None:
            lse.fill_(-math.inf)
        else:
            lse.copy_(sinks.view(1, H, 1).expand(B, H, S))
    elif q.numel():
        plan = _cached_plan("fwd", q, causal, scale, heads_kv=k.shape[1], seqlen_k=k.shape[2],
                            bottom_right=bool(bottom_right), window_left=int(window_left),
                            window_right=int(window_right), softcap=float(softcap),
                            alibi=alibi_slopes is not None, sinks=sinks is not None)
        plan.run_variant(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                         lse.data_ptr(), 0 if alibi_slopes is None else alibi_slopes.data_ptr(),
                         0 if sinks is None else sinks.data_ptr(), _stream(q))
    return o, lse


@attention_variant_fwd.register_fake
def _(q, k, v, causal, scale, bottom_right, window_left, window_right, softcap, alibi_slopes,
      sinks):
    B, H, S, _ = q.shape
    return q.new_empty(q.shape), q.new_empty((B, H, S), dtype=torch.float32)


def _variant_backward_gap(q, k, window_left, window_right, softcap, alibi_slopes, sinks):
    """Why the backward cannot differentiate this variant call ("" if it can:
    GQA/MQA over as many keys as queries, the backward's one variant)."""
    if k.shape[2] != q.shape[2]:
        return f"cross-attention (seqlen_k {k.shape[2]} != seqlen {q.shape[2]})"
    for name, on in (("window", window_left >= 0 or window_right >= 0),
                     ("softcap", softcap != 0), ("alibi_slopes", alibi_slopes is not None),
                     ("sinks", sinks is not None)):
        if on:
            return name
    return ""


def _variant_setup_context(ctx, inputs, output):
    q, k, v, causal, scale, _, wl, wr, softcap, alibi_slopes, sinks = inputs
    ctx.save_for_backward(q, k, v, *output)
    ctx.causal, ctx.scale = causal, scale
    ctx.gap = _variant_backward_gap(q, k, wl, wr, softcap, alibi_slopes, sinks)
    ctx.mark_non_differentiable(output[1])


def _variant_backward(ctx, dout, dlse):
    if ctx.gap:
        raise NotImplementedError(f"tilec.attention: the backward supports GQA/MQA but not "
                                  f"{ctx.gap} (docs/variants.md)")
    q, k, v, o, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.tilec.attention_bwd(dout, q, k, v, o, lse, ctx.causal, ctx.scale)
    return (dq, dk, dv) + (None,) * 8


attention_variant_fwd.register_autograd(_variant_backward,
                                        setup_context=_variant_setup_context)


def attention(q, k, v, causal=False, scale=None, *, window=(-1, -1), bottom_right=False,
              softcap=0.0, alibi_slopes=None, sinks=None):
    """softmax(scale * q k^T [causal mask]) v for q [B, H, S, D] and k, v
    [B, H_kv, S_k, D] (bf16, f16, f32) on a CUDA device; scale None: 1/sqrt(D).

    Plain attention (H_kv = H, S_k = S) and GQA/MQA (H_kv dividing H, S_k =
    S) are differentiable (the backward needs D 64, 96, 128 or 256). The
    other variants (docs/variants.md) are forward only (backpropagating
    through one raises NotImplementedError naming it): cross-attention (S_k != S;
    bottom_right aligns causal and window bounds at the last key), window =
    (left, right) (-1: unbounded), softcap (score -> softcap * tanh(score /
    softcap)), alibi_slopes and sinks (float32 [H])."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    left, right = window
    variant = (k.dim() == 4 and q.dim() == 4 and k.shape[1:3] != q.shape[1:3]) or bottom_right \
        or left >= 0 or right >= 0 or softcap != 0 or alibi_slopes is not None \
        or sinks is not None
    if variant:
        o, _ = torch.ops.tilec.attention_variant_fwd(
            q, k, v, bool(causal), float(scale), bool(bottom_right), int(left), int(right),
            float(softcap), alibi_slopes, sinks)
        return o
    o, _ = torch.ops.tilec.attention_fwd(q, k, v, bool(causal), float(scale))
    return o
