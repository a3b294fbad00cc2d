"""tilec's linear attention kernels for bench/linear_attention.py: compiling
examples/attention/linear_attn*.tile variants and launching them on PyTorch
tensors with attention_fwd.py's launcher (cuLaunchKernel on torch's stream).
torch and cupy are imported when a kernel is loaded.
"""
import json
import math
from pathlib import Path

import attention_fwd as af
from fwd_launch import resident_programs

LINEAR_TILE = af.ROOT / "examples" / "attention" / "linear_attn.tile"
BWD_TILE = af.ROOT / "examples" / "attention" / "linear_attn_bwd.tile"
BWD_KERNELS = ["linear_attn_bwd_dq", "linear_attn_bwd_dk", "linear_attn_bwd_dv"]
BWD_ARGS = ["q", "k", "v", "do", None, "gamma", "seqlen", "heads", "scale"]  # None: dq/dk/dv
SEGSUM_TILE = af.ROOT / "examples" / "attention" / "linear_attn_segsum.tile"
SEGSUM_ARGS = ["k", "v", "gamma", "seg_state", "seg_z", "seqlen", "heads", "seg_len"]
LINEAR_ARGS = ["q", "k", "v", "o", "gamma", "state_in", "z_in", "state_out", "z_out",
               "seqlen", "heads", "scale", "seg_state", "seg_z", "seg_len"]
# The kernel variants: Katharopoulos (elu + 1, normalised), the identity
# map without normaliser (as RetNet / GLA without their decay or gates), and
# elu + 1 with the per-head decay (RetNet's γ; the runners pass γ = 1, so
# the result equals elu-norm's and the decay's arithmetic is timed).
KINDS = {"elu-norm": {"FEATURE": 1, "NORMALIZE": "true"},
         "identity": {"FEATURE": 0, "NORMALIZE": "false"},
         "elu-norm-decay": {"FEATURE": 1, "NORMALIZE": "true", "DECAY": "true"}}
SMS = 132  # H100 SXM's SMs: --dry-run's plan (a run asks the device)
PROGRAMS_PER_SM = 2  # --dry-run's occupancy (255 registers x 128 threads); a run asks the driver


def linear_schedule(D, bv=0):
    """(BV, num_warps): value columns per program and warps, spill-free at
    D = 64 (4 warps) and D = 128 (value blocks of 32, 8 warps; C <= 32);
    `bv` > 0 overrides the value columns (the decay and identity variants
    at D = 64 spill nothing at BV = 32)."""
    w = 4 if D <= 64 else 8
    return (bv, w) if bv else ((64, w) if D <= 64 else (32, w))


def bwd_bk(D, bh, bv=0, sms=SMS):
    """The backward's key columns per program: `bv` when given, else
    linear_schedule's, halved to 32 at D = 64 where its (D / BK) x B*H
    programs would leave SMs idle. Its programs each scan a whole sequence,
    so fewer than the SMs is fewer of them running, not shorter ones: on
    an H100 BK = 32 took 2.84 / 5.34 ms at 32k / 64k tokens per sequence
    (64k tokens, H = 32: 64 / 32 programs at BK = 64) against 3.41 / 6.65
    at BK = 64, level at 16k (128 programs), and 1.47x slower up to 8k
    (identity map, docs/linear_attention.md)."""
    bk, _ = linear_schedule(D, bv)
    if not bv and D <= 64 and D // bk * bh < sms:
        bk = 32
    return bk


def segments(S, C, programs, slots=PROGRAMS_PER_SM * SMS):
    """(segment count, segment rows) of the segmented forward. Every segment
    is a program that runs its chunks in turn (linear_attn_segsum.tile first
    sums each segment's state), so the time is about waves × chunks per
    segment, where a wave is the `slots` programs the GPU runs at once. One
    segment while the (D / BV, B·H) programs fill a wave; else the count,
    each segment of at least 4 chunks, whose waves × chunks is within 5 % of
    the least (fewer segments win the ties: each adds a state to stitch).
    9 segments of 32 heads are 288 programs, two waves for 264 slots; 8
    take one wave and 11 % fewer steps."""
    if programs >= slots:
        return 1, S
    chunks = math.ceil(S / C)

    def steps(n):
        per_seg = math.ceil(chunks / n)
        return math.ceil(programs * math.ceil(chunks / per_seg) / slots) * per_seg

    cands = range(1, max(1, chunks // 4) + 1)
    least = min(steps(n) for n in cands)
    nseg = next(n for n in cands if steps(n) <= 1.05 * least)
    seg_len = math.ceil(chunks / nseg) * C
    return math.ceil(S / seg_len), seg_len


class LinearTilec(af.Tilec):
    """Compiles linear_attn.tile variants (cached): -D T, D, C, BV and the
    kind's FEATURE / NORMALIZE, -num-warps. `bv` (0: linear_schedule's)
    is the value columns per program."""

    def __init__(self, *args, bv=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.bv = bv

    def schedule(self, D):
        return linear_schedule(D, self.bv)

    def linear_args(self, T, D, C, kind, variant=None, bk=None):
        """tilec's command line for linear_attn.tile; variant "seg": its
        SEGMENTED form, "segsum": linear_attn_segsum.tile, a backward kernel's
        name: that kernel of linear_attn_bwd.tile (no normaliser: the backward
        has none; `bk`: its BK, else the forward's BV)."""
        bv, warps = self.schedule(D)
        defs = dict(T=T, D=D, C=C, **KINDS[kind])
        tile, bwd = self.tile, variant in BWD_KERNELS
        if bwd:
            del defs["NORMALIZE"]
            defs["BK"] = bk or bv
            tile = BWD_TILE
        else:
            defs["BV"] = bv
        if variant == "seg":
            defs["SEGMENTED"] = "true"
        if variant == "segsum":
            tile = SEGSUM_TILE
        out = [self.exe, str(tile), f"-arch={self.arch}", f"-num-warps={warps}"]
        out += ["--kernel", variant] if bwd else []
        for k, v in defs.items():
            out += ["-D", f"{k}={v}"]
        return out

    def compile_linear(self, T, D, C, kind, variant=None, bk=None):
        """(ptx, manifest) of a linear_args variant."""
        import subprocess
        key = ("linear", T, D, C, kind, variant, bk)
        if key not in self.cache:
            prefix = self.dir / f"la_{T}_d{D}_c{C}_{kind}_{variant or 'fwd'}{f'_bk{bk}' if bk else ''}"
            args = self.linear_args(T, D, C, kind, variant, bk)
            r = subprocess.run(args + ["-o", str(prefix)],
                               capture_output=True, text=True, env=self.env)
            if r.returncode != 0:
                lines = r.stderr.strip().splitlines() or ["?"]
                self.cache[key] = RuntimeError("tilec failed: " + next(
                    (ln for ln in lines if "error" in ln), lines[0]))
            else:
                man = json.loads(Path(f"{prefix}.manifest.json").read_text())
                names = [p["name"] for p in man["params"]]
                want = ([a or variant[len("linear_attn_bwd_"):] for a in BWD_ARGS]
                        if variant in BWD_KERNELS else SEGSUM_ARGS if variant == "segsum"
                        else LINEAR_ARGS)
                if names[:len(want)] != want:
                    raise SystemExit(f"error: {man['kernelName']} takes {names}, the bench passes {want}")
                self.cache[key] = (f"{prefix}.ptx", man)
        if isinstance(self.cache[key], Exception):
            raise self.cache[key]
        return self.cache[key]


def load_kernel(lt, s, C, kind, variant, grid, bk=None):
    """A KernelLauncher of a compiled variant on torch's current stream."""
    ptx, man = lt.compile_linear(af.DTYPES[s["dtype"]], s["D"], C, kind, variant, bk)
    return af.launch_compiled(ptx, man, grid)


def resident_slots(lt, s, C, kind, per_sm=0):
    """Programs of the segmented forward the GPU runs at once: per_sm per SM,
    or (0) as many as the driver's occupancy of the compiled kernel allows."""
    import torch
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    if per_sm > 0:
        return per_sm * sms
    k = load_kernel(lt, s, C, kind, "seg", (1, 1, 1))
    return resident_programs(k.func_ptr, math.prod(k.block), k.smem)


def linear_runner(lt, s, C, kind, per_sm=0):
    """fn(q, k, v) -> o launching linear_attn on [B, H, S, D] tensors: in one
    pass, or segmented (segments(), waves of resident_slots()) after
    linear_attn_segsum."""
    import torch
    bh, D, S = s["B"] * s["H"], s["D"], s["S"]
    bv, _ = lt.schedule(D)
    nseg, seg_len = segments(S, C, D // bv * bh, resident_slots(lt, s, C, kind, per_sm))
    grid = (D // bv, bh, nseg)
    main = load_kernel(lt, s, C, kind, "seg" if nseg > 1 else None, grid)
    segsum = load_kernel(lt, s, C, kind, "segsum", grid) if nseg > 1 else None
    f32 = dict(device="cuda", dtype=torch.float32)
    gamma = torch.ones(s["H"], **f32)
    state, z = torch.empty(bh, D, D, **f32), torch.empty(bh, D, **f32)
    seg_state, seg_z = torch.empty(bh, nseg, D, D, **f32), torch.empty(bh, nseg, D, **f32)

    def fn(q, k, v):
        o = torch.empty_like(q)
        if segsum:
            segsum(k.data_ptr(), v.data_ptr(), gamma.data_ptr(), seg_state.data_ptr(),
                   seg_z.data_ptr(), S, s["H"], seg_len)
        main(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), gamma.data_ptr(),
             state.data_ptr(), z.data_ptr(), state.data_ptr(), z.data_ptr(),
             S, s["H"], D ** -0.5, seg_state.data_ptr(), seg_z.data_ptr(), seg_len)
        return o
    fn.nseg = nseg
    return fn


def linear_bwd_runner(lt, s, C, kind):
    """fn(q, k, v) -> dq launching dq, dk and dv of linear_attn_bwd.tile (dO = q:
    the timing does not depend on the values)."""
    import torch
    bh, D = s["B"] * s["H"], s["D"]
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    bk = bwd_bk(D, bh, lt.bv, sms)
    launches = [load_kernel(lt, s, C, kind, name, (D // bk, bh, 1), bk) for name in BWD_KERNELS]
    gamma = torch.ones(s["H"], device="cuda", dtype=torch.float32)

    def fn(q, k, v):
        grads = [torch.empty_like(q) for _ in launches]
        for launch, g in zip(launches, grads):
            launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), q.data_ptr(), g.data_ptr(),
                   gamma.data_ptr(), s["S"], s["H"], D ** -0.5)
        return grads[0]
    fn.bk = bk
    return fn
