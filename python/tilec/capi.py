"""ctypes binding of libtilec_c.so (include/tile/tilec_c.h); no torch needed.

    from tilec import capi
    fwd = capi.ForwardPlan(capi.Desc(batch=2, heads=16, seqlen=4096, head_dim=128,
                                     dtype=capi.BF16, causal=True))
    fwd.run(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, stream)   # ints: device pointers, CUstream

Creating a plan compiles (JIT, disk cache) and allocates; run() only launches on
the given stream (no allocation, no host synchronisation), so it can be
captured in a CUDA graph. Errors raise TilecError with the library's message.

The library: $TILEC_LIB (a path), else libtilec_c.so.1 / libtilec_c.so found
beside this package or in a lib/ folder above it (the GPU bundle's
DEST/python/tilec -> DEST/lib; the install prefix's PREFIX/lib/tilec/python/tilec
-> PREFIX/lib; the source tree's build/lib), else the dynamic loader's search
path (LD_LIBRARY_PATH).
"""
import ctypes
import os
from pathlib import Path

BF16, F16, F32 = 0, 1, 2
BHSD, BSHD = 0, 1
FLAG_FORCE_REFERENCE, FLAG_NO_FALLBACK, FLAG_QUIET, FLAG_GUARDRAIL, FLAG_ATOMIC_DQ = 1, 2, 4, 8, 16
API_VERSION = 2  # the TILEC_C_API_VERSION these bindings were written against

_NAMES = ("libtilec_c.so.1", "libtilec_c.so")
_BUILD_DIRS = ("build", "build-static")  # the source tree's build folders


class TilecError(RuntimeError):
    """A failed tilec call; the message is tilec_last_error()."""


class Desc(ctypes.Structure):
    """tilec_attention_desc: the shape, dtype, layout, causality, scale, device,
    flags; then (version 2) the forward's variants (docs/variants.md)."""
    _fields_ = [("size", ctypes.c_uint32), ("batch", ctypes.c_int32),
                ("heads", ctypes.c_int32), ("seqlen", ctypes.c_int32),
                ("head_dim", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("layout", ctypes.c_int32), ("causal", ctypes.c_int32),
                ("scale", ctypes.c_float), ("device", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("heads_kv", ctypes.c_int32), ("seqlen_k", ctypes.c_int32),
                ("bottom_right", ctypes.c_int32), ("window_left", ctypes.c_int32),
                ("window_right", ctypes.c_int32), ("softcap", ctypes.c_float),
                ("alibi", ctypes.c_int32), ("sinks", ctypes.c_int32)]

    def __init__(self, batch=1, heads=1, seqlen=0, head_dim=0, dtype=BF16, layout=BHSD,
                 causal=False, scale=0.0, device=0, flags=0, heads_kv=0, seqlen_k=0,
                 bottom_right=False, window_left=-1, window_right=-1, softcap=0.0,
                 alibi=False, sinks=False):
        super().__init__(ctypes.sizeof(Desc), batch, heads, seqlen, head_dim, dtype, layout,
                         int(bool(causal)), float(scale), device, flags, heads_kv, seqlen_k,
                         int(bool(bottom_right)), window_left, window_right, float(softcap),
                         int(bool(alibi)), int(bool(sinks)))


def candidates():
    """The paths tried, in order (for the error message and tests)."""
    env = os.environ.get("TILEC_LIB")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    out = []
    for d in [here, *here.parents]:
        folders = [d, d / "lib"] + [d / b / "lib" for b in _BUILD_DIRS]
        out += [f / n for f in folders for n in _NAMES]
    return out


def _open():
    tried = []
    for path in candidates():
        if path.is_file():
            return ctypes.CDLL(str(path))
        tried.append(str(path))
    if os.environ.get("TILEC_LIB"):
        raise TilecError(f"TILEC_LIB={os.environ['TILEC_LIB']} is not a file")
    for name in _NAMES:  # LD_LIBRARY_PATH, the loader's cache
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name} ({e})")
    raise TilecError("libtilec_c.so not found: set TILEC_LIB to its path (tried "
                     + ", ".join(tried[:4]) + (", ..." if len(tried) > 4 else "") + ")")


_lib = None


def lib():
    """The loaded library with its prototypes (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    L = _open()
    u64, vp, cp, i32 = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    proto = {
        "tilec_last_error": (cp, []), "tilec_version": (cp, []),
        "tilec_api_version": (i32, []),
        "tilec_attention_fwd_create": (i32, [ctypes.POINTER(Desc), ctypes.POINTER(vp)]),
        "tilec_attention_fwd_run": (i32, [vp, u64, u64, u64, u64, u64, vp]),
        "tilec_attention_fwd_run_variant": (i32, [vp] + [u64] * 7 + [vp]),
        "tilec_attention_fwd_kernel_name": (cp, [vp]),
        "tilec_attention_fwd_plan_line": (cp, [vp]),
        "tilec_attention_fwd_destroy": (None, [vp]),
        "tilec_attention_bwd_create": (i32, [ctypes.POINTER(Desc), ctypes.POINTER(vp)]),
        "tilec_attention_bwd_run": (i32, [vp] + [u64] * 9 + [vp]),
        "tilec_attention_bwd_kernel_name": (cp, [vp]),
        "tilec_attention_bwd_plan_line": (cp, [vp]),
        "tilec_attention_bwd_destroy": (None, [vp]),
    }
    for name, (res, args) in proto.items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    if L.tilec_api_version() < API_VERSION:
        raise TilecError(f"libtilec_c.so has C API version {L.tilec_api_version()}, "
                         f"these bindings need {API_VERSION}")
    _lib = L
    return L


def last_error():
    return lib().tilec_last_error().decode()


def version():
    return lib().tilec_version().decode()


def _check(rc):
    if rc != 0:
        raise TilecError(last_error())


class _Plan:
    _kind = None  # "fwd" or "bwd"

    def __init__(self, desc):
        L = lib()
        self._handle = ctypes.c_void_p()
        self._destroy = getattr(L, f"tilec_attention_{self._kind}_destroy")
        self._run = getattr(L, f"tilec_attention_{self._kind}_run")
        _check(getattr(L, f"tilec_attention_{self._kind}_create")(
            ctypes.byref(desc), ctypes.byref(self._handle)))
        self.kernel_name = getattr(L, f"tilec_attention_{self._kind}_kernel_name")(
            self._handle).decode()
        self.plan_line = getattr(L, f"tilec_attention_{self._kind}_plan_line")(
            self._handle).decode()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._destroy(handle)
            self._handle = None


class ForwardPlan(_Plan):
    """tile::Attention for one shape; run(q, k, v, o, lse, stream); lse may be 0."""
    _kind = "fwd"

    def run(self, q, k, v, o, lse, stream=0):
        _check(self._run(self._handle, q, k, v, o, lse, stream or None))

    def run_variant(self, q, k, v, o, lse, alibi_slopes=0, sinks=0, stream=0):
        """run() for a desc with alibi / sinks: their f32 [heads] pointers."""
        _check(lib().tilec_attention_fwd_run_variant(self._handle, q, k, v, o, lse,
                                                     alibi_slopes, sinks, stream or None))


class BackwardPlan(_Plan):
    """tile::AttentionBackward for one shape (BHSD, head dim 64, 96, 128 or 256)."""
    _kind = "bwd"

    def run(self, q, k, v, o, lse, dout, dq, dk, dv, stream=0):
        _check(self._run(self._handle, q, k, v, o, lse, dout, dq, dk, dv, stream or None))
