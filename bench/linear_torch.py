"""Chunked causal linear attention in PyTorch: the baseline of
bench/linear_attention.py (eager and torch.compile) and its fp32 reference.

All chunks at once, as batched matrix products: per chunk the masked
φQ·φKᵀ times V, plus φQ times the state of the chunks before it, an
exclusive cumsum of the per-chunk φKᵀ·V in f32. It materialises the [C, C]
scores and a [D, D] state per chunk (B·H·S·(C + D²/C) floats), which the
fused tilec kernel keeps in registers.
"""


def torch_chunked(q, k, v, C, kind, dtype=None):
    """The chunked form in PyTorch ([B, H, S, D]): per chunk the masked
    φQ·φKᵀ times V, plus φQ times the state of the chunks before it (an
    exclusive cumsum of the per-chunk φKᵀ·V, f32); products in `dtype`
    (default: the inputs')."""
    import torch
    B, H, S, D = q.shape
    dt = dtype or q.dtype
    n = -(-S // C)
    pad = n * C - S

    def phi(x):
        x = x.float()
        return torch.nn.functional.elu(x) + 1 if kind.startswith("elu") else x

    fq, fk = phi(q) * D ** -0.5, phi(k)
    vv = v.float()
    if pad:
        fq, fk, vv = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (fq, fk, vv))
    Q, K, V = (t.reshape(B, H, n, C, D).to(dt) for t in (fq, fk, vv))
    mask = torch.ones(C, C, device=q.device, dtype=torch.bool).tril()
    A = (Q @ K.transpose(-1, -2)).float().masked_fill(~mask, 0.0)
    kv = (K.transpose(-1, -2) @ V).float()
    states = kv.cumsum(2) - kv
    o = (A.to(dt) @ V).float() + (Q @ states.to(dt)).float()
    if kind.startswith("elu-norm"):  # the decay kind runs with γ = 1
        kz = K.float().sum(3)
        z = kz.cumsum(2) - kz
        den = A.sum(-1) + (Q.float() * z[:, :, :, None, :]).sum(-1)
        o = o / den[..., None]
    return o.reshape(B, H, n * C, D)[:, :, :S].to(q.dtype)
