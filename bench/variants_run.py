"""Providers of bench/attention_variants.py: tilec's variant kernels (compiled
from the sources of variants_defs.py, launched through attention_fwd.py's
driver launcher), FlexAttention and SDPA. torch and cupy are imported lazily."""
import json
import math
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import attention_fwd as fwd
import variants_defs as vd

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "examples" / "attention"


# ---------------------------------------------------------------- tilec ----
def schedule_flags(cfg):
    """tilec's flags for the schedule fields of cfg that differ from their
    defaults (-num-warps=8 -producer -persistent ...)."""
    out = []
    for name, v in fwd.schedule_of(cfg).items():
        if v == fwd.SCHEDULE[name]:
            continue
        flag = "-" + name.replace("_", "-")
        out.append((flag if v else flag + "=false") if isinstance(v, bool) else f"{flag}={v}")
    return out


def sparse_config(cfg):
    """flex_fwd_sparse's version of a config: without cta_programs > 1 (the
    programs of a CTA would share copies, but each query block reads its own
    block-mask row, so its K/V copies depend on program_id(0)). Its K/V are
    TMA copies of rows at loaded block indices, fed by the producer."""
    return {"defines": dict(cfg["defines"]),
            "schedule": {k: x for k, x in cfg.get("schedule", {}).items()
                         if k != "cta_programs"}}


class Tilec:
    """Writes each variant's user-style source to `workdir` and compiles it
    with `tilec -I examples/attention` and, per shape, the config (BM, BN and
    schedule) that the config table `table` (attention_fwd.load_table) gives
    it as ConfigTable::lookup does: keys T, D and CAUSAL (the variant's), the
    entry of the largest seqlen at or below S (else the smallest). Where tilec
    refuses that config, the table's default (recorded as a fallback).
    `schedule` (fields -> values) is set over every config (--schedule-b);
    `config` (fwd_config's form) replaces the table's for every shape
    (--config-b)."""

    def __init__(self, exe, arch, table, workdir, schedule=None, config=None):
        found = shutil.which(exe) or (exe if os.path.exists(exe) else None)
        if not found:
            sys.exit(f"error: tilec not found: {exe} (pass --tilec PATH)")
        self.exe, self.arch, self.table, self.dir = os.path.abspath(found), arch, table, Path(workdir)
        self.schedule = schedule or {}
        self.config = config
        self.env = dict(os.environ)
        lib = Path(self.exe).parent.parent / "lib"  # bundle layout: bin/ + lib/
        if lib.is_dir():
            self.env["LD_LIBRARY_PATH"] = f"{lib}:{self.env.get('LD_LIBRARY_PATH', '')}"
        self.builds = {}   # (variant, bm, D, T, config) -> (ptx, manifest, ms, warnings) or RuntimeError
        self.kernels = {}  # (variant, bm, D, T, S) -> kernel()'s answer

    def matched(self, v, D, T, S, sparse):
        """(config, origin) of the table for variant v at D, T, seqlen S:
        origin "T=bf16 D=64 CAUSAL=false seqlen=4096" (the entry) or "default"."""
        keys = {"T": T, "D": str(D), "CAUSAL": fwd.key_text(v.causal)}
        e = None if self.config else fwd.lookup_entry(self.table, keys, S)
        base = self.config or (e["_cfg"] if e else self.table["_default"])
        cfg = fwd.with_schedule(base, self.schedule)
        origin = ("--config-b" if self.config else
                  (" ".join(f"{k}={e['_match'][k]}" for k in self.table["keys"])
                   + f" {self.table['size']}={e[self.table['size']]}") if e else "default")
        return (sparse_config(cfg) if sparse else cfg), origin

    def args(self, src, D, T, cfg):
        out = [self.exe, str(src), "-I", str(INCLUDE), f"-arch={self.arch}"]
        for k, x in cfg["defines"].items():
            out += ["-D", f"{k}={x}"]
        return out + ["-D", f"D={D}", "-D", f"T={T}"] + schedule_flags(cfg)

    def build(self, v, D, T, bm, cfg):
        """(ptx path, manifest, compile ms, tilec's warnings) or raises RuntimeError."""
        key = (v.name, bm, D, T, fwd.cfg_str(cfg))
        if key not in self.builds:
            tag = f"{v.name}{'_bm' if bm else ''}_d{D}_{T}_{len(self.builds)}"
            src = self.dir / f"{tag}.tile"
            src.write_text(vd.tile_source(v, bm))
            t0 = time.perf_counter()
            r = subprocess.run(self.args(src, D, T, cfg) + ["-o", str(self.dir / tag)],
                               capture_output=True, text=True, env=self.env)
            ms = (time.perf_counter() - t0) * 1e3
            if r.returncode != 0:
                lines = r.stderr.strip().splitlines() or ["?"]
                msg = next((ln for ln in lines if "error" in ln), lines[0])
                self.builds[key] = RuntimeError(f"tilec failed on {src}: {msg}")
            else:
                man = json.loads((self.dir / f"{tag}.manifest.json").read_text())
                warns = [ln for ln in r.stderr.splitlines() if "warning" in ln]
                self.builds[key] = (str(self.dir / f"{tag}.ptx"), man, ms, warns)
        if isinstance(self.builds[key], Exception):
            raise self.builds[key]
        return self.builds[key]

    def kernel(self, v, D, T, S, bm=False):
        """The kernel of variant v (bm: its flex_fwd_sparse instance) for seqlen
        S: dict(ptx, man, ms, warns, cfg, BM, BN, config (cfg_str), origin,
        fallback (None, or why the matched config was refused: the default
        was compiled instead)); raises RuntimeError where tilec refuses both."""
        key = (v.name, bm, D, T, S)
        if key not in self.kernels:
            sparse = bm or v.name == "blocksparse"
            cfg, origin = self.matched(v, D, T, S, sparse)
            fallback = None
            try:
                built = self.build(v, D, T, bm, cfg)
            except RuntimeError as e:
                default = self.table["_default"]
                default = sparse_config(default) if sparse else default
                if fwd.cfg_str(default) == fwd.cfg_str(cfg):
                    self.kernels[key] = e
                else:
                    fallback = f"{fwd.cfg_str(cfg)} ({origin}) refused: {e}"
                    cfg, origin = default, "default"
                    try:
                        built = self.build(v, D, T, bm, cfg)
                    except RuntimeError as e2:
                        why = lambda x: str(x).split(".tile: ", 1)[-1]  # without the source's path
                        self.kernels[key] = RuntimeError(
                            f"{e} (the default {fwd.cfg_str(cfg)} too)" if why(e) == why(e2) else
                            f"{e2} (the default {fwd.cfg_str(cfg)}; the matched {fallback})")
            if key not in self.kernels:
                ptx, man, ms, warns = built
                self.kernels[key] = dict(ptx=ptx, man=man, ms=ms, warns=warns, cfg=cfg,
                                         BM=int(cfg["defines"]["BM"]), BN=int(cfg["defines"]["BN"]),
                                         config=fwd.cfg_str(cfg), origin=origin, fallback=fallback)
        if isinstance(self.kernels[key], Exception):
            raise self.kernels[key]
        return self.kernels[key]


def units_of_d(t, D, layout_bshd):
    """(row, head, batch) strides of a [B, H, S, D] or [B, S, H, D] tensor in
    units of D elements, as flex_fwd takes them."""
    st = t.stride()
    if st[-1] != 1 or any(x % D for x in st[:3]):
        raise RuntimeError(f"strides {st} are not whole rows of D = {D}")
    b, x1, x2 = st[0] // D, st[1] // D, st[2] // D
    return (x1, x2, b) if layout_bshd else (x2, x1, b)


def block_mask_args(bmask):
    """flex_fwd_sparse's block-mask arguments from a FlexAttention BlockMask."""
    import torch
    i32 = lambda t: t.to(torch.int32).contiguous()
    kv_num, kv_idx = i32(bmask.kv_num_blocks), i32(bmask.kv_indices)
    if bmask.full_kv_num_blocks is not None:
        full_num, full_idx = i32(bmask.full_kv_num_blocks), i32(bmask.full_kv_indices)
    else:
        full_num, full_idx = torch.zeros_like(kv_num), torch.zeros_like(kv_idx)
    if kv_idx.shape[-1] != full_idx.shape[-1]:
        raise RuntimeError(f"kv_indices {tuple(kv_idx.shape)} and full_kv_indices "
                           f"{tuple(full_idx.shape)} differ in max_blocks")
    return dict(kv_num=kv_num, kv_idx=kv_idx, full_num=full_num, full_idx=full_idx,
                mask_batch=kv_num.shape[0], mask_heads=kv_num.shape[1], max_blocks=kv_idx.shape[-1])


def tilec_runner(tc, v, s, g, bm=False, bmask=None):
    """fn(q, k, v) -> (o in q's layout, lse [B, H, S]) of the variant's tilec
    kernel for shape s (tc.kernel()); bm / blocksparse: flex_fwd_sparse over
    `bmask` (a BlockMask of that kernel's BM x BN blocks)."""
    import torch
    kern = tc.kernel(v, s["D"], fwd.DTYPES[s["dtype"]], s["S"], bm)
    ptx, man = kern["ptx"], kern["man"]
    S, B, H, D = s["S"], s["B"], s["H"], s["D"]
    launch = fwd.launch_compiled(ptx, man, (math.ceil(S / kern["BM"]), H, B))
    fixed = dict(seqlen_q=S, seqlen_k=S, heads=H, heads_kv=H // v.gqa, sm_scale=D ** -0.5,
                 aux_n=g.get("aux_n", 0))
    keep = []
    for name in ("sinks", "aux_f", "aux_i"):
        fixed[name] = g[name].data_ptr() if name in g else 0
    if bmask is not None:
        blk = tuple(int(x) for x in getattr(bmask, "BLOCK_SIZE", (kern["BM"], kern["BN"])))
        if blk != (kern["BM"], kern["BN"]):
            raise RuntimeError(f"BlockMask of {blk} blocks for a kernel of BM x BN = "
                               f"{kern['BM']} x {kern['BN']}")
        arrays = block_mask_args(bmask)
        if v.name == "blocksparse" and int(arrays["kv_num"].sum()):  # its kernel has no mask_mod
            raise RuntimeError("the block-sparse pattern's BlockMask has partial blocks")
        keep.append(arrays)
        for k, x in arrays.items():
            fixed[k] = x.data_ptr() if torch.is_tensor(x) else int(x)
    names = [p["name"] for p in man["params"]]
    missing = [n for n in names if n not in fixed and n not in ("q", "k", "v", "o", "lse") and
               not n.startswith(("q_", "k_"))]
    if missing:
        raise RuntimeError(f"{man['kernelName']}: the bench does not know its arguments {missing}")

    def fn(q, k, vv):
        o = torch.empty_like(q)
        lse = torch.empty((B, H, S), device=q.device, dtype=torch.float32)
        vals = dict(fixed, q=q.data_ptr(), k=k.data_ptr(), v=vv.data_ptr(), o=o.data_ptr(),
                    lse=lse.data_ptr())
        vals.update(zip(("q_row", "q_head", "q_batch"), units_of_d(q, D, v.bshd)))
        vals.update(zip(("k_row", "k_head", "k_batch"), units_of_d(k, D, v.bshd)))
        launch(*(vals[n] for n in names))
        return o, lse
    fn.keep = keep
    return fn


# ------------------------------------------------------------------ flex ----
def block_mask(v, s, g, block=128):
    """The FlexAttention BlockMask of variant v (None: no mask_mod), blocks
    of `block` (an int or (BM, BN))."""
    try:  # not through fwd.flex_compiled(): tilec's block-sparse rows need only this
        from torch.nn.attention.flex_attention import create_block_mask
    except Exception as e:
        raise fwd.Unavailable(f"no create_block_mask ({type(e).__name__})") from e
    _, mask_mod, per_batch = vd.flex_mods(v, g)
    if mask_mod is None:
        return None
    try:
        return create_block_mask(mask_mod, s["B"] if per_batch else None, None, s["S"], s["S"],
                                 device="cuda", BLOCK_SIZE=block)
    except Exception as e:
        raise fwd.Unavailable(f"create_block_mask: {fwd.short_reason(fwd.root_cause(e), 80)}") from e


def flex_runner(v, s, g, bmask):
    """fn(q, k, v) -> (o [B, H, S, D], lse) of compiled FlexAttention with
    the variant's score_mod and block mask. Sinks: FlexAttention has no
    extra denominator term; its output is corrected from its LSE (exact):
    o * sigmoid(lse - sink), lse' = logaddexp(lse, sink), in eager ops
    after the compiled kernel (timed with it)."""
    import torch
    flex, _, aux = fwd.flex_compiled()
    score_mod, _, _ = vd.flex_mods(v, g)
    kwargs = dict(score_mod=score_mod, block_mask=bmask, scale=s["D"] ** -0.5)
    if v.gqa > 1:
        kwargs["enable_gqa"] = True
    if aux is not None:
        kwargs["return_aux"] = aux
    else:
        kwargs["return_lse"] = True
    sinks = g["sinks"].view(1, -1, 1) if v.name == "sinks" else None

    def fn(q, k, vv):
        if v.bshd:
            q, k, vv = (t.transpose(1, 2) for t in (q, k, vv))
        o, extra = flex(q, k, vv, **kwargs)
        lse = extra.lse if aux is not None else extra
        if sinks is not None:
            o = (o.float() * torch.sigmoid(lse - sinks)[..., None]).to(o.dtype)
            lse = torch.logaddexp(lse, sinks)
        return o, lse
    return fn


# ------------------------------------------------------------------ sdpa ----
SDPA_ORDER = ["flash", "cudnn", "efficient"]  # tried in turn; the first that runs is timed


def sdpa_runner(v, s, g, inputs, max_bytes):
    """(fn, inputs, backend): SDPA on the variant's inputs, pinned to the first
    backend of SDPA_ORDER that runs it (never the math fallback, which
    materializes S x S scores). Masks go as an additive bias built here, once
    (outside the timing); sinks as one extra key column (K and V rows of
    zeros, bias = the sink logit; 16 keys appended, 15 of them -inf, so that
    the bias rows stay 16-element aligned), also built outside the timing.
    Raises fwd.Unavailable where SDPA cannot express the variant."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if not v.sdpa:
        raise fwd.Unavailable("SDPA has no score_mod")
    S, B, H, D = s["S"], s["B"], s["H"], s["D"]
    dtype = inputs[0][0].dtype
    try:
        bias = vd.sdpa_bias(v, g, S, B, H, dtype, max_bytes) if v.sdpa != "sinks" else None
    except ValueError as e:
        raise fwd.Unavailable(str(e)) from None
    if v.sdpa == "sinks":
        pad = 16
        bias = torch.full((1, H, 1, S + pad), float("-inf"), device="cuda", dtype=dtype)
        bias[..., :S] = 0
        bias[0, :, 0, S] = g["sinks"].to(dtype)
        bias = bias.expand(B, H, S, S + pad)
        z = torch.zeros(B, H, pad, D, device="cuda", dtype=dtype)
        inputs = [(q, torch.cat([k, z], 2), torch.cat([vv, z], 2)) for q, k, vv in inputs]
    kw = dict(attn_mask=bias, is_causal=v.sdpa == "causal", scale=D ** -0.5)
    if v.gqa > 1:
        kw["enable_gqa"] = True
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    why = []
    for name in SDPA_ORDER:
        def fn(q, k, vv, backend=backends[name]):
            if v.bshd:
                q, k, vv = (t.transpose(1, 2) for t in (q, k, vv))
            with sdpa_kernel([backend]), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return F.scaled_dot_product_attention(q, k, vv, **kw), None
        try:
            fn(*inputs[0])
            torch.cuda.synchronize()
            return fn, inputs, name
        except Exception as e:  # the backend refuses the shape or the mask
            why.append(f"{name}: {fwd.short_reason(e, 60)}")
    raise fwd.Unavailable("no SDPA backend runs it (" + "; ".join(why) + ")")


# -------------------------------------------------------------- inputs ----
def make_inputs(v, s, l2_bytes):
    """Copies of (q, k, v), together over twice the L2 size, in the variant's
    layout: [B, H, S, D] or (bshd) [B, S, H, D], K and V with H / gqa heads."""
    import torch
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[s["dtype"]]
    B, S, H, D = s["B"], s["S"], s["H"], s["D"]
    hk = H // v.gqa
    shp = (lambda h: (B, S, h, D)) if v.bshd else (lambda h: (B, h, S, D))
    per_set = (B * S * D * (H + 2 * hk)) * 2
    copies = max(2, math.ceil(2 * l2_bytes / per_set))
    gen = torch.Generator(device="cuda").manual_seed(s["S"] * 1000 + s["D"] + v.gqa)
    return [(torch.randn(shp(H), device="cuda", dtype=dt, generator=gen),
             torch.randn(shp(hk), device="cuda", dtype=dt, generator=gen),
             torch.randn(shp(hk), device="cuda", dtype=dt, generator=gen)) for _ in range(copies)]


def to_bhsd(o, v):
    """A tilec output (the variant's layout) as [B, H, S, D], as Flex and SDPA return it."""
    return o.transpose(1, 2) if v.bshd else o


def diff(o, lse, ref_o, ref_lse):
    """max |o - ref|, rel-L2 and (both given) max |lse - ref lse|."""
    d = o.float() - ref_o.float()
    r = {"max_abs": d.abs().max().item(), "rel_l2": (d.norm() / ref_o.float().norm()).item()}
    if lse is not None and ref_lse is not None:
        r["lse_max_abs"] = (lse.float() - ref_lse.float()).abs().max().item()
    return r
