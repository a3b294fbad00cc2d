"""tilec from Python: attention forward and backward as PyTorch ops.

    import tilec
    o = tilec.attention(q, k, v, causal=True)   # [B, H, S, D] CUDA tensors, autograd

tilec.capi is the ctypes binding of libtilec_c.so (no torch needed); the torch
ops (tilec.ops: torch.ops.tilec.attention_fwd / attention_bwd) are defined
when torch imports. python/README.md has install and use.
"""
from . import capi
from .capi import TilecError

try:
    import torch  # noqa: F401
except ImportError:  # capi alone: no torch on this machine
    torch = None

if torch is not None:
    from .ops import attention, attention_fwd, attention_bwd  # noqa: F401

__all__ = ["capi", "TilecError", "attention", "attention_fwd", "attention_bwd"]
