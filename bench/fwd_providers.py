"""The providers beside tilec in attention_fwd.py: Triton, PyTorch SDPA's
backends, FlexAttention and the python/tilec package."""
import sys
import time
import warnings
from fwd_config import ROOT, shape_key

def baseline_runner(name, s):
    """fn(q, k, v) -> (o, lse or None) of a provider other than tilec."""
    if name == "triton":
        from triton_fwd import triton_runner  # bench/triton_fwd.py (needs triton)
        return triton_runner(s)
    if name == "flex":
        return flex_runner(s)
    if name == "tilec-torch":
        return tilec_torch_runner(s)
    return sdpa_runner(name, s)


def tilec_torch_runner(s):
    """The python/tilec package: plans on the first call (outside the timing)."""
    import torch
    sys.path.insert(0, str(ROOT / "python"))
    import tilec  # noqa: F401  (registers torch.ops.tilec)
    scale = s["D"] ** -0.5

    def fn(q, k, v):
        return torch.ops.tilec.attention_fwd(q, k, v, bool(s["causal"]), scale)
    return fn


def sdpa_runner(name, s):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
               "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
               "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}[name]
    scale = s["D"] ** -0.5

    def fn(q, k, v):
        with sdpa_kernel([backend]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"], scale=scale), None
    return fn


class Unavailable(RuntimeError):
    """A provider that cannot run here; its row's status is 'unavailable: ' + the message."""


def root_cause(e):
    """The innermost exception of e's __cause__ (or dynamo's inner_exception)
    chain: dynamo and inductor wrap the error that stopped them
    (BackendCompilerFailed, InductorError, ...)."""
    seen = {id(e)}
    while True:
        inner = e.__cause__ or getattr(e, "inner_exception", None)
        if not isinstance(inner, BaseException) or id(inner) in seen:
            return e
        e = inner
        seen.add(id(e))


def short_reason(e, limit=100):
    """'ExcType: first line of the message' of e (an Unavailable: its message),
    at most `limit` characters: what an 'unavailable: ...' status says."""
    first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
    text = first if isinstance(e, Unavailable) else (
        f"{type(e).__name__}: {first}" if first else type(e).__name__)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def causal_mask(b, h, q_idx, kv_idx):
    """FlexAttention mask_mod of causal attention (one function object, so that
    the compiled flex_attention's guards on it hold across shapes)."""
    return q_idx >= kv_idx


FLEX = {}  # flex_compiled()'s state: the compiled function, or why there is none


def flex_compiled():
    """(torch.compile(flex_attention, dynamic=False), create_block_mask, the
    LSE request) -- compiled once per process (each shape of the sweep is a
    graph of its own); raises Unavailable where torch has no FlexAttention or
    cannot compile it."""
    if "why" in FLEX:
        raise Unavailable(FLEX["why"])
    if "fn" in FLEX:
        return FLEX["fn"], FLEX["create_block_mask"], FLEX["aux"]
    import torch
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except Exception as e:  # ImportError; anything else the module raises on import
        FLEX["why"] = f"torch {torch.__version__} has no flex_attention ({type(e).__name__})"
        raise Unavailable(FLEX["why"]) from e
    try:  # PyTorch >= 2.9: return_aux=AuxRequest(lse=True); before: return_lse=True
        from torch.nn.attention.flex_attention import AuxRequest
        aux = AuxRequest(lse=True)
    except Exception:
        aux = None
    # dynamic=False compiles one graph per shape (dtype, D, causal, S: up to 48
    # in a sweep), more than dynamo's recompile limit (8), past which it would
    # quietly run flex_attention eagerly: unfused, materializing S x S scores.
    # Raise the limits; where the limit can be made an error, make it one.
    try:
        import torch._dynamo
        cfg = torch._dynamo.config
        for name in ("recompile_limit", "cache_size_limit",
                     "accumulated_recompile_limit", "accumulated_cache_size_limit"):
            if hasattr(cfg, name):
                setattr(cfg, name, max(int(getattr(cfg, name)), 1024))
        if hasattr(cfg, "fail_on_recompile_limit_hit"):
            cfg.fail_on_recompile_limit_hit = True
    except Exception as e:
        print(f"  warning: flex: cannot raise dynamo's recompile limit: {short_reason(e)}",
              file=sys.stderr)
    try:
        fn = torch.compile(flex_attention, dynamic=False)
    except Exception as e:  # e.g. torch.compile not supported on this Python
        FLEX["why"] = f"torch.compile: {short_reason(root_cause(e), 80)}"
        raise Unavailable(FLEX["why"]) from e
    FLEX.update(fn=fn, create_block_mask=create_block_mask, aux=aux)
    return fn, create_block_mask, aux


def flex_runner(s):
    """fn(q, k, v) -> (o, lse) of PyTorch FlexAttention, compiled
    (flex_compiled()) on [B, H, S, D] inputs with scale D^-1/2: causal through
    a block mask of causal_mask built here, once per shape; non-causal with
    block_mask=None. Compiles for the shape first (a call on inputs of the
    shape), so that the measurement's first call runs the compiled kernel.
    Raises Unavailable (with a short reason) where that fails."""
    import torch
    flex, create_block_mask, aux = flex_compiled()
    S = s["S"]
    block_mask = None
    if s["causal"]:
        try:
            block_mask = create_block_mask(causal_mask, None, None, S, S, device="cuda")
        except Exception as e:
            raise Unavailable(f"create_block_mask: {short_reason(root_cause(e), 80)}") from e
    kwargs = dict(block_mask=block_mask, scale=s["D"] ** -0.5)
    if aux is not None:
        kwargs["return_aux"] = aux
    else:
        kwargs["return_lse"] = True

    def fn(q, k, v):
        o, extra = flex(q, k, v, **kwargs)
        return o, (extra.lse if aux is not None else extra)

    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[s["dtype"]]
    try:
        warm = [torch.randn((s["B"], s["H"], S, s["D"]), device="cuda", dtype=dt) for _ in range(3)]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*warm)
        torch.cuda.synchronize()
        del warm, out
    except Exception as e:
        dynamo_exc = getattr(getattr(torch, "_dynamo", None), "exc", None)
        compiling = dynamo_exc is not None and isinstance(
            e, getattr(dynamo_exc, "TorchDynamoException", ()))
        cause = root_cause(e)
        if isinstance(cause, ImportError):  # e.g. no Triton: no shape can compile
            FLEX["why"] = f"compile failed: {short_reason(cause, 80)}"
        raise Unavailable(f"{'compile' if compiling else 'first call'} failed: "
                          f"{short_reason(cause, 80)}") from e
    print(f"  flex: compiled {shape_key(s)} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return fn


