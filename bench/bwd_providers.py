"""The providers of attention_bwd.py, each set up so that a call runs the
backward alone: tilec's torch op on o and lse from tilec's forward, SDPA's
flash, cuDNN and efficient backends and compiled FlexAttention through
torch.autograd.grad on a retained graph; the deterministic mode; where the
python/tilec package finds its library and kernels."""
import contextlib
import os
import sys
import time
import warnings
from pathlib import Path

from fwd_config import ROOT, shape_key
from fwd_providers import Unavailable, causal_mask, flex_compiled, root_cause, short_reason

BASE = ["tilec", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex"]
# The same providers under torch.use_deterministic_algorithms(True) (the
# "det" row of each shape). tilec-det is the tilec row itself: its backward is
# always deterministic. torch refuses cuDNN SDPA in this mode (its row says
# unsupported). flex-det (opt-in) recompiles flex under the mode.
DET = ["tilec-det", "sdpa-flash-det", "sdpa-cudnn-det", "sdpa-efficient-det"]
PROVIDERS = BASE + DET
# tilec-atomic (opt-in, mode "atomic"): tilec's backward with dQ added by f32
# atomics in the dK/dV pass (deterministic=False).
EXTRA_PROVIDERS = ["flex-det", "tilec-atomic"]
SDPA = {"sdpa-flash": "FLASH_ATTENTION", "sdpa-cudnn": "CUDNN_ATTENTION",
        "sdpa-efficient": "EFFICIENT_ATTENTION"}


def base_name(p):
    return p.removesuffix("-det").removesuffix("-atomic")


def mode_of(p):
    """The row's mode: "det", "atomic" (tilec-atomic) or "default"."""
    return "det" if is_det(p) else "atomic" if p.endswith("-atomic") else "default"


def is_det(p):
    return p.endswith("-det")


# ---------------------------------------------------------------- tilec ----
def tilec_env(lib=None):
    """Points python/tilec at its library and kernels, as python/README.md
    says: `lib` (--tilec-lib) becomes $TILEC_LIB; unless $TILEC_KERNEL_DIR or
    $TILEC_SOURCE_DIR is set, $TILEC_SOURCE_DIR becomes the folder above the
    library's lib/ if it holds examples/attention (the GPU bundle), else this
    checkout (the library's built-in source path is the build machine's).
    -> {"TILEC_LIB": .., "kernels": ..} for the plan and meta."""
    if lib:
        os.environ["TILEC_LIB"] = str(Path(lib).resolve())
    if not os.environ.get("TILEC_KERNEL_DIR") and not os.environ.get("TILEC_SOURCE_DIR"):
        src = ROOT
        if os.environ.get("TILEC_LIB"):
            up = Path(os.environ["TILEC_LIB"]).resolve().parent.parent
            if (up / "examples" / "attention" / "flash_bwd_dq.tile").is_file():
                src = up
        os.environ["TILEC_SOURCE_DIR"] = str(src)
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    kernels = os.environ.get("TILEC_KERNEL_DIR") or (
        os.environ["TILEC_SOURCE_DIR"] + "/examples/attention (unless the library's install prefix "
        "has share/tilec/attention)")
    return {"TILEC_LIB": os.environ.get("TILEC_LIB"), "kernels": kernels}


def tilec_library():
    """(path, version) of the libtilec_c.so python/tilec loads, or (None, why)."""
    try:
        from tilec import capi
        L = capi.lib()
        return L._name, capi.version()
    except Exception as e:
        return None, short_reason(e, 160)


def tilec_setup(s, inputs, dos, atomic=False):
    """fn(do, q, k, v, o, lse) -> (dq, dk, dv): torch.ops.tilec.attention_bwd,
    with o and lse of tilec's forward on each input copy (made here, outside
    the timing; the first forward and backward call also make the plans)."""
    import importlib
    import torch
    importlib.import_module("tilec")  # registers torch.ops.tilec
    c, scale = bool(s["causal"]), s["D"] ** -0.5
    sets = []
    for (q, k, v), do in zip(inputs, dos):
        o, lse = torch.ops.tilec.attention_fwd(q, k, v, c, scale)
        sets.append((do, q, k, v, o, lse))

    def fn(do, q, k, v, o, lse):
        return torch.ops.tilec.attention_bwd(do, q, k, v, o, lse, c, scale, not atomic)
    return fn, sets


# ------------------------------------------------------------ autograd ----
def grad_fn(out, q, k, v, do):
    """The backward alone: the gradients of the retained forward graph."""
    import torch
    return torch.autograd.grad(out, (q, k, v), do, retain_graph=True)


def leaves(q, k, v):
    return tuple(t.detach().requires_grad_() for t in (q, k, v))


def sdpa_setup(name, s, inputs, dos):
    """SDPA pinned to one backend: its forward once per input copy (here),
    then grad_fn on (out, q, k, v, do)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = getattr(SDPBackend, SDPA[name])
    sets = []
    for (q, k, v), do in zip(inputs, dos):
        ql, kl, vl = leaves(q, k, v)
        with sdpa_kernel([backend]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = F.scaled_dot_product_attention(ql, kl, vl, is_causal=bool(s["causal"]),
                                                 scale=s["D"] ** -0.5)
        sets.append((out, ql, kl, vl, do))
    return grad_fn, sets


def flex_setup(s, inputs, dos):
    """Compiled flex_attention (fwd_providers.flex_compiled, a causal
    BlockMask when causal): its forward once per input copy, then grad_fn.
    The first backward (here) compiles the backward graph. AOTAutograd's
    donated buffers are turned off: they forbid retain_graph=True."""
    import torch
    try:
        import torch._functorch.config as fcfg
        if hasattr(fcfg, "donated_buffer"):
            fcfg.donated_buffer = False
    except Exception:
        pass
    flex, create_block_mask, _ = flex_compiled()
    S = s["S"]
    try:
        bm = create_block_mask(causal_mask, None, None, S, S, device="cuda") if s["causal"] else None
    except Exception as e:
        raise Unavailable(f"create_block_mask: {short_reason(root_cause(e), 80)}") from e
    t0 = time.perf_counter()
    sets = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for (q, k, v), do in zip(inputs, dos):
                ql, kl, vl = leaves(q, k, v)
                sets.append((flex(ql, kl, vl, block_mask=bm, scale=s["D"] ** -0.5), ql, kl, vl, do))
            grad_fn(*sets[0])
        torch.cuda.synchronize()
    except Exception as e:
        raise Unavailable(f"compile or first call failed: {short_reason(root_cause(e), 80)}") from e
    print(f"  flex: compiled {shape_key(s)} forward and backward in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    return grad_fn, sets


def setup(p, s, inputs, dos):
    """(fn, sets) of provider p on shape s: fn(*sets[i]) -> (dq, dk, dv)."""
    name = base_name(p)
    if name == "tilec":
        return tilec_setup(s, inputs, dos, atomic=p.endswith("-atomic"))
    if name == "flex":
        return flex_setup(s, inputs, dos)
    return sdpa_setup(name, s, inputs, dos)


@contextlib.contextmanager
def deterministic(on):
    """torch.use_deterministic_algorithms(True) (not warn_only: with
    warn_only, SDPA's flash and efficient backward only warn and stay
    non-deterministic; without it they run their deterministic dQ and torch
    refuses cuDNN SDPA), without its NaN fill of torch.empty (which would add
    a memset to every timed call); the previous settings after."""
    if not on:
        yield
        return
    import importlib
    import torch
    prev = (torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())
    try:  # PyTorch >= 2.1
        det = importlib.import_module("torch.utils.deterministic")
    except ImportError:
        det = None
    fill = getattr(det, "fill_uninitialized_memory", None)
    torch.use_deterministic_algorithms(True, warn_only=False)
    if fill is not None:
        det.fill_uninitialized_memory = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev[0], warn_only=prev[1])
        if fill is not None:
            det.fill_uninitialized_memory = fill
