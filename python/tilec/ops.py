"""tilec attention as PyTorch custom ops (torch.library), with autograd.

    o = tilec.attention(q, k, v, causal=True)      # q, k, v: [B, H, S, D] CUDA tensors

torch.ops.tilec.attention_fwd(q, k, v, causal, scale) -> (o, lse) and
torch.ops.tilec.attention_bwd(dout, q, k, v, o, lse, causal, scale) -> (dq, dk, dv)
are opaque to torch.compile (their fake implementations give the output
shapes), and attention_fwd's autograd formula calls attention_bwd. Both launch
on torch.cuda.current_stream(); the only allocations are their output tensors
(torch's caching allocator, or the graph's pool under CUDA-graph capture), and
nothing synchronises the host, so a captured graph replays them. A plan (the
compiled, loaded kernels) is made on the first call of each (shape, dtype,
causal, scale, device) and kept for the process: call once before capturing a
graph, as torch asks for any warm-up.
"""
import atexit
import math
import threading

import torch

from . import capi

_DTYPES = {torch.bfloat16: capi.BF16, torch.float16: capi.F16, torch.float32: capi.F32}
_plans = {}
_plans_lock = threading.Lock()
# Plans unload their kernels while the driver is still up, not during the
# interpreter's teardown.
atexit.register(_plans.clear)


def _plan(kind, q, causal, scale):
    """The cached ForwardPlan / BackwardPlan for q's shape, dtype and device."""
    B, H, S, D = q.shape
    device = q.device.index if q.device.index is not None else torch.cuda.current_device()
    key = (kind, B, H, S, D, q.dtype, bool(causal), float(scale), device)
    plan = _plans.get(key)
    if plan is None:
        with _plans_lock:
            plan = _plans.get(key)
            if plan is None:
                desc = capi.Desc(batch=B, heads=H, seqlen=S, head_dim=D, dtype=_DTYPES[q.dtype],
                                 layout=capi.BHSD, causal=causal, scale=scale, device=device)
                with torch.cuda.device(device):  # the primary context is current
                    plan = (capi.ForwardPlan if kind == "fwd" else capi.BackwardPlan)(desc)
                _plans[key] = plan
    return plan


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
                  o: torch.Tensor, lse: torch.Tensor, causal: bool,
                  scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dout, q, k, v, o, lse = (_ready(t) for t in (dout, q, k, v, o, lse))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if q.numel():
        _plan("bwd", q, causal, scale).run(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
            dout.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), _stream(q))
    return dq, dk, dv


@attention_bwd.register_fake
def _(dout, q, k, v, o, lse, causal, scale):
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


def attention(q, k, v, causal=False, scale=None):
    """softmax(scale * q k^T [causal mask]) v for q, k, v [B, H, S, D] (bf16, f16, f32)
    on a CUDA device; scale None: 1/sqrt(D). Differentiable (the backward needs
    D 64 or 128)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    o, _ = torch.ops.tilec.attention_fwd(q, k, v, bool(causal), float(scale))
    return o
